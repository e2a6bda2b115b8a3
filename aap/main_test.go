package aap

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/askops/askops/internal/redisconn"
)

// TestMain checks that no test leaves a goroutine behind: long polls end
// with their exchange, and the Redis stores' machinery with Close.
func TestMain(m *testing.M) {
	redisconn.QuietLog() // the restart test's refused dials are expected
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	)
}
