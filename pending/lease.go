package pending

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/tick"
)

// An Ask lives only while its asker waits for it. Whoever waits holds the
// Ask (Hold): the store keeps a lease on it that the holder's process
// renews; once nobody holds it (the asker was killed, its connection
// dropped, the process that waited for it died) the lease lapses and
// SweepLeases, on any replica, ends the Ask cancelled with ReasonAskerGone,
// so no approver can approve a call its agent has already settled another
// way.

// ReasonAskerGone is the decision reason of an Ask that ended because its
// asker stopped waiting for it.
const ReasonAskerGone = "the agent stopped waiting"

// ErrAskerGone is the cause a front door cancels a waiting context with
// when its asker went away (a dropped connection): Wait then records
// ReasonAskerGone.
var ErrAskerGone = errors.New(ReasonAskerGone)

// CancelReason is the reason Wait records when ctx ended: ReasonAskerGone
// when the front door said its asker went away, else the context's cause.
// A waiter that sees ctx end before it reaches Wait records the same words,
// so an Ask's reason does not depend on the moment the stop found it.
func CancelReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrAskerGone) {
		return ReasonAskerGone
	}
	return "wait ended: " + cause.Error()
}

// DefaultLeaseTTL is how long an Ask outlives its last holder's last
// renewal (Options.LeaseTTL). Holders renew every third of it, so a
// holder that is merely slow is never taken for gone; with the lease sweep
// every LeaseSweepInterval, an asker that is killed has its Ask cancelled
// within LeaseTTL + LeaseSweepInterval (under 10 s).
const DefaultLeaseTTL = 6 * time.Second

// LeaseSweepInterval is how often serve runs SweepLeases.
const LeaseSweepInterval = 2 * time.Second

// Holds counts, per Ask, the holders in this process: the lease is renewed
// while any holds it. Both stores keep one.
type holds struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts a holder of id and reports whether it is the first.
func (h *holds) add(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = make(map[string]int)
	}
	h.n[id]++
	return h.n[id] == 1
}

// drop uncounts a holder of id and reports whether it was the last.
func (h *holds) drop(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n[id]--
	if h.n[id] > 0 {
		return false
	}
	delete(h.n, id)
	return true
}

func (h *holds) ids() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.n))
	for id := range h.n {
		out = append(out, id)
	}
	return out
}

// Redis: the leases zset (id scored by the lease's end, µs by the server's
// clock, like the deadlines) holds an entry per Ask somebody holds or held
// lately; SweepLeases cancels the pending ones whose score passed, and
// drops the others. It is kept apart from the Ask's record, so renewing a
// lease rewrites no record and costs the record nothing.
func (k redisKeys) leases() string { return k.prefix + "leases" }

// A rolling upgrade: a release from before leases neither starts nor
// renews them, so an Ask whose asker's long polls land on such a replica
// would lapse while its asker still waits ("the agent stopped waiting",
// 6 s after its last poll on a new replica). So only a record this
// release created (its field l) takes a lease: an Ask an older replica
// created lives until its deadline, as that release meant, wherever it is
// polled. An Ask created by a new replica and then polled only on old ones
// still lapses: docs/redis.md (Upgrades) says which replicas to roll first.

// holdScript starts (or renews) the lease of a pending Ask created by a
// release that knows leases.
var holdScript = redis.NewScript(serverNowLua + openLua + `
if not is_open(redis.call('HGET', KEYS[1], 'status')) then return 0 end
if redis.call('HEXISTS', KEYS[1], 'l') == 0 then return 0 end -- an older release's Ask: no lease
redis.call('ZADD', KEYS[2], string.format('%.0f', tonumber(now) + tonumber(ARGV[2])), ARGV[3])
return 1
`)

// renewScript renews the leases of ARGV[3…] that still have one (XX: a
// lease the sweep has ended stays ended).
var renewScript = redis.NewScript(serverNowLua + `
local ends = string.format('%.0f', tonumber(now) + tonumber(ARGV[2]))
local n = 0
for i = 3, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', ends, ARGV[i])
end
return n
`)

// renewBatch bounds the ids of one renewScript call.
const renewBatch = 500

// Hold implements Store: the first holder in this process starts the
// lease at once; the store's renewer renews it while anyone here holds it.
func (s *RedisStore) Hold(ctx context.Context, id string) (release func()) {
	if checkID("hold", id) != nil {
		return func() {}
	}
	if s.holds.add(id) {
		err := holdScript.Run(ctx, s.client, []string{s.keys.ask(id), s.keys.leases()},
			s.scriptNow(), s.opts.LeaseTTL.Microseconds(), id).Err()
		if err != nil {
			// The Ask then lives until its deadline, as before leases.
			s.opts.Logger.Warn("pending: could not start the ask's lease", "ask", id, "err", err)
		}
	}
	var once sync.Once
	return func() { once.Do(func() { s.holds.drop(id) }) }
}

// renew runs until ctx ends: every third of LeaseTTL it renews the leases
// of the Asks held in this process.
func (s *RedisStore) renew(ctx context.Context) {
	defer close(s.renewing)
	tick.Every(ctx, s.opts.LeaseTTL/3, func() {
		_ = s.renewHeld(ctx) // logged, and noted as lease trouble
	})
}

// renewHeld renews, once, the leases of the Asks held in this process,
// and returns the last error (every batch is tried).
func (s *RedisStore) renewHeld(ctx context.Context) error {
	ids := s.holds.ids()
	var last error
	for len(ids) > 0 {
		batch := ids[:min(len(ids), renewBatch)]
		ids = ids[len(batch):]
		args := append([]any{s.scriptNow(), s.opts.LeaseTTL.Microseconds()}, anys(batch)...)
		rctx, cancel := context.WithTimeout(ctx, s.opts.LeaseTTL/3)
		err := renewScript.Run(rctx, s.client, []string{s.keys.leases()}, args...).Err()
		cancel()
		if err != nil {
			s.leaseTrouble()
			last = err
		}
		if err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("pending: could not renew the leases of waiting asks", "asks", len(batch), "err", err)
		}
	}
	return last
}

// leaseTrouble notes that Redis failed this process's lease work now.
func (s *RedisStore) leaseTrouble() { s.leaseTroubleAt.Store(s.opts.Now().UnixNano()) }

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// SweepLeases implements Store. Each cancellation goes through
// decideScript, so of several replicas sweeping at once one wins each Ask.
//
// After Redis was unreachable from this process it sweeps no lease for a
// LeaseTTL: the holders elsewhere could not renew theirs either, and an
// outage must not read as every asker gone at once.
func (s *RedisStore) SweepLeases(ctx context.Context) (out []Ask, err error) {
	defer func() {
		if ErrorCode(err) == CodeUnavailable {
			s.leaseTrouble()
		}
	}()
	now, err := s.serverTime(ctx)
	if err != nil {
		return nil, unavailable("sweep_leases", err)
	}
	if t := s.leaseTroubleAt.Load(); t != 0 && s.opts.Now().Sub(time.Unix(0, t)) < s.opts.LeaseTTL {
		return nil, nil
	}
	max := strconv.FormatInt(now.UnixMicro(), 10)
	for {
		ids, err := s.client.ZRangeByScore(ctx, s.keys.leases(), &redis.ZRangeBy{Min: "-inf", Max: max, Count: sweepBatch}).Result()
		if err != nil {
			return out, unavailable("sweep_leases", err)
		}
		for _, id := range ids {
			a, won, err := s.decide(ctx, "sweep_leases", id, Cancelled, "", ReasonAskerGone)
			switch {
			case err == nil && won:
				out = append(out, a)
			case err != nil && ErrorCode(err) == CodeUnavailable:
				return out, err
			}
			// Ended now, decided before, gone or corrupt: the lease is over.
			if err := s.client.ZRem(ctx, s.keys.leases(), id).Err(); err != nil {
				return out, unavailable("sweep_leases", err)
			}
		}
		if len(ids) < sweepBatch {
			sortOldestFirst(out)
			return out, nil
		}
	}
}

// memoryLease is the memory store's lease of one Ask: held by someone,
// or lapsing at until.
type memoryLease struct {
	held  int
	until time.Time
}

// Hold implements Store.
func (s *MemoryStore) Hold(_ context.Context, id string) (release func()) {
	s.mu.Lock()
	if m, ok := s.asks[id]; !ok || m.ask.Status != StatusPending || m.unleased {
		s.mu.Unlock()
		return func() {}
	}
	if s.leases == nil {
		s.leases = make(map[string]*memoryLease)
	}
	l := s.leases[id]
	if l == nil {
		l = &memoryLease{}
		s.leases[id] = l
	}
	l.held++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			now := s.opts.now()
			s.mu.Lock()
			defer s.mu.Unlock()
			if l.held--; l.held == 0 {
				l.until = now.Add(s.opts.LeaseTTL)
			}
		})
	}
}

// SweepLeases implements Store.
func (s *MemoryStore) SweepLeases(ctx context.Context) ([]Ask, error) {
	now := s.opts.now()
	s.mu.Lock()
	var out []Ask
	for id, l := range s.leases {
		m, ok := s.asks[id]
		switch {
		case !ok || m.ask.Status != StatusPending:
			delete(s.leases, id)
		case l.held == 0 && !now.Before(l.until):
			delete(s.leases, id)
			s.end(m, Cancelled, "", ReasonAskerGone, now)
			out = append(out, m.ask)
		}
	}
	s.mu.Unlock()
	sortOldestFirst(out)
	return out, nil
}
