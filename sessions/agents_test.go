package sessions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/sessions"
)

// The agent sessions' state and the event dedup obey one contract in both
// stores: the first value recorded for a session stands (its root, its
// start, its thread), another session has its own, and an event is let
// through once.
func TestAgentSessions(t *testing.T) {
	srv := redistest.Start(t)
	t0 := time.Date(2026, 12, 2, 14, 2, 7, 0, time.UTC)
	for name, open := range map[string]func(t *testing.T) sessions.Store{
		"memory": func(*testing.T) sessions.Store { return sessions.NewMemoryStore(sessions.Options{}) },
		"redis": func(t *testing.T) sessions.Store {
			st := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{})
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	} {
		t.Run(name, func(t *testing.T) {
			st, ctx := open(t), t.Context()
			for _, tc := range []struct{ session, offer, want string }{
				{"s1", "/ws", "/ws"}, {"s1", "/other", "/ws"}, {"s2", "/other", "/other"},
			} {
				if got, err := st.PinRoot(ctx, name+tc.session, tc.offer, time.Hour); err != nil || got != tc.want {
					t.Errorf("PinRoot(%s, %s) = %q, %v; want %q", tc.session, tc.offer, got, err, tc.want)
				}
			}
			for _, tc := range []struct {
				session  string
				at, want time.Time
			}{
				{"s1", t0, t0}, {"s1", t0.Add(time.Hour), t0}, {"s2", t0.Add(2 * time.Hour), t0.Add(2 * time.Hour)},
			} {
				if got, err := st.PinStart(ctx, name+tc.session, tc.at, 3*time.Hour); err != nil || !got.Equal(tc.want) {
					t.Errorf("PinStart(%s, %v) = %v, %v; want %v", tc.session, tc.at, got, err, tc.want)
				}
			}
			// A session unseen for its whole life starts again (the
			// memory store's clock is the calls' own times).
			if got, _ := st.PinStart(ctx, name+"s1", t0.Add(5*time.Hour), time.Hour); name == "memory" && !got.Equal(t0.Add(5*time.Hour)) {
				t.Errorf("after its life: %v, want the new start", got)
			}

			if _, _, ok, err := st.Thread(ctx, name+"s1", time.Hour); ok || err != nil {
				t.Errorf("Thread of a session without one: %v %v", ok, err)
			}
			if ch, ts, err := st.ClaimThread(ctx, name+"s1", "C1", "1.1", time.Hour); err != nil || ch != "C1" || ts != "1.1" {
				t.Errorf("the first claim: %s %s %v", ch, ts, err)
			}
			if ch, ts, err := st.ClaimThread(ctx, name+"s1", "C2", "2.2", time.Hour); err != nil || ch != "C1" || ts != "1.1" {
				t.Errorf("a second claim: %s %s %v, want the first thread", ch, ts, err)
			}
			if ch, ts, ok, err := st.Thread(ctx, name+"s1", time.Hour); !ok || err != nil || ch != "C1" || ts != "1.1" {
				t.Errorf("Thread = %s %s %v %v, want C1 1.1", ch, ts, ok, err)
			}

			if !st.FirstEvent(ctx, name+"Ev1") || st.FirstEvent(ctx, name+"Ev1") || !st.FirstEvent(ctx, name+"Ev2") {
				t.Error("FirstEvent: want each id first once")
			}
			for range 2 {
				if !st.FirstEvent(ctx, "") {
					t.Error(`FirstEvent(""): want always first`)
				}
			}
		})
	}
}

// In Redis the values sit under the namespace's hash tag with the
// session's life, every replica sees the same, and an event one replica
// took is not handled by another.
func TestAgentSessionsInRedis(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.Addr())
	a := sessions.NewRedisStore(client, sessions.Options{})
	b := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{})
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	ctx := t.Context()
	t0 := time.Date(2026, 12, 2, 14, 2, 7, 0, time.UTC)
	if _, err := a.PinStart(ctx, "s1", t0, 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := b.PinStart(ctx, "s1", t0.Add(time.Hour), 3*time.Hour); err != nil || !got.Equal(t0) {
		t.Errorf("another replica's PinStart = %v %v, want the first start", got, err)
	}
	key := "askops:{askops}:gateway:start:s1"
	if v, err := client.Get(ctx, key).Result(); err != nil || v != fmt.Sprint(t0.Unix()) {
		t.Errorf("GET %s = %q %v, want the unix second %d", key, v, err, t0.Unix())
	}
	if ttl := client.TTL(ctx, key).Val(); ttl <= 0 || ttl > 3*time.Hour {
		t.Errorf("TTL %s = %v, want the session's life", key, ttl)
	}
	if !a.FirstEvent(ctx, "Ev1") || b.FirstEvent(ctx, "Ev1") || a.FirstEvent(ctx, "Ev1") {
		t.Fatal("Ev1: want it first on A only")
	}
	if got := client.Exists(ctx, "askops:{askops}:event:Ev1").Val(); got != 1 {
		t.Errorf("Ev1 not marked under the namespace's key")
	}
}

// A session's thread and root, and an event, that a release before v0.1.0
// recorded under its keys outside the namespace's hash tag still stand
// after the upgrade: read from the old key, and written to the new one.
// Remove with that reading, in v0.2.0.
func TestAgentSessionsOfTheReleaseBeforeStand(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.Addr())
	st := sessions.NewRedisStore(client, sessions.Options{})
	t.Cleanup(func() { _ = st.Close() })
	ctx := t.Context()
	const session = "gw:laptop-ana:{sess}-1"

	// What the previous release wrote.
	for key, v := range map[string]string{
		"askops:gateway:thread:" + session: "C_OLD 111.222",
		"askops:gateway:root:" + session:   "/home/ana/src/api",
		"askops:event:{Ev2}":               "1",
	} {
		if err := client.Set(ctx, key, v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ch, ts, ok, err := st.Thread(ctx, session, time.Hour)
	if err != nil || !ok || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("Thread = %q %q %v %v, want the previous release's C_OLD 111.222", ch, ts, ok, err)
	}
	if ch, ts, err := st.ClaimThread(ctx, session, "C_NEW", "333.444", time.Hour); err != nil || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("ClaimThread = %q %q %v, want the thread that stands (C_OLD 111.222)", ch, ts, err)
	}
	if got, err := st.PinRoot(ctx, session, "/", time.Hour); err != nil || got != "/home/ana/src/api" {
		t.Fatalf("PinRoot = %q %v, want the previous release's root", got, err)
	}
	if st.FirstEvent(ctx, "Ev2") {
		t.Error("Ev2, taken by the previous release, was let through again")
	}

	// The new keys are under the namespace and its hash tag, and hold them.
	for key, want := range map[string]string{
		"askops:{askops}:gateway:thread:" + session: "C_OLD 111.222",
		"askops:{askops}:gateway:root:" + session:   "/home/ana/src/api",
	} {
		got, err := client.Get(ctx, key).Result()
		if err != nil || got != want {
			t.Errorf("GET %s = %q %v, want %q", key, got, err, want)
		}
		if ttl := client.TTL(ctx, key).Val(); ttl <= 0 {
			t.Errorf("TTL %s = %v, want the session's life", key, ttl)
		}
	}

	// Once the old keys are gone (expired), the new ones answer alone.
	client.Del(ctx, "askops:gateway:thread:"+session, "askops:gateway:root:"+session)
	if ch, ts, ok, err := st.Thread(ctx, session, time.Hour); err != nil || !ok || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("Thread after the old key expired = %q %q %v %v", ch, ts, ok, err)
	}
	if got, err := st.PinRoot(ctx, session, "/other", time.Hour); err != nil || got != "/home/ana/src/api" {
		t.Fatalf("PinRoot after the old key expired = %q %v", got, err)
	}

	// A session the previous release never saw is written under the new key only.
	if ch, _, err := st.ClaimThread(ctx, "fresh", "C_NEW", "5.6", time.Hour); err != nil || ch != "C_NEW" {
		t.Fatalf("ClaimThread(fresh) = %q %v", ch, err)
	}
	if n := client.Exists(ctx, "askops:gateway:thread:fresh").Val(); n != 0 {
		t.Errorf("the old key of a new session was written")
	}
	if got := client.Get(ctx, "askops:{askops}:gateway:thread:fresh").Val(); got != "C_NEW 5.6" {
		t.Errorf("new key of a new session = %q", got)
	}
}

// With Redis down, events are still let through once, by this process's
// memory: a lost mention is worse than a rare duplicate.
func TestFirstEventWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	st := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{})
	t.Cleanup(func() { _ = st.Close() })
	srv.Stop()
	if !st.FirstEvent(t.Context(), "Ev1") || st.FirstEvent(t.Context(), "Ev1") {
		t.Error("with Redis down: want Ev1 first once")
	}
}
