// Package channelpace hands out a Slack channel's posting slots at the pace
// Slack allows (about one chat.postMessage a second per channel, with
// short bursts), either in this process (Memory) or shared by every
// replica on one Redis (Redis): several replicas pacing on their own post
// at several times Slack's rate and draw 429s.
//
// The pace is GCRA (the generic cell rate algorithm, a token bucket
// without a timer): a channel's theoretical arrival time (TAT) moves one
// Interval ahead with each post taken, and a post may go while the TAT is
// at most Burst-1 intervals ahead of now.
package channelpace

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// Limit is a channel's pace: one post per Interval, Burst of them at once.
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

// Pace hands out posting slots; Memory and Redis satisfy it.
type Pace interface {
	// Take takes a slot to post to channel now, if there is one (wait 0);
	// otherwise it takes nothing and says how long until the next.
	Take(ctx context.Context, channel string, l Limit) (wait time.Duration, err error)
}

// Memory is the pace of one process.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	tat map[string]time.Time
}

// NewMemory returns an in-process pace reading the clock now (nil:
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tat: map[string]time.Time{}}
}

// Take implements Pace.
func (m *Memory) Take(_ context.Context, channel string, l Limit) (time.Duration, error) {
	l = l.normal()
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if len(m.tat) > 1024 {
		// Asks go to many threads' channels; forget the idle ones.
		for ch, t := range m.tat {
			if t.Before(now) {
				delete(m.tat, ch)
			}
		}
	}
	tat := m.tat[channel]
	if tat.Before(now) {
		tat = now
	}
	if allowAt := tat.Add(-time.Duration(l.Burst-1) * l.Interval); allowAt.After(now) {
		return allowAt.Sub(now), nil
	}
	m.tat[channel] = tat.Add(l.Interval)
	return 0, nil
}

// Redis is the pace every replica on one Redis shares. The clock is
// Redis's own (TIME), so replicas whose clocks disagree still share one
// pace. Keys: NAMESPACE:{NAMESPACE}:slack:pace:CHANNEL, a string holding
// the channel's TAT in µs, living only while it is ahead of now; under
// askops' hash tag with every other askops key.
type Redis struct {
	client redis.UniversalClient
	prefix string
}

// NewRedis returns the pace shared on client under keys (askops'
// namespace, rediskey.Default()).
func NewRedis(client redis.UniversalClient, keys rediskey.Space) *Redis {
	return &Redis{client: client, prefix: keys.Key("slack", "pace", "")}
}

// takeScript is GCRA on Redis's clock. KEYS: the channel's TAT.
// ARGV: interval µs, burst. Returns 0 when a slot was taken, else the µs
// until the next one.
var takeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local allow_at = tat - (burst - 1) * interval
if allow_at > now then return allow_at - now end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
return 0
`)

// Take implements Pace.
func (r *Redis) Take(ctx context.Context, channel string, l Limit) (time.Duration, error) {
	if channel == "" {
		return 0, errors.New("channelpace: no channel")
	}
	l = l.normal()
	us, err := takeScript.Run(ctx, r.client, []string{r.prefix + channel}, l.Interval.Microseconds(), l.Burst).Int64()
	if err != nil {
		return 0, err
	}
	return time.Duration(us) * time.Microsecond, nil
}
