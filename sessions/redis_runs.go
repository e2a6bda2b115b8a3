package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/tick"
)

// Redis layout of the runs in progress (NS is Options.Namespace). They sit
// under askops' one hash tag, {NS}, like the Asks (pending/redis.go):
//
//	NS:{NS}:runs:USER          hash run id -> the Run (JSON)
//	NS:{NS}:runs:USER:leases   zset run id -> lease end (unix ms, injected clock)
//
// A run is listed while its lease has not ended. Lapsed runs are dropped
// by the next RecordRun of that user; both keys expire a lease after the
// last record or renewal (garbage collection once every process is gone).

// recordRunScript drops the user's lapsed runs and records one, unless the
// user has MaxRunsPerUser already. KEYS: runs, leases; ARGV: id, run JSON,
// now ms, lease end ms, max, lease ms. Returns 1, or 0 when full.
var recordRunScript = redis.NewScript(`
local now = tonumber(ARGV[3])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, id in ipairs(gone) do redis.call('HDEL', KEYS[1], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
`)

// renewRunScript extends a recorded run's lease. KEYS: runs, leases; ARGV:
// id, lease end ms, lease ms. Returns 0 when the run is not recorded (a
// Redis restart, a flush), so the owner records it again.
var renewRunScript = redis.NewScript(`
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// listRunsScript returns the user's runs whose lease is live. KEYS: runs,
// leases; ARGV: now ms.
var listRunsScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[1], unpack(ids))
`)

// redisRuns is this process's share of the record: its own runs, whose
// leases it renews.
type redisRuns struct {
	mu      sync.Mutex
	closed  bool
	mine    map[string]Run // run id -> run, this process's
	stop    context.CancelFunc
	stopped chan struct{} // closed when the renewal returns
}

func (r *RedisStore) runsKeys(user string) []string {
	k := r.keys.Key("runs", user)
	return []string{k, k + ":leases"}
}

// RecordRun records run as in progress until the returned end is called
// (end is idempotent and takes a few seconds at most). While it runs, this
// store renews its lease every RunLease/3; when this process dies, the run
// drops off every replica's list once the lease lapses. More than
// MaxRunsPerUser runs of one user are refused.
func (r *RedisStore) RecordRun(ctx context.Context, run Run) (end func(), err error) {
	run, err = run.check("record run")
	if err != nil {
		return nil, err
	}
	r.runs.mu.Lock()
	if r.runs.closed {
		r.runs.mu.Unlock()
		return nil, unavailable("record run", nil, "store closed")
	}
	if r.runs.mine == nil {
		r.runs.mine = map[string]Run{}
		rctx, cancel := context.WithCancel(context.Background())
		r.runs.stop, r.runs.stopped = cancel, make(chan struct{})
		go r.renewRuns(rctx)
	}
	r.runs.mine[run.ID] = run
	r.runs.mu.Unlock()
	// The funcs below keep only the run's id and starter, not a second
	// copy of the run, for as long as it runs.
	id, by := run.ID, run.StartedBy
	forget := func() {
		r.runs.mu.Lock()
		delete(r.runs.mine, id)
		r.runs.mu.Unlock()
	}
	if err := r.putRun(ctx, run); err != nil {
		forget()
		return nil, err
	}
	return sync.OnceFunc(func() {
		forget()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		keys := r.runsKeys(by)
		_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, keys[0], id)
			p.ZRem(ctx, keys[1], id)
			return nil
		})
		if err != nil { // it drops off when its lease lapses
			r.opts.Logger.Warn("sessions: could not end the record of a run", "run", id, "err", err)
		}
	}), nil
}

func (r *RedisStore) putRun(ctx context.Context, run Run) error {
	b, err := json.Marshal(run)
	if err != nil {
		return err
	}
	now := r.opts.Now().UnixMilli()
	lease := r.opts.RunLease.Milliseconds()
	ok, err := recordRunScript.Run(ctx, r.rdb, r.runsKeys(run.StartedBy), run.ID, b, now, now+lease, r.opts.MaxRunsPerUser, lease).Int()
	if err != nil {
		return unavailable("record run", err, "could not record run %s", run.ID)
	}
	if ok == 0 {
		return invalid("record run", "user %s already has %d runs recorded", run.StartedBy, r.opts.MaxRunsPerUser)
	}
	return nil
}

// RenewRuns extends the lease of every run this store recorded and has not
// ended, in one round trip (one write per run); a run Redis lost is
// recorded again. The store calls it every RunLease/3.
func (r *RedisStore) RenewRuns(ctx context.Context) error {
	r.runs.mu.Lock()
	mine := make([]Run, 0, len(r.runs.mine))
	for _, run := range r.runs.mine {
		mine = append(mine, run)
	}
	r.runs.mu.Unlock()
	if len(mine) == 0 {
		return nil
	}
	end := r.opts.Now().UnixMilli() + r.opts.RunLease.Milliseconds()
	cmds := make([]*redis.Cmd, len(mine))
	// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, run := range mine {
			cmds[i] = renewRunScript.Eval(ctx, p, r.runsKeys(run.StartedBy), run.ID, end, r.opts.RunLease.Milliseconds())
		}
		return nil
	})
	if err != nil {
		return unavailable("renew runs", err, "could not renew the leases of %d runs", len(mine))
	}
	var errs []error
	for i, c := range cmds {
		if n, _ := c.Int(); n == 0 {
			r.runs.mu.Lock()
			_, live := r.runs.mine[mine[i].ID]
			r.runs.mu.Unlock()
			if live { // not ended meanwhile
				errs = append(errs, r.putRun(ctx, mine[i]))
			}
		}
	}
	return errors.Join(errs...)
}

// renewRuns calls RenewRuns every RunLease/3 until Close; a failure is
// retried at the next tick, and the lease outlives two of them.
func (r *RedisStore) renewRuns(ctx context.Context) {
	defer close(r.runs.stopped)
	r.keepRenewing(ctx, r.opts.RunLease/3, "the leases of this process's runs", r.RenewRuns)
}

// keepRenewing calls f every period until ctx ends, each call bounded to 5 s; a
// failure is logged as "could not renew what" and retried at the next tick
// (every lease renewed this way outlives two ticks).
func (r *RedisStore) keepRenewing(ctx context.Context, period time.Duration, what string, f func(context.Context) error) {
	tick.Every(ctx, period, func() {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f(rctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn("sessions: could not renew "+what, "err", err)
		}
	})
}

// closeRuns stops the renewal; the runs' records lapse with their leases
// unless their ends remove them first.
func (r *RedisStore) closeRuns() {
	r.runs.mu.Lock()
	r.runs.closed = true
	stop, stopped := r.runs.stop, r.runs.stopped
	r.runs.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// RunsOf lists each user's runs in progress (lease live), newest first, in
// one round trip. Users with none are absent from the map.
func (r *RedisStore) RunsOf(ctx context.Context, users []string) (map[string][]Run, error) {
	for _, u := range users {
		if err := checkID("runs of", "user", u); err != nil {
			return nil, err
		}
	}
	out := map[string][]Run{}
	if len(users) == 0 {
		return out, nil
	}
	now := r.opts.Now().UnixMilli()
	cmds := make([]*redis.Cmd, len(users))
	// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, u := range users {
			cmds[i] = listRunsScript.Eval(ctx, p, r.runsKeys(u), now)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable("runs of", err, "could not list the runs of %d users", len(users))
	}
	for i, c := range cmds {
		vals, err := c.Slice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, unavailable("runs of", err, "could not list the runs of %s", users[i])
		}
		for _, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue // ended between the two reads of the script: never, but harmless
			}
			var run Run
			if err := json.Unmarshal([]byte(s), &run); err != nil {
				return nil, &Error{Store: "sessions", Code: CodeInternal, Op: "runs of", Msg: "a stored run of " + users[i] + " is corrupt", Err: err}
			}
			out[users[i]] = append(out[users[i]], run)
		}
		sortRuns(out[users[i]])
	}
	return out, nil
}
