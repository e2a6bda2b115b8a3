package sessions

import (
	"slices"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testclock"
)

type newHomeStores func(t *testing.T, opts Options) (any, any)

func TestRedisHomeViewers(t *testing.T) {
	srv := redistest.Start(t)
	testHomeViewers(t, func(t *testing.T, opts Options) (any, any) {
		opts.Namespace = "homes"
		open := func() *RedisStore {
			client, err := redisconn.Open(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			s := NewRedisStore(client, opts)
			t.Cleanup(func() { _ = s.Close(); _ = client.Close() })
			return s
		}
		return open(), open()
	})
}

func TestMemoryHomeViewers(t *testing.T) {
	testHomeViewers(t, func(t *testing.T, opts Options) (any, any) {
		s := NewMemoryStore(opts)
		t.Cleanup(func() { _ = s.Close() })
		return s, s
	})
}

// testHomeViewers: a viewer one replica records is listed by another until
// its time is up; a Home digest is claimed by one replica once, again after
// a release or a change.
func testHomeViewers(t *testing.T, newStore newHomeStores) {
	// The clock the test moves is the stores' Now and, in Redis, the
	// server's clock the viewer scripts judge by.
	clock := testclock.New(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC))
	a, b := newStore(t, Options{Now: clock.Now, serverNow: clock.Now})
	va, vb := a.(HomeViewers), b.(HomeViewers)
	ctx := t.Context()
	if err := va.AddHomeViewer(ctx, "U1", clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := va.AddHomeViewer(ctx, "U2", clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, err := vb.HomeViewers(ctx); err != nil || !slices.Equal(sorted(got), []string{"U1", "U2"}) {
		t.Fatalf("viewers seen by the other replica = %v, %v", got, err)
	}
	claims := func(s HomeViewers, user, digest string) bool {
		ok, err := s.ClaimHomeView(ctx, user, digest)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claims(va, "U1", "d1") || claims(vb, "U1", "d1") {
		t.Error("a digest was claimed by both replicas, or by neither")
	}
	if err := va.ReleaseHomeView(ctx, "U1", "d1"); err != nil {
		t.Fatal(err)
	}
	if !claims(vb, "U1", "d1") || !claims(va, "U1", "d2") {
		t.Error("a released or changed digest was not claimable")
	}
	clock.Advance(2 * time.Minute)
	if got, err := vb.HomeViewers(ctx); err != nil || !slices.Equal(got, []string{"U1"}) {
		t.Fatalf("viewers after U2's time = %v, %v", got, err)
	}
	if err := va.AddHomeViewer(ctx, "", clock.Now()); ErrorCode(err) != CodeInvalid {
		t.Errorf("empty viewer: %v", err)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }
