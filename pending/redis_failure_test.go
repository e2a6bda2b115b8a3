package pending

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// waitResult is one Wait's answer and when it came.
type waitResult struct {
	ask Ask
	err error
	at  time.Time
}

// startWaiters creates n Asks on a and starts a Wait on each; it returns once
// every waiter has registered with a's listener.
func startWaiters(t *testing.T, a *RedisStore, n int, ttl time.Duration) ([]Ask, []chan waitResult) {
	t.Helper()
	asks := make([]Ask, n)
	results := make([]chan waitResult, n)
	for i := range n {
		ask, err := a.Create(t.Context(), sampleRequest(i), ttl)
		if err != nil {
			t.Fatal(err)
		}
		asks[i] = ask
		results[i] = make(chan waitResult, 1)
		go func() {
			got, err := a.Wait(t.Context(), ask.ID)
			results[i] <- waitResult{got, err, time.Now()}
		}()
	}
	// Each waiter must have read its record: one that never has does not
	// know its deadline, and with Redis gone it gives up after the first
	// read's retry budget instead (fail closed, but not what these tests
	// are about).
	testwait.Within(t, 10*time.Second, fmt.Sprintf("%d waiters with their first read", n), func() bool { return a.waiters.countRead() == n })
	return asks, results
}

// checkNotPastDeadline fails if a Wait returned later than its deadline + 1s,
// or returned a non-terminal status.
func checkNotPastDeadline(t *testing.T, ask Ask, r waitResult) {
	t.Helper()
	if late := r.at.Sub(ask.Deadline); late > time.Second {
		t.Errorf("ask %s: Wait returned %s after its deadline", ask.ID, late)
	}
	if _, ended := r.ask.Outcome(); !ended {
		t.Errorf("ask %s: Wait returned non-terminal status %q", ask.ID, r.ask.Status)
	}
}

// resultWithin is waiter i's result (startWaiters' results[i]), checked
// by checkNotPastDeadline. Every Wait must end by a second past its Ask's
// deadline, decided or not, so a waiter still blocked then fails the test
// instead of hanging it.
func resultWithin(t *testing.T, i int, ask Ask, results []chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-results[i]:
		checkNotPastDeadline(t, ask, r)
		return r
	case <-time.After(time.Until(ask.Deadline.Add(time.Second))):
		t.Fatalf("ask %d: Wait still blocked 1s past its deadline", i)
		return waitResult{}
	}
}

// checkWokeWithDecision checks that waiter i's Wait on ask returned won,
// the decision made (on another store) while it waited, and was woken by
// it before the deadline rather than finding it then.
func checkWokeWithDecision(t *testing.T, i int, ask Ask, r waitResult, won Ask) {
	t.Helper()
	if r.err != nil || r.ask != won {
		t.Errorf("ask %d: Wait = %s, %v; want the decision %s", i, r.ask.Status, r.err, won.Status)
	}
	checkWokenBeforeDeadline(t, ask, r)
}

// checkWokenBeforeDeadline fails if a decided Ask's Wait only returned at its
// deadline: the compare-and-set there would find the decision too, so only
// the time tells that the wake-up itself got through.
func checkWokenBeforeDeadline(t *testing.T, ask Ask, r waitResult) {
	t.Helper()
	if !r.at.Before(ask.Deadline) {
		t.Errorf("ask %s: decided long before its deadline, but Wait only returned at %s (deadline %s): the wake-up was lost",
			ask.ID, r.at.Format(time.StampMilli), ask.Deadline.Format(time.StampMilli))
	}
}

func TestRedisListenerConnectionKilled(t *testing.T) {
	srv, a, b := twoReplicas(t)
	const n = 100
	asks, results := startWaiters(t, a, n, 20*time.Second)

	// Kill the pub/sub connections (both stores' listeners) twice: once
	// before any decision, and again halfway through, so some
	// announcements are published while A's listener is disconnected.
	kill := func() {
		reply, err := srv.Do("CLIENT", "KILL", "TYPE", "pubsub")
		if err != nil || reply == ":0" {
			t.Fatalf("CLIENT KILL TYPE pubsub: %q %v", reply, err)
		}
	}
	kill()
	won := make([]Ask, n)
	for i, ask := range asks {
		if i == n/2 {
			kill()
		}
		var err error
		won[i], err = b.Decide(t.Context(), ask.ID, []Outcome{Approved, Denied}[i%2], "U_BOB", "")
		if err != nil {
			t.Fatalf("decide %d: %v", i, err)
		}
	}
	for i, ask := range asks {
		checkWokeWithDecision(t, i, ask, resultWithin(t, i, ask, results), won[i])
	}
}

func TestRedisServerRestarted(t *testing.T) {
	srv, a, b := twoReplicas(t)
	const n = 100
	asks, results := startWaiters(t, a, n, 10*time.Second)

	srv.Restart()

	// Decide everything through B as soon as Redis answers again; a click
	// that fails while B's connections recover is retried, as a user would.
	won := make([]Ask, n)
	decided := make([]bool, n)
	var wg sync.WaitGroup
	for i, ask := range asks {
		wg.Go(func() {
			for time.Now().Before(ask.Deadline.Add(-2 * time.Second)) {
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				got, err := b.Decide(ctx, ask.ID, []Outcome{Approved, Denied}[i%2], "U_BOB", "")
				cancel()
				if err == nil {
					won[i], decided[i] = got, true
					return
				}
				if ErrorCode(err) != CodeUnavailable {
					t.Errorf("decide %d: %v", i, err)
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	got := map[Status]int{}
	for i, ask := range asks {
		r := resultWithin(t, i, ask, results)
		got[r.ask.Status]++
		switch {
		case decided[i] && r.ask != won[i]:
			t.Errorf("ask %d: decided %s before its deadline, but Wait returned %s (%v)", i, won[i].Status, r.ask.Status, r.err)
		case decided[i]:
			checkWokenBeforeDeadline(t, ask, r)
		case !decided[i] && r.ask.Status != Status(Expired) && r.ask.Status != Status(Unavailable):
			t.Errorf("ask %d: undecided, but Wait returned %s", i, r.ask.Status)
		}
	}
	t.Logf("after restart: %v", got)
}

func TestRedisDownWaitersEndAtDeadline(t *testing.T) {
	srv := redistest.Start(t)
	a := newRedisStore(t, srv.URL(), Options{})
	const n = 100
	asks, results := startWaiters(t, a, n, 2*time.Second)
	srv.Kill()
	for i, ask := range asks {
		r := resultWithin(t, i, ask, results)
		if r.ask.Status != Status(Unavailable) || ErrorCode(r.err) != CodeUnavailable {
			t.Errorf("ask %d with Redis down: %s, %v; want unavailable", i, r.ask.Status, r.err)
		}
		if r.at.Before(ask.Deadline) {
			t.Errorf("ask %d: gave up %s before its deadline", i, ask.Deadline.Sub(r.at))
		}
	}
	// A Wait that starts while Redis is down fails closed too.
	if got, err := a.Wait(t.Context(), asks[0].ID); got.Status != Status(Unavailable) || ErrorCode(err) != CodeUnavailable {
		t.Errorf("Wait starting with Redis down: %s, %v; want unavailable", got.Status, err)
	}
	// Nothing was recorded, so nothing claims a decision either.
	if _, err := a.Decide(t.Context(), asks[0].ID, Approved, "U1", ""); ErrorCode(err) != CodeUnavailable {
		t.Errorf("decide with Redis down: %v", err)
	}
}

// A waiter that created its Ask (WaitFor) knows it is pending: an outage
// that starts before its first read is waited through, as one after it is,
// and the decision made once Redis answers again is what it returns. (Wait
// gave up at the first read's retry budget and recorded nothing, so the
// Ask stayed pending and that later click "approved" a call its agent had
// been refused.)
func TestWaitForWaitsThroughAnOutageBeforeItsFirstRead(t *testing.T) {
	srv, a, b := twoReplicas(t)
	ask, err := a.Create(t.Context(), sampleRequest(0), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop() // refused at once, so the first read fails at once
	res := make(chan waitResult, 1)
	go func() {
		got, err := a.WaitFor(t.Context(), ask)
		res <- waitResult{got, err, time.Now()}
	}()
	// Longer than the first read's retry budget plus a failing read (the
	// client dials 5 times), which is what ended Wait: 1.7 s here.
	time.Sleep(a.finishBudget() + 3*time.Second)
	select {
	case r := <-res:
		t.Fatalf("WaitFor ended during the outage, %s before the deadline: %s, %v", ask.Deadline.Sub(r.at), r.ask.Status, r.err)
	default:
	}
	srv.StartAgain()
	var won Ask
	testwait.Within(t, 10*time.Second, "a decide once Redis answers", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		won, err = b.Decide(ctx, ask.ID, Approved, "U_BOB", "")
		return err == nil
	})
	select {
	case r := <-res:
		if r.ask.Status != won.Status || r.err != nil {
			t.Fatalf("WaitFor returned %s (%v), want the decision %s", r.ask.Status, r.err, won.Status)
		}
	case <-time.After(time.Until(ask.Deadline)):
		t.Fatal("WaitFor not woken by the decision")
	}
}

// An asker that goes away while Redis is unreachable cannot record its
// Ask's end then; it is recorded once Redis answers, so the Ask's buttons
// cannot approve a call nobody waits for.
func TestCancelDuringOutageIsRecordedOnceRedisAnswers(t *testing.T) {
	srv := redistest.Start(t)
	a := newRedisStore(t, srv.URL(), Options{})
	ask, err := a.Create(t.Context(), sampleRequest(0), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv.Freeze()
	ctx, cancel := context.WithCancelCause(t.Context())
	res := make(chan waitResult, 1)
	go func() {
		got, err := a.WaitFor(ctx, ask)
		res <- waitResult{got, err, time.Now()}
	}()
	cancel(ErrAskerGone)
	r := <-res
	if r.ask.Status != Status(Unavailable) || ErrorCode(r.err) != CodeUnavailable {
		t.Fatalf("cancelled with Redis frozen: %s, %v; want unavailable", r.ask.Status, r.err)
	}
	srv.Thaw()
	var got Ask
	testwait.Within(t, 10*time.Second, "the cancellation recorded", func() bool {
		got, err = a.Get(t.Context(), ask.ID)
		return err == nil && got.Status == Status(Cancelled)
	})
	if got.DecisionReason != ReasonAskerGone {
		t.Errorf("recorded reason %q, want %q", got.DecisionReason, ReasonAskerGone)
	}
	if _, err := a.Decide(t.Context(), ask.ID, Approved, "U_BOB", ""); ErrorCode(err) != CodeConflict {
		t.Errorf("a click after it: %v, want a conflict", err)
	}
}
