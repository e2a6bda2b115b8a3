package pending

import (
	"testing"

	"github.com/redis/go-redis/v9"
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
