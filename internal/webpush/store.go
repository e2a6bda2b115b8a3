package webpush

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// Store keeps the VAPID key and each person's subscriptions where the
// serve keeps durable state: Redis, so every replica signs with one key
// and pushes to every device; or this process's memory, where both die
// with it.
type Store interface {
	// VAPIDKey is the kept VAPID private key; when there is none, the one
	// create makes is kept, unless another replica kept its own first,
	// whose key is then answered.
	VAPIDKey(ctx context.Context, create func() ([]byte, error)) ([]byte, error)
	// Add keeps s as one of person's subscriptions (replacing one of the
	// same endpoint), and drops the oldest beyond limit.
	Add(ctx context.Context, person string, s Subscription, limit int) error
	// List is person's subscriptions, oldest first.
	List(ctx context.Context, person string) ([]Subscription, error)
	// Remove drops person's subscription to endpoint (none: no error).
	Remove(ctx context.Context, person, endpoint string) error
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Store = (*RedisStore)(nil)
)

// MemoryStore is the Store of a serve without Redis.
type MemoryStore struct {
	mu   sync.Mutex
	key  []byte
	subs map[string][]Subscription // person → oldest first
}

// NewMemoryStore is an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{subs: map[string][]Subscription{}} }

// VAPIDKey implements Store.
func (m *MemoryStore) VAPIDKey(_ context.Context, create func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key == nil {
		k, err := create()
		if err != nil {
			return nil, err
		}
		m.key = k
	}
	return slices.Clone(m.key), nil
}

// Add implements Store.
func (m *MemoryStore) Add(_ context.Context, person string, s Subscription, limit int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := slices.DeleteFunc(m.subs[person], func(o Subscription) bool { return o.Endpoint == s.Endpoint })
	list = append(list, s)
	if limit > 0 && len(list) > limit {
		list = list[len(list)-limit:]
	}
	m.subs[person] = list
	return nil
}

// List implements Store.
func (m *MemoryStore) List(_ context.Context, person string) ([]Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.subs[person]), nil
}

// Remove implements Store.
func (m *MemoryStore) Remove(_ context.Context, person, endpoint string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs[person] = slices.DeleteFunc(m.subs[person], func(o Subscription) bool { return o.Endpoint == endpoint })
	return nil
}

// RedisStore is the Store in Redis. Keys (rediskey):
//
//	NS:{NS}:webpush:vapid        string: the VAPID private key, set once (SET NX)
//	NS:webpush:{PERSON}          hash: endpoint → the subscription's JSON
//	NS:webpush:{PERSON}:order    zset: endpoint by the time it was added
//
// A person's two keys share their hash tag, so the add script keeps them
// in step and bounds them in one step, even on a Cluster.
type RedisStore struct {
	rdb  redis.UniversalClient
	keys rediskey.Space
	now  func() time.Time
}

// NewRedisStore is the Store on rdb under keys; now orders subscriptions.
func NewRedisStore(rdb redis.UniversalClient, keys rediskey.Space, now func() time.Time) *RedisStore {
	if now == nil {
		now = time.Now
	}
	return &RedisStore{rdb: rdb, keys: keys, now: now}
}

// VAPIDKey implements Store.
func (r *RedisStore) VAPIDKey(ctx context.Context, create func() ([]byte, error)) ([]byte, error) {
	key := r.keys.Key("webpush", "vapid")
	b, err := r.rdb.Get(ctx, key).Bytes()
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, redis.Nil) {
		return nil, err
	}
	k, err := create()
	if err != nil {
		return nil, err
	}
	// The first replica's key wins; the others read it back.
	if err := r.rdb.SetNX(ctx, key, k, 0).Err(); err != nil {
		return nil, err
	}
	return r.rdb.Get(ctx, key).Bytes()
}

// addScript keeps one subscription and drops the oldest past the limit.
// KEYS: the hash, the order zset. ARGV: endpoint, JSON, score, limit.
var addScript = redis.NewScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if tonumber(ARGV[4]) > 0 and over > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
  redis.call('HDEL', KEYS[1], unpack(old))
end
return 1
`)

func (r *RedisStore) personKeys(person string) []string {
	return []string{r.keys.Tagged("webpush", person), r.keys.Tagged("webpush", person, "order")}
}

// Add implements Store.
func (r *RedisStore) Add(ctx context.Context, person string, s Subscription, limit int) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return addScript.Run(ctx, r.rdb, r.personKeys(person), s.Endpoint, b, r.now().UnixNano(), limit).Err()
}

// List implements Store.
func (r *RedisStore) List(ctx context.Context, person string) ([]Subscription, error) {
	keys := r.personKeys(person)
	order, err := r.rdb.ZRange(ctx, keys[1], 0, -1).Result()
	if err != nil || len(order) == 0 {
		return nil, err
	}
	vals, err := r.rdb.HMGet(ctx, keys[0], order...).Result()
	if err != nil {
		return nil, err
	}
	var out []Subscription
	for _, v := range vals {
		str, ok := v.(string)
		if !ok {
			continue // removed between the two reads
		}
		var s Subscription
		if err := json.Unmarshal([]byte(str), &s); err != nil {
			return nil, fmt.Errorf("webpush: a kept subscription is not JSON: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Remove implements Store.
func (r *RedisStore) Remove(ctx context.Context, person, endpoint string) error {
	keys := r.personKeys(person)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, keys[0], endpoint)
		p.ZRem(ctx, keys[1], endpoint)
		return nil
	})
	return err
}
