package sessions_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/sessions"
)

// runStore is the runs record both stores keep.
type runStore interface {
	RecordRun(ctx context.Context, r sessions.Run) (end func(), err error)
	RunsOf(ctx context.Context, users []string) (map[string][]sessions.Run, error)
}

func runIDs(t *testing.T, st runStore, user string) []string {
	t.Helper()
	m, err := st.RunsOf(t.Context(), []string{user})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range m[user] {
		ids = append(ids, r.ID)
	}
	return ids
}

// runRunsContract: what both stores do with runs in progress.
func runRunsContract(t *testing.T, open func(t *testing.T, opts sessions.Options) runStore) {
	t.Run("a run is listed for its starter, newest first, until it ends", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, sessions.Options{Now: clk.Now})
		endA, err := st.RecordRun(ctx, sessions.Run{ID: "run-a", StartedBy: "U1", Channel: "C1", Label: "fix the build", StartedAt: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		endB, err := st.RecordRun(ctx, sessions.Run{ID: "run-b", StartedBy: "U1", Channel: "C2", StartedAt: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RecordRun(ctx, sessions.Run{ID: "run-c", StartedBy: "U2", StartedAt: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		m, err := st.RunsOf(ctx, []string{"U1", "U3"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m["U1"]) != 2 || m["U1"][0].ID != "run-b" || m["U1"][1].ID != "run-a" {
			t.Fatalf("U1's runs = %+v, want run-b then run-a", m["U1"])
		}
		a := m["U1"][1]
		if a.Channel != "C1" || a.Label != "fix the build" || !a.StartedAt.Equal(clk.Now().Add(-time.Second)) || a.StartedBy != "U1" {
			t.Errorf("run-a = %+v", a)
		}
		if _, ok := m["U3"]; ok {
			t.Errorf("a user with no runs is listed: %+v", m)
		}
		endA()
		endA() // idempotent
		if got := runIDs(t, st, "U1"); !slices.Equal(got, []string{"run-b"}) {
			t.Errorf("after run-a ended: %v", got)
		}
		endB()
		if got := runIDs(t, st, "U1"); len(got) != 0 {
			t.Errorf("after both ended: %v", got)
		}
		if got := runIDs(t, st, "U2"); !slices.Equal(got, []string{"run-c"}) {
			t.Errorf("another user's run: %v", got)
		}
	})
	t.Run("bounded per user; bad ids refused; long labels cut", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, sessions.Options{Now: clk.Now, MaxRunsPerUser: 2})
		for _, id := range []string{"r1", "r2"} {
			if _, err := st.RecordRun(ctx, sessions.Run{ID: id, StartedBy: "U1", StartedAt: clk.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.RecordRun(ctx, sessions.Run{ID: "r3", StartedBy: "U1"}); !errors.Is(err, sessions.ErrInvalid) {
			t.Errorf("third run of a user with max 2: err = %v, want invalid", err)
		}
		for _, r := range []sessions.Run{{ID: "", StartedBy: "U1"}, {ID: "x", StartedBy: ""}, {ID: "x\n", StartedBy: "U1"}} {
			if _, err := st.RecordRun(ctx, r); !errors.Is(err, sessions.ErrInvalid) {
				t.Errorf("RecordRun(%+v) err = %v, want invalid", r, err)
			}
		}
		label := ""
		for range 300 {
			label += "é"
		}
		if _, err := st.RecordRun(ctx, sessions.Run{ID: "r9", StartedBy: "U9", Label: label, StartedAt: clk.Now()}); err != nil {
			t.Fatal(err)
		}
		m, err := st.RunsOf(ctx, []string{"U9"})
		if err != nil {
			t.Fatal(err)
		}
		if got := m["U9"][0].Label; len(got) > 210 || got[len(got)-len("…"):] != "…" {
			t.Errorf("label of %d bytes kept as %d bytes: %q", len(label), len(got), got)
		}
	})
}

func TestMemoryStoreRuns(t *testing.T) {
	runRunsContract(t, func(t *testing.T, opts sessions.Options) runStore {
		return sessions.NewMemoryStore(opts)
	})
}

func TestRedisStoreRuns(t *testing.T) {
	srv := redistest.Start(t)
	runRunsContract(t, func(t *testing.T, opts sessions.Options) runStore {
		return contractStore(t, srv.FlushAll, newRedisClient(t, srv.Addr()), opts)
	})
}

// TestRedisRunsLeases: a replica lists another's runs; a live process's
// renewals keep them listed past one lease; a process that dies without
// ending them (its connection gone, as after kill -9) loses them from the
// list once the lease lapses; a run Redis lost is recorded again by the
// next renewal.
func TestRedisRunsLeases(t *testing.T) {
	srv := redistest.Start(t)
	ctx, clk := t.Context(), newClock()
	const lease = 30 * time.Second
	opts := sessions.Options{Now: clk.Now, RunLease: lease}
	ownerClient := newRedisClient(t, srv.Addr())
	owner := sessions.NewRedisStore(ownerClient, opts)
	defer owner.Close()
	other := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), opts)
	defer other.Close()

	if _, err := owner.RecordRun(ctx, sessions.Run{ID: "run-1", StartedBy: "U1", StartedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := runIDs(t, other, "U1"); !slices.Equal(got, []string{"run-1"}) {
		t.Fatalf("another replica lists %v", got)
	}
	for range 3 { // three leases' worth, renewed every 2/3 lease
		clk.Advance(lease * 2 / 3)
		if err := owner.RenewRuns(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := runIDs(t, other, "U1"); !slices.Equal(got, []string{"run-1"}) {
		t.Fatalf("a renewed run after 2 leases: listed %v", got)
	}

	if err := srv.FlushAll(); err != nil { // Redis lost it
		t.Fatal(err)
	}
	if err := owner.RenewRuns(ctx); err != nil {
		t.Fatal(err)
	}
	if got := runIDs(t, other, "U1"); !slices.Equal(got, []string{"run-1"}) {
		t.Fatalf("after Redis lost the record and a renewal: listed %v", got)
	}

	_ = ownerClient.Close() // the owner dies: no more renewals, no end
	clk.Advance(lease - time.Millisecond)
	if got := runIDs(t, other, "U1"); !slices.Equal(got, []string{"run-1"}) {
		t.Fatalf("within the lease: listed %v", got)
	}
	clk.Advance(time.Millisecond)
	if got := runIDs(t, other, "U1"); len(got) != 0 {
		t.Fatalf("after the dead owner's lease: listed %v", got)
	}
}

// BenchmarkRedisRuns measures the two recurring costs on a real Redis: one
// process renewing 100 runs (what it does every RunLease/3), and a Home
// reading the runs of 50 viewers who have 2 runs each (every Poll).
func BenchmarkRedisRuns(b *testing.B) {
	srv := redistest.Start(b)
	st := sessions.NewRedisStore(newRedisClient(b, srv.Addr()), sessions.Options{})
	defer st.Close()
	ctx := b.Context()
	users := make([]string, 50)
	for i := range users {
		users[i] = "U" + string(rune('A'+i/26)) + string(rune('A'+i%26))
		for j := range 2 {
			if _, err := st.RecordRun(ctx, sessions.Run{ID: users[i] + "-run-" + string(rune('0'+j)), StartedBy: users[i], Label: "a task of some length to be realistic", StartedAt: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("renew 100 runs", func(b *testing.B) {
		for b.Loop() {
			if err := st.RenewRuns(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runs of 50 viewers", func(b *testing.B) {
		for b.Loop() {
			m, err := st.RunsOf(ctx, users)
			if err != nil || len(m) != 50 {
				b.Fatal(len(m), err)
			}
		}
	})
}
