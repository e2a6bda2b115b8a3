package gateway

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// StartStore remembers when each session was first seen, for every
// replica alike, so every Ask of a session names the same start ("this
// Claude Code session in ~/src/api, started 14:02") whichever replica
// its call reached.
type StartStore interface {
	// Start records at as session's start unless it has one, keeps it
	// for another ttl, and returns the start that stands.
	Start(ctx context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error)
}

// MemoryStartStore is the StartStore of a single process.
type MemoryStartStore struct{ starts firstPins[time.Time] }

// NewMemoryStartStore returns an empty MemoryStartStore.
func NewMemoryStartStore() *MemoryStartStore { return &MemoryStartStore{} }

// Start implements StartStore; at is also the store's now.
func (s *MemoryStartStore) Start(_ context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error) {
	return s.starts.pin(session, at, at, ttl), nil
}

// RedisStartStore keeps sessions' starts in Redis:
// askops:{askops}:gateway:start:SESSION holds the unix second the session
// was first seen, for the session's life (the TTL every call renews, as
// the session's root and thread have).
type RedisStartStore struct{ client redis.UniversalClient }

// NewRedisStartStore returns a StartStore on client.
func NewRedisStartStore(client redis.UniversalClient) *RedisStartStore {
	return &RedisStartStore{client: client}
}

// Start implements StartStore: SET NX GET decides between replicas, and
// the EXPIRE that renews a standing start goes in the same round trip.
func (s *RedisStartStore) Start(ctx context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error) {
	key := rediskey.Default().Key("gateway", "start", session)
	var set *redis.StatusCmd
	// Each command keeps its own result; the SET's is the one read (the
	// pipeline's error would be its redis.Nil when the start is ours).
	_, _ = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, key, at.Unix(), redis.SetArgs{Mode: "NX", TTL: ttl, Get: true})
		p.Expire(ctx, key, ttl)
		return nil
	})
	v, err := set.Result()
	if errors.Is(err, redis.Nil) {
		return time.Unix(at.Unix(), 0), nil // ours
	}
	if err != nil {
		return time.Time{}, err
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, errors.New("gateway: a session's start in Redis is not a unix time: " + strconv.Quote(v))
	}
	return time.Unix(sec, 0), nil
}
