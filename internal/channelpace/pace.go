// Package channelpace hands out Slack's posting slots at the pace Slack
// allows (about one chat.postMessage a second per channel, with short
// bursts; about fifty chat.update a minute for the app), by priority,
// either in this process (Memory) or shared by every replica on one Redis
// (Redis): several replicas pacing on their own post at several times
// Slack's rate and draw 429s.
//
// The pace is GCRA (the generic cell rate algorithm, a token bucket
// without a timer): a key's theoretical arrival time (TAT) moves one
// Interval ahead with each slot taken, and a slot may go while the TAT is
// at most Burst-1 intervals ahead of now.
//
// Priority: whoever takes a slot says for what (a Claim: its priority, 0
// the most urgent, and who holds it, one name per process). A claim is
// remembered for ClaimTTL, and renewed by each take; while another holder's
// claim on the key is more urgent, a take yields: it takes nothing and
// says when to look again. So a replica with only run status to post waits
// while another has Asks queued for the same channel, and the Asks go
// first whichever replica holds them. A holder with nothing left to post
// releases its claim (Release); a holder that died leaves a claim that
// lapses after ClaimTTL.
package channelpace

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// Limit is a key's pace: one slot per Interval, Burst of them at once.
type Limit struct {
	Interval time.Duration
	Burst    int
}

func (l Limit) normal() Limit {
	if l.Interval <= 0 {
		l.Interval = time.Second
	}
	if l.Burst <= 0 {
		l.Burst = 1
	}
	return l
}

// yieldWait is how long a take that yielded to a more urgent claim waits
// before it looks again, when the pace itself would let it go now: the
// urgent holder takes the slot at once, or releases its claim.
func (l Limit) yieldWait() time.Duration {
	return max(min(l.Interval/4, 250*time.Millisecond), 10*time.Millisecond)
}

// Claim says who takes a slot, and for what.
type Claim struct {
	// Priority orders the claims on one key: 0 goes first.
	Priority int
	// Holder names the taker, the same for every take of one process (a
	// replica); "" takes without a claim (and without yielding).
	Holder string
}

// ClaimTTL is how long a claim outlives the take that made it: a holder
// looks again at least every second while it waits, renewing it.
const ClaimTTL = 4 * time.Second

// Pace hands out slots; Memory and Redis satisfy it.
type Pace interface {
	// Take takes a slot of key now for c, if the pace has one and no
	// other holder claims key more urgently (wait 0); otherwise it takes
	// nothing and says how long until it is worth looking again. Either
	// way c's claim is recorded (renewed) for ClaimTTL.
	Take(ctx context.Context, key string, l Limit, c Claim) (wait time.Duration, err error)
	// Release drops holder's claim on key: it has nothing left to take.
	Release(ctx context.Context, key, holder string) error
}

// claim is a recorded claim: its priority and when it lapses.
type claim struct {
	priority int
	until    time.Time
}

// Memory is the pace of one process.
type Memory struct {
	now    func() time.Time
	mu     sync.Mutex
	tat    map[string]time.Time
	claims map[string]map[string]claim // key → holder → claim
}

// NewMemory returns an in-process pace reading the clock now (nil:
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tat: map[string]time.Time{}, claims: map[string]map[string]claim{}}
}

// Take implements Pace.
func (m *Memory) Take(_ context.Context, key string, l Limit, c Claim) (time.Duration, error) {
	l = l.normal()
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if len(m.tat) > 1024 || len(m.claims) > 1024 {
		// Asks go to many threads' channels; forget the idle ones.
		for k, held := range m.claims {
			for h, cl := range held {
				if !cl.until.After(now) {
					delete(held, h)
				}
			}
			if len(held) == 0 {
				delete(m.claims, k)
			}
		}
		for k, t := range m.tat {
			if t.Before(now) && len(m.claims[k]) == 0 {
				delete(m.tat, k)
			}
		}
	}
	yield := m.claimLocked(key, c, now)
	tat := m.tat[key]
	if tat.Before(now) {
		tat = now
	}
	if allowAt := tat.Add(-time.Duration(l.Burst-1) * l.Interval); allowAt.After(now) {
		return allowAt.Sub(now), nil
	}
	if yield {
		return l.yieldWait(), nil
	}
	m.tat[key] = tat.Add(l.Interval)
	return 0, nil
}

// claimLocked records c on key and reports whether another holder's live
// claim is more urgent. m.mu is held.
func (m *Memory) claimLocked(key string, c Claim, now time.Time) (yield bool) {
	held := m.claims[key]
	for h, cl := range held {
		if !cl.until.After(now) {
			delete(held, h)
		} else if h != c.Holder && cl.priority < c.Priority {
			yield = true
		}
	}
	if c.Holder != "" {
		if held == nil {
			held = map[string]claim{}
			m.claims[key] = held
		}
		held[c.Holder] = claim{priority: c.Priority, until: now.Add(ClaimTTL)}
	}
	if len(held) == 0 {
		delete(m.claims, key)
	}
	return yield
}

// Release implements Pace.
func (m *Memory) Release(_ context.Context, key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held := m.claims[key]; held != nil {
		delete(held, holder)
		if len(held) == 0 {
			delete(m.claims, key)
		}
	}
	return nil
}

// Redis is the pace every replica on one Redis shares. The clock is
// Redis's own (TIME), so replicas whose clocks disagree still share one
// pace. Keys, under askops' hash tag with every other askops key:
//
//	NAMESPACE:{NAMESPACE}:slack:pace:KEY     string: the key's TAT in µs, living only while it is ahead of now
//	NAMESPACE:{NAMESPACE}:slack:claims:KEY   hash: holder → "priority:lapses-at-µs", living ClaimTTL after the last take
type Redis struct {
	client redis.UniversalClient
	prefix string
	claims string
}

// NewRedis returns the pace shared on client under keys (askops'
// namespace, rediskey.Default()).
func NewRedis(client redis.UniversalClient, keys rediskey.Space) *Redis {
	return &Redis{client: client, prefix: keys.Key("slack", "pace", ""), claims: keys.Key("slack", "claims", "")}
}

// takeScript is GCRA on Redis's clock, yielding to more urgent claims.
// KEYS: the key's TAT, its claims. ARGV: interval µs, burst, priority,
// holder ("": no claim), claim TTL µs, yield wait µs. Returns 0 when a
// slot was taken, else the µs until it is worth looking again.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local prio = tonumber(ARGV[3])
local holder = ARGV[4]
local ttl = tonumber(ARGV[5])
local yield = false
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do
  local p, u = string.match(held[i + 1], '^(%d+):(%d+)$')
  if not p or tonumber(u) <= now then
    redis.call('HDEL', KEYS[2], held[i])
  elseif held[i] ~= holder and tonumber(p) < prio then
    yield = true
  end
end
if holder ~= '' then
  redis.call('HSET', KEYS[2], holder, string.format('%d:%d', prio, now + ttl))
  redis.call('PEXPIRE', KEYS[2], math.ceil(ttl / 1000) + 1)
end
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local allow_at = tat - (burst - 1) * interval
if allow_at > now then return allow_at - now end
if yield then return tonumber(ARGV[6]) end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
`)

// Take implements Pace.
func (r *Redis) Take(ctx context.Context, key string, l Limit, c Claim) (time.Duration, error) {
	if key == "" {
		return 0, errors.New("channelpace: no key")
	}
	l = l.normal()
	us, err := takeScript.Run(ctx, r.client, []string{r.prefix + key, r.claims + key},
		l.Interval.Microseconds(), l.Burst, c.Priority, c.Holder, ClaimTTL.Microseconds(), l.yieldWait().Microseconds()).Int64()
	if err != nil {
		return 0, err
	}
	return time.Duration(us) * time.Microsecond, nil
}

// Release implements Pace.
func (r *Redis) Release(ctx context.Context, key, holder string) error {
	if key == "" || holder == "" {
		return nil
	}
	return r.client.HDel(ctx, r.claims+key, holder).Err()
}
