package chatops

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// dedup lets each Events API event (and each slash command invocation)
// through once: Slack redelivers an event it thinks failed
// (X-Slack-Retry-Num), possibly to another replica, and a redelivered
// app_mention must not start a second run. With Redis the ids are shared by
// every replica (SET NX with a TTL, under askops:{askops}:event:ID; an id
// the previous release marked at askops:event:{ID} counts as taken;
// Remove in v0.2.0); without, they are remembered in memory.
type dedup struct {
	redis redis.UniversalClient // nil: memory only
	now   func() time.Time
	ttl   time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time
}

func newDedup(rdb redis.UniversalClient, now func() time.Time, log *slog.Logger) *dedup {
	return &dedup{redis: rdb, now: now, ttl: time.Hour, log: log, seen: map[string]time.Time{}}
}

// first reports whether the event id is seen for the first time (within the
// TTL). If Redis cannot say, the event is handled: a lost mention is worse
// than a rare duplicate run, which still asks before anything risky.
func (d *dedup) first(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	if d.redis != nil {
		ok, err := d.redis.SetNX(ctx, eventKey(id), 1, d.ttl).Result()
		if err == nil && ok {
			// A replica of the previous release marks the event at its old
			// key; one that took it there handled it (Remove in v0.2.0).
			var n int64
			n, err = d.redis.Exists(ctx, legacyEventKey(id)).Result()
			ok = n == 0
		}
		if err == nil {
			return ok
		}
		d.log.Warn("event dedup: redis unavailable, using this replica's memory", "event", id, "err", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for k, at := range d.seen {
		if now.Sub(at) > d.ttl {
			delete(d.seen, k)
		}
	}
	if _, dup := d.seen[id]; dup {
		return false
	}
	d.seen[id] = now
	return true
}

// eventKey marks an event id taken, for the TTL.
func eventKey(id string) string { return rediskey.Default().Key("event", id) }

// legacyEventKey is where releases before the one key scheme marked it.
func legacyEventKey(id string) string { return rediskey.Default().Tagged("event", id) }
