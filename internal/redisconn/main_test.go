package redisconn

import (
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"
)

// newRedisClient opens a client the way production does (Open) and closes
// it when the test ends.
func newRedisClient(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	c, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
