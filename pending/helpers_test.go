package pending

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/testwait"
)

// waitInBackground starts s.Wait on the Ask id in a goroutine of its own
// and returns the channel its answer comes on (buffered, so a waiter the
// test no longer reads from does not leak): the waiter every "a decision
// elsewhere wakes it" test starts the same way.
func waitInBackground(t testing.TB, s Store, id string) <-chan Ask {
	woke := make(chan Ask, 1)
	go func() { got, _ := s.Wait(t.Context(), id); woke <- got }()
	return woke
}

// receiveWithin returns what ch gives within limit, and fails the test
// with failure when nothing came by then. The limit is a liveness bound
// (a store that lost a wake-up fails the test instead of hanging it), not
// a measure of speed.
func receiveWithin[T any](t testing.TB, ch <-chan T, limit time.Duration, failure string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatal(failure)
		var zero T
		return zero
	}
}

// receiveFor is receiveWithin with testwait.For's bound: for a receive
// that the test knows nothing else can end (a deadline an hour away, a
// read that hangs), so only liveness is checked.
func receiveFor[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	var got T
	testwait.For(t, what, func() bool {
		select {
		case got = <-ch:
			return true
		default:
			return false
		}
	})
	return got
}

// openRedisStore is NewRedisStore on client, failing the test when it
// cannot open, and closing the store when the test ends (cleanups run
// last-in first-out, so before a client newRedisClient opened earlier).
func openRedisStore(t testing.TB, client redis.UniversalClient, opts Options) *RedisStore {
	t.Helper()
	s, err := NewRedisStore(t.Context(), client, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// auditPick reads s's whole audit trail (failing the test when it cannot)
// and returns, in trail order, pick(e) of each event pick keeps (its
// second result): what the audit assertions compare, without each
// repeating the read and the filtering loop.
func auditPick[T any](t testing.TB, s Store, pick func(Event) (T, bool)) []T {
	t.Helper()
	events, err := s.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, e := range events {
		if v, ok := pick(e); ok {
			out = append(out, v)
		}
	}
	return out
}
