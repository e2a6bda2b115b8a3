package aap

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Store keeps what the protocol adds to askops' Asks: instances, their
// hashed credentials, requests as submitted, decisions as first read,
// and idempotency records. It is a small keyed store on purpose: every
// rule is in this package's Go code, and the store gives only the two
// atomic steps those rules need (claim a name once; add to and read a
// set). Keys are this package's own names (keys.go); a RedisStore puts
// them under askops' namespace.
//
// Every record has a life: Put and Claim take a ttl (0: kept until
// dropped), which is Redis' TTL and the memory store's garbage collection
// alike, never a signal the protocol reads.
type Store interface {
	// Get returns the value at key; ok is false when there is none.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Put sets key to val for ttl (0: no expiry).
	Put(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Claim sets key to val for ttl only if key is unset: claimed reports
	// whether it was this call; otherwise held is the value that stands.
	Claim(ctx context.Context, key string, val []byte, ttl time.Duration) (claimed bool, held []byte, err error)
	// Drop removes keys.
	Drop(ctx context.Context, keys ...string) error
	// Count adds one to the counter at key, made with ttl when it is new,
	// and returns the new count: every replica counts in the same place.
	Count(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// AddMember adds member to the set at key; RemoveMember removes it;
	// Members lists it.
	AddMember(ctx context.Context, key, member string) error
	RemoveMember(ctx context.Context, key, member string) error
	Members(ctx context.Context, key string) ([]string, error)
	// Schedule puts member in the queue at key, due at at (moving it if
	// it is there); Due lists up to n members due by now, soonest first;
	// Unschedule takes member out.
	Schedule(ctx context.Context, key, member string, at time.Time) error
	Due(ctx context.Context, key string, now time.Time, n int) ([]string, error)
	Unschedule(ctx context.Context, key, member string) error
}

// MemoryStore is the Store of a serve without Redis: one process's maps.
type MemoryStore struct {
	now    func() time.Time
	mu     sync.Mutex
	vals   map[string]memoryValue
	sets   map[string]map[string]bool
	queues map[string]map[string]time.Time
}

type memoryValue struct {
	val   []byte
	until time.Time // zero: no expiry
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore on clock now (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, vals: map[string]memoryValue{}, sets: map[string]map[string]bool{}, queues: map[string]map[string]time.Time{}}
}

// live returns key's value unless it has lapsed (and drops it then).
// The caller holds mu.
func (m *MemoryStore) live(key string) (memoryValue, bool) {
	v, ok := m.vals[key]
	if ok && !v.until.IsZero() && !m.now().Before(v.until) {
		delete(m.vals, key)
		return memoryValue{}, false
	}
	return v, ok
}

func (m *MemoryStore) until(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return m.now().Add(ttl)
}

// Get implements Store.
func (m *MemoryStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.live(key)
	return append([]byte(nil), v.val...), ok, nil
}

// Put implements Store.
func (m *MemoryStore) Put(_ context.Context, key string, val []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.vals[key] = memoryValue{val: append([]byte(nil), val...), until: m.until(ttl)}
	m.gc()
	return nil
}

// Claim implements Store.
func (m *MemoryStore) Claim(_ context.Context, key string, val []byte, ttl time.Duration) (bool, []byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.live(key); ok {
		return false, append([]byte(nil), v.val...), nil
	}
	m.vals[key] = memoryValue{val: append([]byte(nil), val...), until: m.until(ttl)}
	m.gc()
	return true, nil, nil
}

// Count implements Store.
func (m *MemoryStore) Count(_ context.Context, key string, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.live(key)
	n := int64(1)
	if ok {
		prev, err := strconv.ParseInt(string(v.val), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("aap: %s holds no count", key)
		}
		n = prev + 1
	} else {
		v.until = m.until(ttl)
	}
	m.vals[key] = memoryValue{val: []byte(strconv.FormatInt(n, 10)), until: v.until}
	m.gc()
	return n, nil
}

// Drop implements Store.
func (m *MemoryStore) Drop(_ context.Context, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.vals, k)
		delete(m.sets, k)
	}
	return nil
}

// AddMember implements Store.
func (m *MemoryStore) AddMember(_ context.Context, key, member string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sets[key]
	if s == nil {
		s = map[string]bool{}
		m.sets[key] = s
	}
	s[member] = true
	return nil
}

// RemoveMember implements Store.
func (m *MemoryStore) RemoveMember(_ context.Context, key, member string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sets[key], member)
	if len(m.sets[key]) == 0 {
		delete(m.sets, key)
	}
	return nil
}

// Members implements Store.
func (m *MemoryStore) Members(_ context.Context, key string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.sets[key]))
	for k := range m.sets[key] {
		out = append(out, k)
	}
	return out, nil
}

// Schedule implements Store.
func (m *MemoryStore) Schedule(_ context.Context, key, member string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[key]
	if q == nil {
		q = map[string]time.Time{}
		m.queues[key] = q
	}
	q[member] = at
	return nil
}

// Due implements Store.
func (m *MemoryStore) Due(_ context.Context, key string, now time.Time, n int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for member, at := range m.queues[key] {
		if !at.After(now) {
			out = append(out, member)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return m.queues[key][a].Compare(m.queues[key][b]) })
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// Unschedule implements Store.
func (m *MemoryStore) Unschedule(_ context.Context, key, member string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.queues[key], member)
	return nil
}

// gc drops lapsed values once the map has grown past its last size
// twice over, so a long-lived serve does not keep every request forever
// and no write pays for a sweep each time. The caller holds mu.
func (m *MemoryStore) gc() {
	if len(m.vals) < 1024 || len(m.vals)%1024 != 0 {
		return
	}
	for k := range m.vals {
		m.live(k)
	}
}
