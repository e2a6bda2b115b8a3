// Package batchmsg remembers which Asks each batch message shows ("N Asks
// waiting", posted when a channel's posting queue backs up), so whichever
// replica takes a click on one of them, or ends one, can render the whole
// message again: in this process (Memory) or shared on Redis (Redis).
package batchmsg

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// Store records batch messages' members; Memory and Redis satisfy it.
type Store interface {
	// Add appends ids to the members of the message channel/ts.
	Add(ctx context.Context, channel, ts string, ids ...string) error
	// Members returns the message's members in the order added; none
	// means the message is not a batch.
	Members(ctx context.Context, channel, ts string) ([]string, error)
}

// Memory is the Store of one process. Entries are forgotten ttl after
// their last Add.
type Memory struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[[2]string]memoryBatch
}

type memoryBatch struct {
	ids   []string
	until time.Time
}

// NewMemory returns an empty Memory keeping entries for ttl (0: a day).
func NewMemory(ttl time.Duration, now func() time.Time) *Memory {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	if now == nil {
		now = time.Now
	}
	return &Memory{ttl: ttl, now: now, m: map[[2]string]memoryBatch{}}
}

// Add implements Store.
func (s *Memory) Add(_ context.Context, channel, ts string, ids ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, b := range s.m {
		if !now.Before(b.until) {
			delete(s.m, k)
		}
	}
	k := [2]string{channel, ts}
	b := s.m[k]
	b.ids = append(b.ids, ids...)
	b.until = now.Add(s.ttl)
	s.m[k] = b
	return nil
}

// Members implements Store.
func (s *Memory) Members(_ context.Context, channel, ts string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[[2]string{channel, ts}]
	if !ok || !s.now().Before(b.until) {
		return nil, nil
	}
	return append([]string(nil), b.ids...), nil
}

// Redis is the Store every replica shares. Keys:
// NAMESPACE:{NAMESPACE}:slack:batch:CHANNEL:TS, a list of Ask ids living
// ttl after its last Add; under askops' hash tag with every other askops
// key.
type Redis struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// NewRedis returns the Store on client under keys (askops' namespace,
// rediskey.Default()), keeping entries for ttl (0: a day).
func NewRedis(client redis.UniversalClient, keys rediskey.Space, ttl time.Duration) *Redis {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Redis{client: client, prefix: keys.Key("slack", "batch", ""), ttl: ttl}
}

func (s *Redis) key(channel, ts string) string { return s.prefix + channel + ":" + ts }

// Add implements Store.
func (s *Redis) Add(ctx context.Context, channel, ts string, ids ...string) error {
	if channel == "" || ts == "" {
		return errors.New("batchmsg: a batch message needs a channel and a ts")
	}
	if len(ids) == 0 {
		return nil
	}
	k := s.key(channel, ts)
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, members...)
		p.PExpire(ctx, k, s.ttl)
		return nil
	})
	return err
}

// Members implements Store.
func (s *Redis) Members(ctx context.Context, channel, ts string) ([]string, error) {
	ids, err := s.client.LRange(ctx, s.key(channel, ts), 0, -1).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return ids, err
}
