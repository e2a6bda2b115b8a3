package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/subscription"
	"github.com/askops/askops/policy"
)

// Redis layout (NS is Options.Namespace; a channel's keys share its hash tag):
//
//	NS:chatops:{CHANNEL}:sessions  ZSET session -> last run start (unix ms); TTL = session TTL
//	NS:chatops:{CHANNEL}:mode      hash mode, by, at, expires (unix ms); TTL = session TTL
//	NS:chatops:stop                pub/sub channel of stop requests
//	NS:chatops:stop:{REQUEST}      list of the processes' answers to one stop request; 30 s TTL
//	NS:chatops:stop:handlers       ZSET process -> lease end (Redis server time, ms):
//	                               the processes that answer stop requests
//
// Why the handlers ZSET: Stop must know how many answers to wait for. The
// receiver count PUBLISH returns is not it: on a Cluster it counts only the
// subscribers on the node that took the PUBLISH (a message still reaches
// them all), so it said "nobody runs it" for runs on other replicas. Each
// handling process holds a lease in the ZSET instead, renewed while it
// lives; leases are judged by the server's clock, so a replica's skewed (or
// a test's injected) clock cannot hide a live process.
//
// Expiry is judged against the injected clock (the ZSET scores, the mode's
// expires field); the Redis TTLs only collect garbage.

// trackScript adds a session, drops lapsed and surplus ones, and keeps a
// live mode alive. KEYS: sessions, mode; ARGV: session, now ms, ttl ms, max.
var trackScript = redis.NewScript(`
local now, ttl, max = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
local n = redis.call('ZCARD', KEYS[1])
if n > max then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1) end
redis.call('PEXPIRE', KEYS[1], ttl)
local exp = redis.call('HGET', KEYS[2], 'expires')
if exp and tonumber(exp) > now then
  redis.call('HSET', KEYS[2], 'expires', now + ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
`)

// registerScript renews a handler's lease and drops lapsed ones. KEYS:
// handlers; ARGV: process id, lease ms.
var registerScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
`)

// handlersScript counts the processes whose lease is live. KEYS: handlers.
var handlersScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`)

// stopLease is how long a stop handler counts as live without renewing;
// it renews every third of it. A process that died without leaving costs a
// Stop at most StopWait for this long.
const stopLease = 30 * time.Second

// stopAnswerTTL keeps a stop request's answers long enough for any
// requester to read them.
const stopAnswerTTL = 30 * time.Second

// RedisStore shares chat-ops session state between every process on one
// Redis. It does not own the client: Close leaves it open.
type RedisStore struct {
	rdb   redis.UniversalClient
	opts  Options
	local stoppers
	runs  redisRuns // redis_runs.go
	// events are the event ids this process let through while Redis
	// could not say (FirstEvent).
	events seenEvents

	keys        rediskey.Space
	stopChannel string
	handlers    string // the ZSET of live stop handlers
	process     string // this store's member in it

	mu      sync.Mutex
	closed  bool
	stops   *subscription.Subscription // nil until the first HandleStops
	renew   context.CancelFunc         // ends the lease renewal
	renewed chan struct{}              // closed when the renewal returns
}

// NewRedisStore returns a store on client (single, sentinel or cluster;
// ContextTimeoutEnabled should be set so ctx deadlines cut calls short). It
// starts nothing until HandleStops.
func NewRedisStore(client redis.UniversalClient, opts Options) *RedisStore {
	opts = opts.withDefaults()
	keys, err := rediskey.New(opts.Namespace)
	if err != nil {
		// A namespace is a deployment's constant, set only by code and
		// tests: one that would move the hash tag is a bug.
		panic("sessions: " + err.Error())
	}
	ch := keys.Untagged("chatops", "stop")
	return &RedisStore{rdb: client, opts: opts, keys: keys, stopChannel: ch, handlers: keys.Untagged("chatops", "stop", "handlers"), process: recordid.New()}
}

func (r *RedisStore) sessionsKey(channel string) string {
	return r.keys.Tagged("chatops", channel, "sessions")
}

func (r *RedisStore) modeKey(channel string) string {
	return r.keys.Tagged("chatops", channel, "mode")
}

func (r *RedisStore) answersKey(request string) string {
	return r.keys.Tagged("chatops:stop", request)
}

// Track records that a run started session in channel now. It keeps the
// channel's sessions and its mode alive for another TTL.
func (r *RedisStore) Track(ctx context.Context, channel, session string) error {
	if err := checkTrack(channel, session); err != nil {
		return err
	}
	now := r.opts.Now().UnixMilli()
	err := trackScript.Run(ctx, r.rdb, []string{r.sessionsKey(channel), r.modeKey(channel)},
		session, now, r.opts.TTL.Milliseconds(), r.opts.MaxSessions).Err()
	if err != nil {
		return unavailable("track", err, "could not record session %s of channel %s", session, channel)
	}
	return nil
}

// Sessions lists the channel's sessions started within the TTL, newest first.
func (r *RedisStore) Sessions(ctx context.Context, channel string) ([]string, error) {
	if err := checkID("list", "channel", channel); err != nil {
		return nil, err
	}
	since := r.opts.Now().Add(-r.opts.TTL).UnixMilli()
	out, err := r.rdb.ZRevRangeByScore(ctx, r.sessionsKey(channel), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(since, 10), Max: "+inf", Count: int64(r.opts.MaxSessions),
	}).Result()
	if err != nil {
		return nil, unavailable("list", err, "could not list the sessions of channel %s", channel)
	}
	return out, nil
}

// SetMode sets the mode of the channel's sessions (ask or never) for the TTL.
func (r *RedisStore) SetMode(ctx context.Context, channel string, mode policy.Mode, by string) error {
	if err := checkSetMode(channel, mode); err != nil {
		return err
	}
	now := msUTC(r.opts.Now())
	key := r.modeKey(channel)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "mode", string(mode), "by", by, "at", now.UnixMilli(), "expires", now.Add(r.opts.TTL).UnixMilli())
		p.PExpire(ctx, key, r.opts.TTL)
		return nil
	})
	if err != nil {
		return unavailable("set mode", err, "could not set the mode of channel %s", channel)
	}
	return nil
}

// Mode returns the channel's mode; ok is false when none is set (or it
// lapsed with the TTL). A stored value that is not ask or never is an
// error, never a mode.
func (r *RedisStore) Mode(ctx context.Context, channel string) (ModeSetting, bool, error) {
	if err := checkID("mode", "channel", channel); err != nil {
		return ModeSetting{}, false, err
	}
	h, err := r.rdb.HGetAll(ctx, r.modeKey(channel)).Result()
	if err != nil {
		return ModeSetting{}, false, unavailable("mode", err, "could not read the mode of channel %s", channel)
	}
	if len(h) == 0 {
		return ModeSetting{}, false, nil
	}
	expires, err1 := strconv.ParseInt(h["expires"], 10, 64)
	at, err2 := strconv.ParseInt(h["at"], 10, 64)
	m := policy.Mode(h["mode"])
	if err := errors.Join(err1, err2, checkMode("mode", m)); err != nil {
		return ModeSetting{}, false, &Error{Store: "sessions", Code: CodeInternal, Op: "mode", Msg: "the stored mode of channel " + channel + " is corrupt", Err: err}
	}
	if r.opts.Now().UnixMilli() >= expires {
		return ModeSetting{}, false, nil
	}
	return ModeSetting{Mode: m, By: h["by"], At: time.UnixMilli(at).UTC()}, true, nil
}

// stopRequest is what goes over the stop channel.
type stopRequest struct {
	ID    string `json:"id"`
	RunID string `json:"run"`
	By    string `json:"by"`
}

// stopAnswer is one process's answer to a stop request.
type stopAnswer struct {
	Stopped bool  `json:"stopped"`
	At      int64 `json:"at,omitempty"` // unix ms
}

// Stop stops runID wherever it runs. A run of this process is stopped
// directly. Otherwise the request is published to every process that
// handles stops; each answers whether it had the run, and Stop returns when
// one stopped it, when every live handler (see the handlers ZSET) said no,
// or after StopWait. Pub/sub is at-most-once: a process whose connection is
// down at that moment misses the request, and the result says nobody
// stopped the run (ask again).
func (r *RedisStore) Stop(ctx context.Context, runID, by string) (StopResult, error) {
	if err := checkID("stop", "run id", runID); err != nil {
		return StopResult{}, err
	}
	if r.local.stop(runID, by) {
		return StopResult{Stopped: true, Local: true, By: by, At: msUTC(r.opts.Now())}, nil
	}
	req := stopRequest{ID: recordid.New(), RunID: runID, By: by}
	payload, err := json.Marshal(req)
	if err != nil {
		return StopResult{}, err
	}
	handlers, err := handlersScript.Run(ctx, r.rdb, []string{r.handlers}).Int64()
	if err != nil {
		return StopResult{}, unavailable("stop", err, "could not count the processes that handle stops")
	}
	if handlers == 0 {
		return StopResult{}, nil // no process handles stops, so none runs it
	}
	// The count PUBLISH returns is ignored: see the handlers ZSET.
	if err := r.rdb.Publish(ctx, r.stopChannel, payload).Err(); err != nil {
		return StopResult{}, unavailable("stop", err, "could not pass on the stop request for run %s", runID)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.StopWait)
	defer cancel()
	key := r.answersKey(req.ID)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		raw, err := r.rdb.LRange(ctx, key, 0, -1).Result()
		if err == nil {
			for _, s := range raw {
				var a stopAnswer
				if json.Unmarshal([]byte(s), &a) == nil && a.Stopped {
					return StopResult{Stopped: true, By: by, At: time.UnixMilli(a.At).UTC()}, nil
				}
			}
			if int64(len(raw)) >= handlers {
				return StopResult{}, nil // every handler said it does not run it
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return StopResult{}, unavailable("stop", err, "could not read the answers to the stop request for run %s", runID)
			}
			return StopResult{}, nil
		case <-tick.C:
		}
	}
}

// HandleStops makes fn an answer of this process to stop requests from any
// process, until the returned func is called. The first call subscribes to
// the stop channel (confirmed before it returns) and starts the one
// listener of this store, which lives until Close and resubscribes after a
// dropped connection.
func (r *RedisStore) HandleStops(ctx context.Context, fn Stopper) (func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, unavailable("handle stops", nil, "store closed")
	}
	if r.stops == nil {
		sub, err := subscription.Subscribe(ctx, r.rdb, r.stopChannel, subscription.Options{
			Idle:   r.opts.ListenerIdle,
			Logger: r.opts.Logger,
			Name:   "sessions: stop listener",
		}, subscription.Handlers{Message: r.answer})
		if err != nil {
			return nil, unavailable("handle stops", err, "could not subscribe to stop requests")
		}
		// Subscribed first, then counted: a Stop that counts this process
		// also reaches it.
		if err := registerScript.Run(ctx, r.rdb, []string{r.handlers}, r.process, stopLease.Milliseconds()).Err(); err != nil {
			_ = sub.Close()
			return nil, unavailable("handle stops", err, "could not register as a stop handler")
		}
		r.stops = sub
		rctx, cancel := context.WithCancel(context.Background())
		r.renew, r.renewed = cancel, make(chan struct{})
		go r.renewLease(rctx)
	}
	return r.local.add(fn), nil
}

// renewLease keeps this process counted among the stop handlers until
// Close. A failed renewal is retried at the next tick; the lease outlives
// two of them.
func (r *RedisStore) renewLease(ctx context.Context) {
	defer close(r.renewed)
	r.keepRenewing(ctx, stopLease/3, "the stop handler lease", func(ctx context.Context) error {
		return registerScript.Run(ctx, r.rdb, []string{r.handlers}, r.process, stopLease.Milliseconds()).Err()
	})
}

// Close stops the listener and leaves the stop handlers. It does not close
// the client.
func (r *RedisStore) Close() error {
	r.mu.Lock()
	r.closed = true
	stops, renew, renewed := r.stops, r.renew, r.renewed
	r.mu.Unlock()
	r.closeRuns()
	if stops != nil {
		renew()
		<-renewed
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = r.rdb.ZRem(ctx, r.handlers, r.process).Err() // else the lease lapses by itself
		cancel()
		_ = stops.Close()
	}
	return nil
}

// answer stops the requested run if it is ours and says so to the requester.
func (r *RedisStore) answer(ctx context.Context, payload string) {
	var req stopRequest
	if err := json.Unmarshal([]byte(payload), &req); err != nil || checkID("answer", "run id", req.RunID) != nil || req.ID == "" || len(req.ID) > maxID {
		r.opts.Logger.Warn("sessions: malformed stop request ignored")
		return
	}
	a := stopAnswer{Stopped: r.local.stop(req.RunID, req.By)}
	if a.Stopped {
		a.At = r.opts.Now().UnixMilli()
		r.opts.Logger.Info("run stopped on request", "run", req.RunID, "by", req.By)
	}
	b, _ := json.Marshal(a)
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	key := r.answersKey(req.ID)
	_, err := r.rdb.Pipelined(actx, func(p redis.Pipeliner) error {
		p.RPush(actx, key, b)
		p.PExpire(actx, key, stopAnswerTTL)
		return nil
	})
	if err != nil {
		r.opts.Logger.Warn("sessions: could not answer a stop request", "run", req.RunID, "stopped", a.Stopped, "err", err)
	}
}
