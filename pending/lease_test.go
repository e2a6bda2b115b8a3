package pending

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// renewLeases runs one renewal of s's held leases now (the Redis store
// renews on a real ticker; the memory store needs none).
func renewLeases(ctx context.Context, s Store) {
	if r, ok := s.(*RedisStore); ok {
		_ = r.renewHeld(ctx)
	}
}

// An Ask lives while its asker holds it: one whose holder let go (or whose
// holding process died: its renewals stop the same way) ends cancelled,
// "the agent stopped waiting", LeaseTTL later, on any instance; one still
// held lives on; one never held keeps its deadline alone. A click after
// that is refused, and the Ask's waiter wakes with the cancellation.
func testLeases(t *testing.T, newStore newStoreFunc) {
	clock := newFakeClock()
	opts := clockOptions(clock)
	a, b := newStore(t, opts)
	ctx := t.Context()
	ttl := DefaultLeaseTTL
	create := func() Ask {
		t.Helper()
		ask, err := a.Create(ctx, sampleRequest(1), 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ask
	}
	held, dropped, never := create(), create(), create()
	releaseHeld := a.Hold(ctx, held.ID)
	a.Hold(ctx, dropped.ID)() // held, and let go at once: an asker killed right after asking
	waited := make(chan Ask, 1)
	go func() { w, _ := b.Wait(ctx, dropped.ID); waited <- w }()

	clock.Advance(ttl - time.Second)
	renewLeases(ctx, a)
	if swept, err := b.SweepLeases(ctx); err != nil || len(swept) != 0 {
		t.Fatalf("before the lease lapsed: swept %v, %v", ids(swept), err)
	}
	clock.Advance(2 * time.Second)
	swept, err := b.SweepLeases(ctx)
	if err != nil || len(swept) != 1 || swept[0].ID != dropped.ID {
		t.Fatalf("after the lease lapsed: swept %v, %v; want only %s", ids(swept), err, dropped.ID)
	}
	if got := swept[0]; got.Status != Status(Cancelled) || got.DecisionReason != ReasonAskerGone {
		t.Errorf("lapsed ask: %s %q", got.Status, got.DecisionReason)
	}
	if w := testwait.ReceiveWithin(t, waited, 20*time.Second, "the lapsed ask's waiter to wake"); w.Status != Status(Cancelled) || w.DecisionReason != ReasonAskerGone {
		t.Errorf("its waiter woke with %s %q", w.Status, w.DecisionReason)
	}
	if _, err := a.Decide(ctx, dropped.ID, Approved, "U1", ""); ErrorCode(err) != CodeConflict {
		t.Errorf("approving an ask whose asker is gone: %v, want a conflict", err)
	}
	for _, id := range []string{held.ID, never.ID} {
		if got, _ := b.Get(ctx, id); got.Status != StatusPending {
			t.Errorf("ask %s is %s, want still pending", id, got.Status)
		}
	}

	// Once its holder lets go, two sweepers end it once between them.
	releaseHeld()
	releaseHeld() // release is idempotent
	clock.Advance(ttl + time.Second)
	var mu sync.Mutex
	var ended []Ask
	var sweepers sync.WaitGroup
	for _, s := range []Store{a, b} {
		sweepers.Go(func() {
			got, err := s.SweepLeases(ctx)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			ended = append(ended, got...)
			mu.Unlock()
		})
	}
	sweepers.Wait()
	if len(ended) != 1 || ended[0].ID != held.ID {
		t.Errorf("released ask: ended %v, want %s once", ids(ended), held.ID)
	}
	if got, _ := a.Get(ctx, never.ID); got.Status != StatusPending {
		t.Errorf("the ask nobody held is %s, want pending until its deadline", got.Status)
	}
	if _, err := a.Decide(ctx, never.ID, Denied, "U1", ""); err != nil {
		t.Fatal(err)
	}
	assertAuditPairs(t, a, 3)
}

// A Redis outage stops every holder's renewals at once; once Redis is back
// the sweep waits a lease's life before it trusts the leases again, so an
// outage never reads as every asker gone: the held Ask survives it.
func TestRedisOutageLapsesNoLease(t *testing.T) {
	srv := redistest.Start(t)
	clock := newFakeClock()
	opts := clockOptions(clock)
	opts.Logger = quietLogger()
	const ttl = time.Hour // the store's own renewer (every ttl/3) stays out of the way
	opts.LeaseTTL = ttl
	s := newRedisStore(t, srv.URL(), opts)
	ctx := t.Context()
	a, err := s.Create(ctx, sampleRequest(1), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	release := s.Hold(ctx, a.ID)
	clock.Advance(ttl - time.Second)
	srv.Stop()
	if err := s.renewHeld(ctx); err == nil {
		t.Fatal("a renewal with Redis stopped succeeded")
	}
	srv.Restart()
	// Redis is back, but the client may fail fast a moment longer: its
	// pool stops dialling after a few failed dials until a background
	// probe (once a second) gets through. Wait until the store answers
	// before each step below, and then let each step run once: a failed
	// sweep or renewal is lease trouble, after which the sweep skips for
	// a LeaseTTL by design, so a step retried after a failure would pass
	// (or fail) for the wrong reason.
	answers := func() {
		t.Helper()
		testwait.For(t, "the store to answer after the restart", func() bool { return s.Ping(ctx) == nil })
	}
	sweep := func() []Ask {
		t.Helper()
		answers()
		swept, err := s.SweepLeases(ctx)
		if err != nil {
			t.Fatalf("lease sweep with Redis answering: %v", err)
		}
		return swept
	}
	clock.Advance(2 * time.Second) // the lease has lapsed by the clock: no holder could renew
	if swept := sweep(); len(swept) != 0 {
		t.Fatalf("right after the outage: swept %v; want none", ids(swept))
	}
	answers()
	if err := s.renewHeld(ctx); err != nil {
		t.Fatalf("renewal with Redis answering: %v", err)
	}
	clock.Advance(ttl - time.Second) // a lease's life after the outage: the sweep trusts the leases again
	if swept := sweep(); len(swept) != 0 {
		t.Fatalf("renewed after the outage: swept %v; want none", ids(swept))
	}
	release()
	clock.Advance(ttl + time.Second)
	if swept := sweep(); len(swept) != 1 {
		t.Fatalf("released: swept %v; want %s", ids(swept), a.ID)
	}
}

// An Ask an older release created (its record without the lease field l)
// takes no lease: that release's replicas never renew one, so its asker's
// long polls there must not let it lapse while the asker still waits (a
// rolling upgrade). It lives until its deadline, as that release meant.
func TestOlderReleasesAskTakesNoLease(t *testing.T) {
	srv := redistest.Start(t)
	clock := newFakeClock()
	opts := clockOptions(clock)
	opts.Logger = quietLogger()
	s := newRedisStore(t, srv.URL(), opts)
	ctx := t.Context()
	older, err := s.Create(ctx, sampleRequest(1), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := s.Create(ctx, sampleRequest(2), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := newRedisClient(t, srv.URL()).HDel(ctx, s.keys.ask(older.ID), "l").Err(); err != nil {
		t.Fatal(err)
	}
	s.Hold(ctx, older.ID)() // a poll on a new replica, then only old ones
	s.Hold(ctx, newer.ID)()
	clock.Advance(s.opts.LeaseTTL + time.Second)
	swept, err := s.SweepLeases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(swept) != 1 || swept[0].ID != newer.ID {
		t.Errorf("swept %v, want only %s (this release's Ask); the older release's %s lives on", ids(swept), newer.ID, older.ID)
	}
	if got, err := s.Get(ctx, older.ID); err != nil || got.Status != StatusPending {
		t.Errorf("the older release's Ask is %s (%v), want pending until its deadline", got.Status, err)
	}
}
