// Package testwait is the tests' one way to wait for a condition: poll it
// until it holds, bounded, and fail the test saying what never happened.
// Tests wait for conditions, never sleep and hope (STYLE.md).
package testwait

import (
	"context"
	"testing"
	"time"
)

// Timeout bounds For: long enough for a loaded 2-core machine under -race.
const Timeout = 20 * time.Second

// poll is how often the condition is tried again.
const poll = 5 * time.Millisecond

// For polls cond until it holds, for at most Timeout (and no longer than
// the test runs), and fails t with what otherwise. what names the awaited
// event ("the waiter to register"): it is the whole failure message.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, cond)
}

// Within is For with its own bound.
func Within(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	Until(ctx, t, what, cond)
}

// Until is For bounded by ctx (and by Timeout if ctx has no deadline).
func Until(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Timeout)
		defer cancel()
	}
	start := time.Now()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up after %s waiting for %s: %v", time.Since(start).Round(time.Millisecond), what, context.Cause(ctx))
		case <-t.Context().Done(): // the test is ending
			t.Fatalf("gave up waiting for %s: the test ended", what)
		case <-tick.C:
		}
	}
}

// Receive returns the next value sent on ch, failing the test when none
// comes within Timeout or the test ends first. what names the value
// awaited, for the failure ("the waiter's answer").
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return ReceiveWithin(t, ch, Timeout, what)
}

// ReceiveWithin is Receive bounded by within instead of Timeout.
func ReceiveWithin[T any](t testing.TB, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	start := time.Now()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("gave up after %s waiting for %s", time.Since(start).Round(time.Millisecond), what)
	case <-t.Context().Done():
		t.Fatalf("gave up waiting for %s: the test ended", what)
	}
	var zero T
	return zero
}
