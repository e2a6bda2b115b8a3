package pending

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-redis probes a server that refused every dial once a second
		// from a goroutine that exits at its next wake-up after the client
		// is closed (pool.go tryDial); it is the library's, not a leak of ours.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	)
}

// fakeClock is an injected clock: Now returns the fake time, After fires
// when Advance moves the time past it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	// Near real time: Redis TTLs are relative, but keep the records sane.
	return &fakeClock{now: time.Now().UTC().Truncate(time.Second)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = kept
}

// options drive a store by the fake clock, the Redis server's clock included.
func (c *fakeClock) options() Options { return Options{Now: c.Now, After: c.After, serverNow: c.Now} }

// waitingCount is how the contract tests see that a Wait has registered.
func waitingCount(s Store) int {
	if w, ok := s.(interface{ waiting() int }); ok {
		return w.waiting()
	}
	return 0
}

// quietLogger drops the store's logs (benchmarks).
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
