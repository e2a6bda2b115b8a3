package pending

import (
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/askops/askops/internal/testclock"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-redis probes a server that refused every dial once a second
		// from a goroutine that exits at its next wake-up after the client
		// is closed (pool.go tryDial); it is the library's, not a leak of ours.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	)
}

// newFakeClock is the tests' clock, near real time: Redis TTLs are
// relative, but keep the records sane.
func newFakeClock() *testclock.Clock { return testclock.New(time.Now().UTC().Truncate(time.Second)) }

// clockOptions drive a store by c, the Redis server's clock included.
func clockOptions(c *testclock.Clock) Options {
	return Options{Now: c.Now, After: c.After, serverNow: c.Now}
}

// waitingCount is how the contract tests see that a Wait has registered.
func waitingCount(s Store) int {
	if w, ok := s.(interface{ waiting() int }); ok {
		return w.waiting()
	}
	return 0
}

// quietLogger drops the store's logs (benchmarks).
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
