package redisconn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// Client is a connection to Redis as Open makes it: one server, a Sentinel
// group or a Cluster. The wiring holds it and hands it to the stores, so
// only they and this package need go-redis itself.
type Client = redis.UniversalClient

// QuietLog sends go-redis's own logging (connection retries, written
// with the standard logger outside our handlers and formats) to slog at
// debug level; its errors reach the stores as return values anyway. The
// setting is process-wide, so only main calls it.
func QuietLog() { redis.SetLogger(debugLog{}) }

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
