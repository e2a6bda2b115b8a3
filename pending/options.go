package pending

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// Options configure both store implementations. The zero value is usable.
type Options struct {
	// Now is this process's clock: the memory store's timestamps, deadlines
	// and the "decision after the deadline" check, and when a Wait's timer
	// is armed. The Redis store stamps and judges deadlines by the Redis
	// server's clock instead, so replicas whose clocks disagree never
	// expire an Ask early. Default time.Now.
	Now func() time.Time

	// After arms Wait's deadline timer (the duration is Deadline - Now()).
	// Default time.After. A test that injects Now injects an After driven by
	// the same fake clock, so advancing the clock fires the timer; expiry is
	// then tested without sleeping.
	After func(d time.Duration) <-chan time.Time

	Logger *slog.Logger // nil discards, as in every store: the wiring passes its own

	// People names the person behind an identity that is no Slack user:
	// an API token's name or a console decider ("console:" + user) → the
	// Slack user id of the person the config says holds it. A quorum
	// counts people (votes.go); a vote from an identity not named here
	// may be anybody's.
	People map[string]string

	// AnnounceKey signs the decision announcements that carry a record
	// (announce.go): a waiter in another process ends on such an
	// announcement only when its signature holds, and re-reads the record
	// otherwise. Every replica of a deployment must have the same key
	// (AnnounceKeyFrom the Slack bot token, as grants' seal key is). Nil:
	// no record is announced, and every wake-up re-reads the record.
	AnnounceKey []byte

	// Retention is how long a decided record outlives its deadline. On Redis
	// it becomes the key's TTL (deadline + Retention) and is garbage
	// collection only: expiry itself is an explicit compare-and-set. The
	// memory store drops such records during Sweep. Default 24h.
	Retention time.Duration

	// AuditMaxLen caps the audit trail (Redis: XADD MAXLEN ~). Default 100000.
	AuditMaxLen int64

	// Namespace prefixes every Redis key and channel, so two deployments can
	// share one Redis. Default "askops".
	Namespace string

	// FinishTimeout bounds the compare-and-set Wait makes at the deadline or
	// when its context ends (with a fresh context, since the caller's may be
	// gone). It is what keeps a waiter from outliving its deadline by more
	// than this when the store is down. Default 500ms.
	FinishTimeout time.Duration

	// serverNow stands in for the Redis server's clock (TIME) in tests
	// that drive time with a fake clock; nil (always, outside tests) means
	// the server's own TIME. See RedisStore.
	serverNow func() time.Time

	// ListenerIdle is how long the Redis listener waits for any message
	// before pinging its connection; two silent periods in a row mean a dead
	// (half-open) connection, which is then replaced. Default 15s.
	ListenerIdle time.Duration

	// ReplicaAcks is how many replicas must hold a decision before it is
	// confirmed (Decide returns, a waiter acts on it), checked with WAIT
	// (Redis only; see durable.go). Zero (auto) means: every replica the
	// master now holding askops' keys has had, counted from when it is
	// online until it has been gone for 5 s, looked at every 500 ms and
	// logged on every change; after a failover, the new master's
	// replicas, rising as they join.
	// N > 0: always N (askops stops deciding while fewer are connected).
	// Negative: never wait (a lone server, or decisions you accept to lose
	// on a failover).
	ReplicaAcks int

	// ReplicaTimeout bounds each WAIT for ReplicaAcks. A decision not on a
	// replica by then is not confirmed (Unavailable), though it may still
	// be confirmed by a later read. Default 1s (replicas answer in a
	// millisecond; the margin is for a loaded machine).
	ReplicaTimeout time.Duration

	// ReplicaAcksChanged, when set, is told how many replicas decisions
	// wait for, at open and on every change (the wiring's metric).
	ReplicaAcksChanged func(replicas int)
	// LeaseTTL is how long an Ask outlives the last renewal of its lease
	// by the process whose asker waits for it (see Hold). Default
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	if o.Retention <= 0 {
		o.Retention = 24 * time.Hour
	}
	if o.AuditMaxLen <= 0 {
		o.AuditMaxLen = 100000
	}
	if o.Namespace == "" {
		o.Namespace = "askops"
	}
	if o.FinishTimeout <= 0 {
		o.FinishTimeout = 500 * time.Millisecond
	}
	if o.ListenerIdle <= 0 {
		o.ListenerIdle = 15 * time.Second
	}
	if o.ReplicaTimeout <= 0 {
		o.ReplicaTimeout = time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	return o
}

// now returns the injected clock's time at the precision both stores keep
// (microseconds: Lua numbers are doubles, exact up to 2^53), in UTC, without
// a monotonic reading, so a record reads back equal to what was written.
func (o Options) now() time.Time { return o.Now().UTC().Truncate(time.Microsecond) }

// newAsk is the pending record both stores make for req at now (from
// Options.now): a fresh id and a deadline ttl away, in whole microseconds
// as Redis keeps it, so both stores return equal Asks.
func newAsk(req Request, now time.Time, ttl time.Duration) Ask {
	id := req.AskID
	if id == "" {
		id = recordid.New()
	}
	return Ask{
		Request:   req,
		ID:        id,
		CreatedAt: now,
		Deadline:  now.Add(ttl).Truncate(time.Microsecond),
		Status:    StatusPending,
	}
}

// checkID refuses an empty or malformed id before any store is touched.
func checkID(op, id string) error {
	if id == "" {
		return &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: "empty ask id"}
	}
	if !recordid.Valid(id) && !recordid.ValidUUID(id) {
		return &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("malformed ask id %.40q", id)}
	}
	return nil
}

func checkOutcome(op string, o Outcome) error {
	if !o.Valid() {
		return &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("unknown outcome %.40q", string(o))}
	}
	return nil
}

// checkCreate refuses a Create's bad ttl or malformed AskID before any
// store is touched.
func checkCreate(req Request, ttl time.Duration) error {
	if err := checkTTL("create", ttl); err != nil {
		return err
	}
	if req.AskID != "" {
		return checkID("create", req.AskID)
	}
	return nil
}

// retention is how long req's record outlives its deadline: the store's
// Retention, or the request's Keep when longer.
func (o Options) retention(req Request) time.Duration {
	return max(o.Retention, req.Keep)
}

// leaseFlag is createScript's lease argument: "1" for an Ask Hold leases.
func leaseFlag(req Request) string {
	if req.Unleased {
		return "0"
	}
	return "1"
}

func checkTTL(op string, ttl time.Duration) error {
	if ttl <= 0 {
		return &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("ttl must be positive, got %s", ttl)}
	}
	return nil
}

func notFound(op, id string) error {
	return &Error{Store: "pending", Code: CodeNotFound, Op: op, Msg: fmt.Sprintf("no ask %s", id)}
}

// conflict is the error a losing Decide gets: it carries the record as the
// first decision left it and says who decided, and when.
func conflict(op string, a Ask) error {
	msg := fmt.Sprintf("already %s", a.Status)
	if a.DecidedBy != "" {
		msg += " by " + a.DecidedBy
	}
	if !a.DecidedAt.IsZero() {
		msg += " at " + a.DecidedAt.Format(time.RFC3339)
	}
	return &Error{Store: "pending", Code: CodeConflict, Op: op, Msg: msg, Record: &a}
}

// earlyError refuses an expiry before the deadline; Left is how long the
// Ask still has (by the clock that judges: the Redis server's).
type earlyError struct{ Left time.Duration }

func (e *earlyError) Error() string { return fmt.Sprintf("the deadline is %s away", e.Left) }

// early is the error an expiry before the deadline gets (CodeInvalid for a
// caller of Decide; Wait and Sweep read Left and wait on).
func early(op, id string, left time.Duration) error {
	return &Error{Store: "pending", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("ask %s has not reached its deadline", id), Err: &earlyError{Left: left}}
}

// earlyLeft reports whether err refused an early expiry, and how long is left.
func earlyLeft(err error) (time.Duration, bool) {
	var e *earlyError
	if errors.As(err, &e) {
		return e.Left, true
	}
	return 0, false
}

// humanDecision reports whether o is a person's answer, which is refused
// once the deadline has passed (the Ask is then expired instead): nobody
// approves an Ask whose waiter has given up or is about to.
func humanDecision(o Outcome) bool { return o == Approved || o == ApprovedSession || o == Denied }

// Reasons recorded when the store, not a person, ends an Ask.
const (
	reasonDeadline = "nobody decided before the deadline"
	reasonLate     = "the decision came after the deadline"
)

// terminalUnavailable is what Wait returns when it cannot know better: a
// terminal status, so a caller that ignores the error still fails closed.
func terminalUnavailable(a Ask, id string) Ask {
	if a.ID == "" {
		a.ID = id
	}
	a.Status = Status(Unavailable)
	return a
}
