package aap

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// RedisStore is the Store every serve replica shares: each key is
// rediskey's Untagged "aap:<name>" (records of different requests and
// instances touch no common script, so a Cluster may spread them), with
// Redis' TTL as its life.
type RedisStore struct {
	client redis.UniversalClient
	keys   rediskey.Space
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns a Store on client under keys' namespace. The
// caller keeps ownership of client.
func NewRedisStore(client redis.UniversalClient, keys rediskey.Space) *RedisStore {
	return &RedisStore{client: client, keys: keys}
}

func (s *RedisStore) key(k string) string { return s.keys.Untagged("aap", k) }

// Get implements Store.
func (s *RedisStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := s.client.Get(ctx, s.key(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Put implements Store.
func (s *RedisStore) Put(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return s.client.Set(ctx, s.key(key), val, max(ttl, 0)).Err()
}

// claimScript sets KEYS[1] unless it is set and returns nil, or the value
// that stands: SET NX and the read of the winner in one step.
var claimScript = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if held then return held end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return false
`)

// Claim implements Store.
func (s *RedisStore) Claim(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, []byte, error) {
	held, err := claimScript.Run(ctx, s.client, []string{s.key(key)}, val, max(ttl, 0).Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		return true, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	return false, []byte(held), nil
}

// countScript adds one to KEYS[1] and, when that made it, gives it its
// life (ARGV[1] ms): INCR and PEXPIRE in one step, so no counter outlives
// its window.
var countScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 and tonumber(ARGV[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`)

// Count implements Store.
func (s *RedisStore) Count(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	return countScript.Run(ctx, s.client, []string{s.key(key)}, max(ttl, 0).Milliseconds()).Int64()
}

// Drop implements Store.
func (s *RedisStore) Drop(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = s.key(k)
	}
	// One DEL per key: on a Cluster the keys may lie on different slots.
	for _, k := range full {
		if err := s.client.Del(ctx, k).Err(); err != nil {
			return err
		}
	}
	return nil
}

// AddMember implements Store.
func (s *RedisStore) AddMember(ctx context.Context, key, member string) error {
	return s.client.SAdd(ctx, s.key(key), member).Err()
}

// RemoveMember implements Store.
func (s *RedisStore) RemoveMember(ctx context.Context, key, member string) error {
	return s.client.SRem(ctx, s.key(key), member).Err()
}

// Members implements Store.
func (s *RedisStore) Members(ctx context.Context, key string) ([]string, error) {
	return s.client.SMembers(ctx, s.key(key)).Result()
}

// Schedule implements Store.
func (s *RedisStore) Schedule(ctx context.Context, key, member string, at time.Time) error {
	return s.client.ZAdd(ctx, s.key(key), redis.Z{Score: float64(at.UnixMilli()), Member: member}).Err()
}

// Due implements Store.
func (s *RedisStore) Due(ctx context.Context, key string, now time.Time, n int) ([]string, error) {
	return s.client.ZRangeByScore(ctx, s.key(key), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(n)}).Result()
}

// Unschedule implements Store.
func (s *RedisStore) Unschedule(ctx context.Context, key, member string) error {
	return s.client.ZRem(ctx, s.key(key), member).Err()
}
