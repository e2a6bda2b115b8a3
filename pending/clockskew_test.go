package pending

import (
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// Replicas whose clocks run 5 s fast and 5 s slow share one Redis. Deadlines
// are stamped and judged by the server's clock, so neither expires an Ask
// early — not the fast replica's sweep, not its waiters' own timers — and
// every Ask still expires once the server's clock passes its deadline.
func TestRedisClockSkewNoEarlyExpiry(t *testing.T) {
	const (
		n    = 100
		skew = 5 * time.Second
		ttl  = 2 * time.Second
	)
	srv := redistest.Start(t)
	clockAt := func(d time.Duration) func() time.Time { return func() time.Time { return time.Now().Add(d) } }
	fast := newRedisStore(t, srv.URL(), Options{Now: clockAt(skew), Logger: quietLogger()})
	slow := newRedisStore(t, srv.URL(), Options{Now: clockAt(-skew), Logger: quietLogger()})
	ctx := t.Context()

	ids := make([]string, n)
	for i := range n {
		creator := fast
		if i%2 == 1 {
			creator = slow
		}
		a, err := creator.Create(ctx, sampleRequest(i), ttl)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	// Half the Asks wait on the fast replica: its timers fire 5 s early.
	ends := make(chan Ask, n)
	var wg sync.WaitGroup
	for _, id := range ids[:n/2] {
		wg.Go(func() {
			a, err := fast.Wait(ctx, id)
			if err != nil {
				t.Errorf("Wait %s: %v", id, err)
			}
			ends <- a
		})
	}
	testwait.Within(t, 10*time.Second, "the waiters to register", func() bool { return fast.waiting() == n/2 })

	// The fast replica's clock is past every deadline; the server's is not.
	early, err := fast.Sweep(ctx, fast.opts.Now())
	if err != nil {
		t.Fatal(err)
	}
	stillPending, err := slow.ListPending(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	serverNow, err := fast.serverTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before the deadline (server time %s): the fast replica's sweep expired %d, %d of %d still pending",
		serverNow.Format(time.StampMicro), len(early), len(stillPending), n)
	if len(early) != 0 || len(stillPending) != n {
		t.Fatalf("expired early: sweep %d, pending %d of %d", len(early), len(stillPending), n)
	}

	// Once the server's clock passes the deadlines, the slow replica's sweep
	// (its own clock is 3 s short of them) expires what the waiters did not.
	var swept int
	testwait.Within(t, 30*time.Second, "every ask to expire", func() bool {
		got, err := slow.Sweep(ctx, slow.opts.Now())
		if err != nil {
			t.Fatal(err)
		}
		swept += len(got)
		left, _ := slow.ListPending(ctx, Filter{})
		return len(left) == 0
	})
	wg.Wait()
	close(ends)
	var byWaiter int
	for a := range ends {
		if a.Status == Status(Expired) {
			byWaiter++
		}
	}
	var tooEarly, expired int
	for _, id := range ids {
		a, err := slow.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status == Status(Expired) {
			expired++
		}
		if a.DecidedAt.Before(a.Deadline) {
			tooEarly++
			t.Errorf("ask %s expired at %s, before its deadline %s", id, a.DecidedAt.Format(time.StampMicro), a.Deadline.Format(time.StampMicro))
		}
	}
	t.Logf("after the deadline: %d of %d expired (%d waiters on the fast replica saw it, sweeps expired %d), %d before their deadline by the server's clock",
		expired, n, byWaiter, swept, tooEarly)
	if expired != n || byWaiter != n/2 {
		t.Errorf("expired %d of %d, waiters saw %d of %d", expired, n, byWaiter, n/2)
	}
}
