package pending

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/subscription"
	hide "github.com/askops/askops/redact"
)

// Redis layout.
//
// Every key carries the same hash tag, {<namespace>} (default {askops}):
//
//	askops:{askops}:ask:<id>     hash: the Ask record; TTL = deadline + Retention (GC only);
//	                             quorum Asks add quorum and voters, time-boxed grants grant_ttl (see votes.go)
//	askops:{askops}:deadlines    zset: id scored by deadline (µs); only pending Asks
//	askops:{askops}:leases       zset: id scored by the end of its lease (µs): Asks whose asker waits (lease.go)
//	askops:{askops}:audit        stream: asked / decided events, XADD MAXLEN ~ AuditMaxLen
//	askops:{askops}:audit:head   hash: seq, digest and id of the newest audit event (see auditchain.go)
//	askops:{askops}:decided      pub/sub channel: every Ask that just ended (record, then id: announce.go)
//	askops:{askops}:fence        counter written before each WAIT (see durable)
//
// Why one tag for everything rather than a tag per Ask (askops:ask:{ID}):
// the decide script must, in one atomic step, flip the record, drop the id
// from the deadline index and append the one "decided" audit event. In a
// Redis Cluster a script may only touch keys of one slot, and the index and
// the audit stream are shared by all Asks, so they can never share a per-Ask
// slot. Splitting the script (record in Lua, index and audit by later
// commands) would make "exactly one decided event per Ask" depend on the
// winner surviving between two commands. With one tag, cluster mode works
// unchanged and every invariant is one script; the price is that all askops
// keys live on one shard. Asks arrive at human speed (a handful per second,
// a few KB each), so one shard is far from a limit.

// RedisStore is the Store shared by every replica through one Redis (single
// node, Sentinel or Cluster: any redis.UniversalClient).
//
// Each RedisStore runs one listener: a single pub/sub connection on which
// every decision is announced, dispatched by id to the Waits of this process.
// 10,000 waiting Asks cost 10,000 map entries, not connections. One reader
// goroutine reads the records for all of them (see waiters).
type RedisStore struct {
	client redis.UniversalClient
	opts   Options
	keys   redisKeys

	waiters  *waiters
	requests requestCodec

	closeOnce sync.Once
	closed    chan struct{}
	stop      context.CancelFunc // the reader's and the replica watch's
	reading   chan struct{}      // closed when the reader goroutine returns
	watching  chan struct{}      // closed when watchReplicas returns
	catching  chan struct{}      // closed when catchUp returns
	bg        context.Context    // the reader's, ended by Close
	// catchBack asks catchUp to read the trail again from catchUpBack
	// before where it is (a failover, a resubscription).
	catchBack atomic.Bool

	// later runs retryLater's follow-ups (confirmLater, endLater); Close
	// waits for them.
	laterMu     sync.Mutex
	laterClosed bool
	later       sync.WaitGroup
	renewing    chan struct{} // closed when the lease renewer returns

	// The announcement key (Options.AnnounceKey) as the scripts and the
	// listener use it: see announceOn and signedRecord.
	announceArg    string
	announceHexKey []byte

	holds holds // the Asks waited for in this process, whose leases it renews (lease.go)
	// leaseTroubleAt is when Redis last failed a renewal or a lease sweep
	// (UnixNano by opts.Now; 0: never): SweepLeases waits a LeaseTTL after it.
	leaseTroubleAt atomic.Int64

	decisions *subscription.Subscription // the listener

	// replicas is how many replicas must hold a decision (see durable.go).
	replicas replicaAcks
	waits    replicaWaits // the shared WAITs (waitshare.go)
}

var _ Store = (*RedisStore)(nil)

type redisKeys struct {
	prefix    string // "askops:{askops}:"
	deadlines string
	audit     string
	auditHead string // the chain's head (auditchain.go)
	decided   string // pub/sub channel
	fence     string
}

func newRedisKeys(space rediskey.Space) redisKeys {
	p := space.Prefix()
	return redisKeys{prefix: p, deadlines: p + "deadlines", audit: p + "audit", auditHead: p + "audit:head", decided: p + "decided", fence: p + "fence"}
}

func (k redisKeys) ask(id string) string { return k.prefix + "ask:" + id }

// NewRedisStore subscribes the listener (and waits for Redis to confirm the
// subscription, so no Wait relies on a subscription that does not exist yet)
// and returns the store. The caller keeps ownership of client; Close does not
// close it.
func NewRedisStore(ctx context.Context, client redis.UniversalClient, opts Options) (*RedisStore, error) {
	opts = opts.withDefaults()
	space, err := rediskey.New(opts.Namespace)
	if err != nil {
		return nil, &Error{Store: "pending", Code: CodeInvalid, Op: "open", Msg: err.Error()}
	}
	s := &RedisStore{
		client:   client,
		opts:     opts,
		keys:     newRedisKeys(space),
		waiters:  newWaiters(),
		closed:   make(chan struct{}),
		reading:  make(chan struct{}),
		watching: make(chan struct{}),
		catching: make(chan struct{}),
		renewing: make(chan struct{}),
	}
	s.announceArg = announceOn(s.keys.decided, opts.AnnounceKey)
	if len(opts.AnnounceKey) > 0 {
		s.announceHexKey = []byte(hex.EncodeToString(opts.AnnounceKey))
	}
	s.decisions, err = subscription.Subscribe(ctx, client, s.keys.decided, subscription.Options{
		Idle:   opts.ListenerIdle,
		Logger: opts.Logger,
		Name:   "pending: decision listener",
		// Waiters are waking on this channel: a redial usually works at
		// once, so try it before the first backoff step.
		RetryAtOnce: true,
	}, subscription.Handlers{
		// Each announcement is an Ask that just ended (announce.go).
		Message: func(_ context.Context, payload string) { s.announced(payload) },
		Resubscribed: func() {
			n := s.waiters.rereadAll()
			s.catchBack.Store(true)
			opts.Logger.Info("pending: waiters re-read their asks after a resubscription", "waiters", n)
		},
	})
	if err != nil {
		return nil, &Error{Store: "pending", Code: CodeUnavailable, Op: "open", Msg: "subscribe to decisions", Err: err}
	}
	if err := s.openReplicaAcks(ctx); err != nil {
		_ = s.decisions.Close()
		return nil, &Error{Store: "pending", Code: CodeUnavailable, Op: "open", Msg: "count the master's replicas", Err: err}
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		// A Cluster client learns the command table (COMMAND, from a
		// random node) on its first keyed command and until then asks again
		// on each. Learned now, while the cluster answers, a read with a
		// short deadline never waits on a frozen replica for it.
		_ = cc.Exists(ctx, s.keys.fence).Err()
	}
	rctx, stop := context.WithCancel(context.Background())
	s.stop, s.bg = stop, rctx
	go s.read(rctx)
	go s.watchReplicas(rctx)
	go s.catchUp(rctx)
	go s.renew(rctx)
	return s, nil
}

// serverNowLua sets now to the time the script runs by the Redis server's
// clock, in µs, as a string (ARGV[1] when a test drives the clock). A
// Lua number holds µs since the epoch exactly (< 2^53); '%.0f' writes it
// without an exponent.
const serverNowLua = `
local now = ARGV[1]
if now == '' then
  local t = redis.call('TIME')
  now = t[1] .. string.format('%06d', tonumber(t[2]))
end
`

// createScript records a pending Ask stamped by the server's clock: the
// record, its deadline in the index, and the "asked" audit event. Returns
// the creation time (µs). By the server's clock because every replica
// judges the deadline by it: an Ask created on a replica whose clock is
// slow must not carry a deadline that is already near.
var createScript = redis.NewScript(serverNowLua + auditAppendLua + `
local key, deadlines, audit, head = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, ttl, keep, qfield, q, run, tool, maxlen, by, reason, what =
  ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12]
local deadline = string.format('%.0f', tonumber(now) + tonumber(ttl))
local status = 'pending'
if tonumber(ARGV[13]) > 1 then status = ARGV[14] end -- the format gate (record.go)
redis.call('HSET', key, qfield, q, 'run_id', run, 'tool', tool, 'deadline', deadline, 'status', status, 'u', by)
if ARGV[15] == '1' then redis.call('HSET', key, 'l', '1') end -- leased (lease.go); an unleased Ask lives to its deadline
if tonumber(ARGV[13]) > 1 then redis.call('HSET', key, 'quorum', ARGV[13]) end -- see voteScript
redis.call('PEXPIRE', key, keep)
redis.call('ZADD', deadlines, deadline, id)
audit_append(audit, head, maxlen, now, 'asked', id, run, tool, '', by, reason, what)
return now
`)

// scriptNow is the now argument of the scripts: empty, so they read the
// server's TIME, unless a test drives the clock.
func (s *RedisStore) scriptNow() string {
	if s.opts.serverNow == nil {
		return ""
	}
	return micros(s.opts.serverNow().UTC().Truncate(time.Microsecond))
}

// Ping checks that the server holding askops' keys (on a Cluster the master
// of their slot, which a plain PING to any node would not reach) takes a
// write: a server at its memory limit under noeviction, or a replica left
// read-only, answers reads while every decision fails, and readiness must
// say so. The write is to the fence key, which only WAIT bookkeeping uses.
func (s *RedisStore) Ping(ctx context.Context) error {
	err := s.client.Incr(ctx, s.keys.fence).Err()
	if isOOM(err) {
		return fmt.Errorf("redis is out of memory (maxmemory reached under noeviction): %w", err)
	}
	return err
}

// Create implements Store.
func (s *RedisStore) Create(ctx context.Context, req Request, ttl time.Duration) (Ask, error) {
	if err := checkCreate(req, ttl); err != nil {
		return Ask{}, err
	}
	a := newAsk(atRest(req), s.opts.now(), ttl) // times provisional: the server stamps them
	qField, q, err := s.requests.encode(a)
	if err != nil {
		return Ask{}, &Error{Store: "pending", Code: CodeInternal, Op: "create", Msg: "encode request", Err: err}
	}
	ttlMicros := a.Deadline.Sub(a.CreatedAt).Microseconds()
	now, err := createScript.Run(ctx, s.client,
		[]string{s.keys.ask(a.ID), s.keys.deadlines, s.keys.audit, s.keys.auditHead},
		s.scriptNow(), a.ID, ttlMicros, (ttl + s.opts.retention(req)).Milliseconds(), qField, q,
		a.RunID, a.Tool, s.opts.AuditMaxLen, a.StartedBy, a.Reason, cutDetail(a.Summary, maxDetail), a.Approvals, statusGated,
		leaseFlag(req),
	).Text()
	if err != nil {
		return Ask{}, unavailable("create", err)
	}
	a.CreatedAt = parseMicros(now)
	if a.CreatedAt.IsZero() {
		return Ask{}, &Error{Store: "pending", Code: CodeInternal, Op: "create", Msg: fmt.Sprintf("create script returned %.40q", now)}
	}
	a.Deadline = a.CreatedAt.Add(time.Duration(ttlMicros) * time.Microsecond)
	return a, nil
}

// Get implements Store.
func (s *RedisStore) Get(ctx context.Context, id string) (Ask, error) {
	if err := checkID("get", id); err != nil {
		return Ask{}, err
	}
	return s.get(ctx, "get", id)
}

func (s *RedisStore) get(ctx context.Context, op, id string) (Ask, error) {
	h, err := s.client.HGetAll(ctx, s.keys.ask(id)).Result()
	if err != nil {
		return Ask{}, unavailable(op, err)
	}
	if len(h) == 0 {
		return Ask{}, notFound(op, id)
	}
	a, err := s.requests.decodeAsk(op, id, h)
	if err != nil || a.Status == StatusPending || !s.replicas.on() {
		return a, err
	}
	// An ended Ask is shown as ended only once the replicas hold its end:
	// an API client polling GET /v1/asks/{id} acts on what it reads, as a
	// waiter does (confirmEnded).
	r := s.confirmEnded(ctx, op, []string{id})[id]
	switch {
	case r.end != nil:
		return r.end.ask, nil
	case r.ask != nil:
		return *r.ask, nil // taken back by a failover: pending again
	}
	return Ask{}, r.err
}

// decideScript is the only way an Ask leaves "pending" (with voteScript,
// its twin for a person's ballot, which adds the quorum: see votes.go):
// compare status, then
// set the decision, drop the deadline index entry, append the one "decided"
// audit event and announce the id — all or nothing (with replicas to wait
// for, the announcement waits for them: see decide). A person's decision that
// arrives at or after the deadline ends the Ask as expired instead ("late").
// An expiry before the deadline by the server's clock is refused ("early",
// with the µs left): a replica whose clock runs fast must not end an Ask
// early.
// Returns {result, HGETALL of the record}; result is won | late | lost |
// missing, or {early, µs left}.
var decideScript = redis.NewScript(auditAppendLua + announceLua + settleLua + `
local key, deadlines, audit, head = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, outcome, by, reason, now, channel, maxlen = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
now = server_now(now)
local over = already_over(key, deadlines, id)
if over then return over end
local deadline = tonumber(redis.call('HGET', key, 'deadline'))
if outcome == 'expired' and tonumber(now) < deadline then
  return {'early', string.format('%.0f', deadline - tonumber(now))}
end
local result = 'won'
if (outcome == 'approved' or outcome == 'approved_session' or outcome == 'denied')
   and tonumber(now) >= deadline then
  outcome, by, reason, result = 'expired', '', ARGV[8], 'late'
elseif outcome == 'expired' and by == '' then
  reason = redis.call('HGET', key, 'expiry') or reason -- what the follow-ups tried (schedule.go)
end
redis.call('HSET', key, 'status', outcome, 'decided_by', by, 'decided_at', now, 'decision_reason', reason)
redis.call('ZREM', deadlines, id)
local rec = redis.call('HMGET', key, 'run_id', 'tool')
audit_append(audit, head, maxlen, now, 'decided', id, rec[1] or '', rec[2] or '', outcome, by, reason, '')
local record = redis.call('HGETALL', key)
announce(channel, id, record)
return {result, record}
`)

// checkDecide is what both stores' Decide check before anything else: a
// well-formed id and an outcome a decision can record, so the memory
// store used in tests refuses exactly what Redis does.
func checkDecide(id string, outcome Outcome) error {
	if err := checkID("decide", id); err != nil {
		return err
	}
	return checkOutcome("decide", outcome)
}

// Decide implements Store.
func (s *RedisStore) Decide(ctx context.Context, id string, outcome Outcome, by, reason string) (Ask, error) {
	if err := checkDecide(id, outcome); err != nil {
		return Ask{}, err
	}
	if humanDecision(outcome) {
		a, _, err := s.cast(ctx, "decide", id, Ballot{Outcome: outcome, By: by, Reason: reason}, Binding{})
		return a, err
	}
	// A deny reason typed by a person rests in Redis too (see atRest).
	a, won, err := s.decide(ctx, "decide", id, outcome, by, hide.Secrets(reason))
	if err != nil {
		return Ask{}, err
	}
	if !won {
		return Ask{}, conflict("decide", a)
	}
	return a, nil
}

// decide runs decideScript and reports whether this call ended the Ask with
// the outcome asked for.
//
// With replicas to wait for (see durable.go), nothing is confirmed before it is
// on them: the script runs, a fence write and WAIT follow on the same
// connection, and only then is the id announced (the script does not
// announce it). A decision a failover could still take back so never wakes
// a waiter, and Decide does not report it made. The fence write is there
// because WAIT covers what its connection wrote, and a losing decide (which
// reads the winner's record) may write nothing. Why WAIT and not the
// server's min-replicas-to-write: that only refuses writes while too few
// replicas are connected; a write it accepts is still copied to them
// asynchronously, and a failover in that moment loses it (measured: see
// BenchmarkSentinelFailoverDecides).
func (s *RedisStore) decide(ctx context.Context, op, id string, outcome Outcome, by, reason string) (Ask, bool, error) {
	a, result, err := s.settle(ctx, op, id, decideScript, func(channel string) []any {
		return []any{id, string(outcome), by, reason, s.scriptNow(), channel, s.opts.AuditMaxLen, reasonLate}
	})
	return a, result == "won", err
}

// settle runs script, a decision script over the Ask's record, the
// deadline index and the audit stream and head (decideScript, or
// voteScript), and returns the record as it left it with the script's
// result word. args builds the script's arguments from the channel it is
// to announce on ("" when the announcement waits for replicas, see decide).
func (s *RedisStore) settle(ctx context.Context, op, id string, script *redis.Script, args func(channel string) []any) (Ask, string, error) {
	keys := []string{s.keys.ask(id), s.keys.deadlines, s.keys.audit, s.keys.auditHead}
	waitReplicas := s.replicas.on() // once: a lone server's count may change meanwhile
	channel := s.announceArg
	if waitReplicas {
		channel = "" // announced below, once durable
	}
	argv := args(channel)
	var res []any
	var err error
	if !waitReplicas {
		res, err = script.Run(ctx, s.client, keys, argv...).Slice()
	} else {
		res, err = s.durable(ctx, func(p redis.Scripter) *redis.Cmd { return script.Eval(ctx, p, keys, argv...) })
	}
	if NotDurable(err) {
		nerr := s.notDurable(op, id, res, err)
		if a, ok := nerr.(*Error).Record.(*Ask); !ok || a.Status != StatusPending {
			s.confirmLater(id) // ended, or unknown: the connection broke after the script was sent
		}
		return Ask{}, "", nerr
	}
	if err != nil {
		return Ask{}, "", unavailable(op, err)
	}
	result, _ := res[0].(string)
	switch result {
	case "missing":
		return Ask{}, result, notFound(op, id)
	case "unbound": // CastOn's binding did not hold; nothing was written
		return Ask{}, result, nil
	case "early":
		left, _ := res[1].(string)
		n, _ := strconv.ParseInt(left, 10, 64)
		return Ask{}, result, early(op, id, time.Duration(n)*time.Microsecond)
	}
	if len(res) != 2 {
		return Ask{}, result, &Error{Store: "pending", Code: CodeInternal, Op: op, Msg: fmt.Sprintf("decide script returned %d values", len(res))}
	}
	h, err := flatToMap(res[1])
	if err != nil {
		return Ask{}, result, &Error{Store: "pending", Code: CodeInternal, Op: op, Msg: "decide script reply", Err: err}
	}
	a, err := s.requests.decodeAsk(op, id, h)
	if err != nil {
		return Ask{}, result, err
	}
	if !waitReplicas && a.Status != StatusPending {
		// A waiter in this process (the replica that took the click is the
		// one that waits: every single-replica deployment) ends on the
		// reply, which holds the very record the script announced, instead
		// of after its announcement is read, parsed and decoded again on
		// the listener's goroutine.
		s.waiters.deliver(id, &readResult{end: &waitEnd{ask: a}})
	}
	if waitReplicas && a.Status != StatusPending {
		// Durable now (WAIT confirmed what this master holds, the winner's
		// record included): wake the waiters, this process's at once. A
		// "lost" result is announced too: the winner may be an earlier
		// attempt whose WAIT fell short, so nobody announced it yet.
		// announce publishes on a context of its own and retries (ctx may
		// be spent by WAIT). A counted vote leaves the Ask pending: nobody
		// to wake.
		s.waiters.deliver(id, &readResult{end: &waitEnd{ask: a}})
		s.announce(id, h)
	}
	return a, result, nil
}

// notDurable is settle's answer when the script ran but WAIT fell short:
// unavailable, so every edge treats it as not done (a tool does not run
// on it), worded so the decider knows the decision may still stand, with
// the record as the script left it when it can be read. Nobody is woken:
// the waiter's own read confirms it, or finds it taken back.
func (s *RedisStore) notDurable(op, id string, res []any, err error) error {
	e := &Error{Store: "pending", Code: CodeUnavailable, Op: op, Msg: ErrNotDurable.Error(), Err: err}
	if len(res) == 2 {
		if h, ferr := flatToMap(res[1]); ferr == nil && len(h) > 0 {
			if a, derr := s.requests.decodeAsk(op, id, h); derr == nil {
				e.Record = &a
			}
		}
	}
	s.opts.Logger.Warn("pending: a decision is recorded but not yet on the replicas; not confirmed", "ask", id, "op", op, "err", err)
	return e
}

// Wait implements Store: register as a waiter (which queues the first read
// of the record for the reader), then wait for reads, the Ask's own
// deadline, or ctx.
func (s *RedisStore) Wait(ctx context.Context, id string) (Ask, error) {
	end := s.await(ctx, id, nil)
	return end.ask, end.err
}

// WaitFor implements Store.
func (s *RedisStore) WaitFor(ctx context.Context, a Ask) (Ask, error) {
	if a.Status != StatusPending || a.Deadline.IsZero() {
		return s.Wait(ctx, a.ID)
	}
	end := s.await(ctx, a.ID, &a)
	return end.ask, end.err
}

// waitEnd is what Wait returns.
type waitEnd struct {
	ask Ask
	err error
	// left > 0: the expiry came before the deadline by the server's clock
	// (this process's clock runs fast); wait that much longer.
	left time.Duration
}

// await blocks until the Ask ends. It runs on the caller's goroutine and
// makes no deep call while the Ask is pending: no Redis command, no JSON, no
// logging (see waiters for why). Those run on the reader and on finish's
// helper; await only registers, arms timers and selects, and its frame
// holds only pointers, channels and times, so waiting adds little to the
// depth of the caller's stack and never grows it for a Redis round trip.
//
// known, if not nil, is the Ask as its caller holds it, pending: it stands
// for the first read.
func (s *RedisStore) await(ctx context.Context, id string, known *Ask) *waitEnd {
	if err := checkID("wait", id); err != nil {
		return unavailableEnd(id, nil, err)
	}
	// Registering queues the first read: a decision made before it is in
	// that read, one announced after it queues another (see waiters.add).
	w := s.waiters.add(id)
	defer s.waiters.remove(w)

	// A blip right after Create should not fail an Ask whose message is
	// already posted: the first read is retried briefly. (The deadline is
	// not known before it succeeds, so the budget is finishBudget: with
	// replicas, a read of an ended record waits for them too.)
	giveUp := time.Now().Add(s.finishBudget())
	last := known // the pending record as last read; nil before the first read
	var deadline, retry <-chan time.Time
	if last != nil {
		deadline = s.opts.After(last.Deadline.Sub(s.opts.Now()))
	}
	backoff := 50 * time.Millisecond
	for {
		why, r := s.block(ctx.Done(), w.reads, retry, deadline)
		switch why {
		case wokenDeadline:
			end := s.finish(ctx, id, last, Expired)
			if end.left > 0 {
				deadline = s.opts.After(end.left)
				continue
			}
			return end
		case wokenDone:
			return s.finish(ctx, id, last, Cancelled)
		case wokenClosed:
			return unavailableEnd(id, last, &Error{Store: "pending", Code: CodeUnavailable, Op: "wait", Msg: "store closed"})
		case wokenRetry:
			retry = nil
			s.waiters.reread(id)
			continue
		}
		if r.unconfirmed != nil && last == nil {
			// Decided, but not yet durable: the Ask exists; wait on
			// (its decider's store announces it once durable) with its
			// deadline armed, re-reading meanwhile.
			last = r.unconfirmed
			deadline = s.opts.After(last.Deadline.Sub(s.opts.Now()))
		}
		switch {
		case r.end != nil:
			return r.end
		case r.ask != nil && last == nil:
			last = r.ask
			// Armed by this process's clock; the server's judges (an
			// early expiry is refused and the timer re-armed).
			deadline = s.opts.After(last.Deadline.Sub(s.opts.Now()))
		case r.ask != nil:
			last = r.ask // a stray or repeated read (e.g. after a resubscribe): keep waiting
		case ErrorCode(r.err) != CodeUnavailable:
			return unavailableEnd(id, last, r.err) // not found, or corrupt
		case last == nil && !time.Now().Before(giveUp):
			return unavailableEnd(id, nil, r.err)
		case last == nil:
			retry = time.After(50 * time.Millisecond)
		case r.unconfirmed != nil:
			// Decided, not yet durable: look again soon, so the waiter
			// wakes within moments of the replicas holding it even if
			// nobody announces it.
			retry = time.After(unconfirmedRetry)
		default:
			// The store is unreachable (the reader has logged it). The
			// deadline timer still runs, so this cannot outlive the Ask;
			// retry the read meanwhile.
			retry = time.After(backoff)
			backoff = min(2*backoff, time.Second)
		}
	}
}

// unconfirmedRetry is how soon a waiter reads again a decision it found
// not yet durable (and how often confirmLater looks at one): the bound on
// how late it wakes once the replicas hold it.
const unconfirmedRetry = 250 * time.Millisecond

// woken says why block returned.
type woken int

const (
	wokenRead     woken = iota // the reader delivered a read of the record
	wokenRetry                 // time to ask for another read after a failed one
	wokenDeadline              // the Ask's deadline passed
	wokenDone                  // the caller's context ended
	wokenClosed                // the store was closed
)

// block is where a waiting goroutine spends its time, in a frame of a few
// words.
//
//go:noinline
func (s *RedisStore) block(done <-chan struct{}, reads <-chan *readResult, retry, deadline <-chan time.Time) (woken, *readResult) {
	select {
	case r := <-reads:
		return wokenRead, r
	case <-retry:
		return wokenRetry, nil
	case <-deadline:
		return wokenDeadline, nil
	case <-done:
		return wokenDone, nil
	case <-s.closed:
		return wokenClosed, nil
	}
}

// unavailableEnd fails closed, keeping what is known of the Ask. Not
// inlined, so the Ask values it handles stay out of await's frame.
//
//go:noinline
func unavailableEnd(id string, last *Ask, err error) *waitEnd {
	var a Ask
	if last != nil {
		a = *last
	}
	return &waitEnd{ask: terminalUnavailable(a, id), err: err}
}

// finish records the waiter's own ending (Expired at the deadline, or
// Cancelled because ctx ended) and returns the result. The compare-and-set
// runs on a helper goroutine that lives only for it, so the waiter's stack
// never grows for a go-redis call (see waiters); the waiter blocks until the
// helper is done, which finishOnce bounds by FinishTimeout.
//
//go:noinline
func (s *RedisStore) finish(ctx context.Context, id string, last *Ask, outcome Outcome) *waitEnd {
	done := make(chan *waitEnd, 1)
	go func() { done <- s.finishOnce(ctx, id, last, outcome) }()
	return <-done
}

// finishOnce runs decideScript with a fresh context bounded by
// FinishTimeout (ctx may be over). If a decision won first, that decision
// is the result; if the store cannot be reached, the result is Unavailable.
func (s *RedisStore) finishOnce(ctx context.Context, id string, last *Ask, outcome Outcome) *waitEnd {
	reason := reasonDeadline
	if outcome == Cancelled {
		reason = CancelReason(ctx)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.finishBudget())
	defer cancel()
	for {
		a, _, err := s.decide(fctx, "wait", id, outcome, "", reason)
		if err == nil {
			return &waitEnd{ask: a}
		}
		if left, ok := earlyLeft(err); ok {
			return &waitEnd{left: max(left, time.Millisecond)}
		}
		if ErrorCode(err) != CodeUnavailable || isOOM(err) || fctx.Err() != nil {
			// The Ask may stay "pending" in Redis (under OOM nothing can
			// be written); this waiter still ends, closed, and says why.
			s.opts.Logger.Error("pending: could not record the end of a wait; the ask fails closed as unavailable",
				"ask", id, "outcome", outcome, "oom", isOOM(err), "err", err)
			if outcome == Cancelled && ErrorCode(err) == CodeUnavailable {
				// Its asker has gone: left pending, it could be approved
				// once the store is back. (An expiry needs no such care: a
				// decision after the deadline is recorded as expired.)
				s.endLater(id, last, reason)
			}
			return unavailableEnd(id, last, err)
		}
		select { // one brief blip should not turn a clean expiry into unavailable
		case <-time.After(50 * time.Millisecond):
		case <-fctx.Done():
		}
	}
}

// finishBudget bounds finishOnce: FinishTimeout, plus ReplicaTimeout when
// the expiry must reach the replicas (a budget shorter than WAIT's could
// never confirm an expiry while a replica is slow).
func (s *RedisStore) finishBudget() time.Duration {
	if s.replicas.on() {
		return s.opts.FinishTimeout + s.opts.ReplicaTimeout + replyMargin
	}
	return s.opts.FinishTimeout
}

// setMessageScript saves the message's location only on an existing record,
// so a late SetMessage cannot resurrect a garbage-collected Ask.
var setMessageScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'channel', ARGV[1], 'message_ts', ARGV[2])
return 1
`)

// SetMessage implements Store.
func (s *RedisStore) SetMessage(ctx context.Context, id, channel, ts string) error {
	if err := checkID("set_message", id); err != nil {
		return err
	}
	n, err := setMessageScript.Run(ctx, s.client, []string{s.keys.ask(id)}, channel, ts).Int()
	if err != nil {
		return unavailable("set_message", err)
	}
	if n == 0 {
		return notFound("set_message", id)
	}
	return nil
}

// ListPending implements Store. The deadline index holds exactly the
// pending Asks, so it is the list to read.
func (s *RedisStore) ListPending(ctx context.Context, f Filter) ([]Ask, error) {
	ids, err := s.client.ZRange(ctx, s.keys.deadlines, 0, -1).Result()
	if err != nil {
		return nil, unavailable("list", err)
	}
	asks, err := s.getMany(ctx, "list", ids)
	if err != nil {
		return nil, err
	}
	var out []Ask
	for _, a := range asks {
		if a.Status == StatusPending && f.matches(a) {
			out = append(out, a)
		}
	}
	sortOldestFirst(out)
	return out, nil
}

// getMany reads the records of ids in one round trip, skipping those gone.
func (s *RedisStore) getMany(ctx context.Context, op string, ids []string) ([]Ask, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.keys.ask(id))
		}
		return nil
	})
	if err != nil {
		return nil, unavailable(op, err)
	}
	out := make([]Ask, 0, len(ids))
	for i, c := range cmds {
		if len(c.Val()) == 0 {
			continue
		}
		a, err := s.requests.decodeAsk(op, ids[i], c.Val())
		if err != nil {
			s.opts.Logger.Error("pending: skipping a corrupt ask record", "err", err)
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// sweepBatch bounds one ZRANGEBYSCORE of Sweep.
const sweepBatch = 500

// Sweep implements Store. Every expiry goes through decideScript, so of
// several replicas sweeping at once exactly one wins each Ask.
//
// The caller's now is not used: what is due is judged by the Redis
// server's clock, the one Create stamped the deadlines with, so a replica
// whose clock runs fast does not expire Asks early (and decideScript
// refuses an expiry before the deadline anyway).
func (s *RedisStore) Sweep(ctx context.Context, _ time.Time) ([]Ask, error) {
	now, err := s.serverTime(ctx)
	if err != nil {
		return nil, unavailable("sweep", err)
	}
	max := strconv.FormatInt(now.UnixMicro(), 10)
	var out []Ask
	for {
		ids, err := s.client.ZRangeByScore(ctx, s.keys.deadlines, &redis.ZRangeBy{
			Min: "-inf", Max: max, Count: sweepBatch,
		}).Result()
		if err != nil {
			return out, unavailable("sweep", err)
		}
		for _, id := range ids {
			a, won, err := s.decide(ctx, "sweep", id, Expired, "", reasonDeadline)
			_, isEarly := earlyLeft(err)
			switch {
			case err == nil && won:
				out = append(out, a)
			case isEarly:
				// Due by another node's clock (a Cluster's TIME came from
				// another node) but not yet by this one's: the next sweep.
			case err == nil, ErrorCode(err) == CodeNotFound:
				// decided by someone else, or garbage-collected: the
				// script has dropped it from the index.
			case ErrorCode(err) == CodeInternal:
				// A corrupt record would otherwise be swept forever.
				s.opts.Logger.Error("pending: dropping a corrupt ask from the deadline index", "ask", id, "err", err)
				s.client.ZRem(ctx, s.keys.deadlines, id)
			default:
				return out, err
			}
		}
		if len(ids) < sweepBatch {
			sortOldestFirst(out)
			return out, nil
		}
	}
}

// serverTime is the Redis server's clock (or the test's stand-in for it).
func (s *RedisStore) serverTime(ctx context.Context) (time.Time, error) {
	if s.opts.serverNow != nil {
		return s.opts.serverNow(), nil
	}
	return s.client.Time(ctx).Result()
}

// Audit implements Store.
func (s *RedisStore) Audit(ctx context.Context, limit int) ([]Event, error) {
	var msgs []redis.XMessage
	var err error
	if limit > 0 {
		msgs, err = s.client.XRangeN(ctx, s.keys.audit, "-", "+", int64(limit)).Result()
	} else {
		msgs, err = s.client.XRange(ctx, s.keys.audit, "-", "+").Result()
	}
	if err != nil {
		return nil, unavailable("audit", err)
	}
	out := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, streamEvent(m))
	}
	return out, nil
}

// Close implements Store: it stops the listener, and Waits still blocked
// return Unavailable. It does not close the Redis client.
func (s *RedisStore) Close() error {
	s.closeOnce.Do(func() {
		s.laterMu.Lock()
		s.laterClosed = true
		s.laterMu.Unlock()
		close(s.closed)
		s.waiters.wakeAll()
		s.stop()
		_ = s.decisions.Close()
		<-s.reading
		<-s.watching
		<-s.catching
		s.later.Wait()
		<-s.renewing
	})
	return nil
}

func unavailable(op string, err error) error {
	if isOOM(err) {
		return &Error{Store: "pending", Code: CodeUnavailable, Op: op, Err: err,
			Msg: "Redis is out of memory (maxmemory reached under maxmemory-policy noeviction): nothing can be recorded"}
	}
	return &Error{Store: "pending", Code: CodeUnavailable, Op: op, Msg: "store unreachable", Err: err}
}

// isOOM reports whether Redis refused a write for want of memory (also
// when a script's write was refused).
func isOOM(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}

// flatToMap turns a Lua HGETALL reply (field, value, field, value…) into a map.
func flatToMap(v any) (map[string]string, error) {
	flat, ok := v.([]any)
	if !ok || len(flat)%2 != 0 {
		return nil, fmt.Errorf("not a flat field list: %T", v)
	}
	h := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, _ := flat[i].(string)
		val, _ := flat[i+1].(string)
		h[k] = val
	}
	return h, nil
}

// waiting reports how many Waits of this process are registered (tests poll
// it instead of sleeping).
func (s *RedisStore) waiting() int { return s.waiters.count() }
