// Package approval is askops' one round trip from "the policy asks" to a
// human's decision, whatever the front door (the agent, `bot ask`, chat-ops,
// later an HTTP API or a hook) and whatever the channels people are reached
// on.
//
// Core.Launch records the Ask in the store, hands it to every configured
// Notifier (Slack is one, in package slackui), waits for the decision
// without a goroutine of its own, records the session grant an "Approve for
// session" won, brings the notifiers' messages in step and hands on the Ask
// in its terminal state; Core.Approve is Launch for a caller that blocks. Everything
// fails closed: a request nobody could be shown ends unavailable, a run that
// stops ends cancelled, a deadline ends expired, a store that fails ends
// unavailable, and in every case the audit trail pairs the Ask's "asked" with
// exactly one "decided".
//
// The package knows no channel, transport or model: it talks to the store,
// the grants and the notifiers through the small interfaces below.
package approval

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// Store is what the waiting side needs from the pending store;
// pending.Store satisfies it.
type Store interface {
	Create(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, error)
	Decide(ctx context.Context, id string, outcome pending.Outcome, by, reason string) (pending.Ask, error)
	// WaitFor waits for the end of an Ask this round trip created (see
	// pending.Store).
	WaitFor(ctx context.Context, a pending.Ask) (pending.Ask, error)
	// SaveMessage saves where the Ask was posted and reports whether it
	// had already ended (its decider then did not know of the message).
	SaveMessage(ctx context.Context, id, channel, ts string) (ended bool, err error)
	// Hold keeps the Ask's lease while its asker waits (see pending.Store).
	Hold(ctx context.Context, id string) (release func())
}

// GrantRecorder records session grants, time-boxed ones too (life > 0:
// the approver chose "for 15 min"); grants.Store satisfies it.
type GrantRecorder interface {
	RecordFor(ctx context.Context, sessionID string, s grants.Scope, by string, ttl, life time.Duration) (grants.Grant, error)
}

// Notifier shows Asks to the people who may decide them and keeps what it
// showed in step with the outcome.
type Notifier interface {
	// PostThen shows *a and says where, through done, once, on a goroutine
	// of its own (so an Ask queued behind others for a busy channel holds
	// none): channel and ts name the message, so it can be updated later
	// (by this process, or any replica that reads them from the store). A
	// notifier whose messages need no address reports them empty. An error
	// means nobody was shown a through this notifier; it may be a
	// *NotPosted to say why in words for the run's humans. It reads *a
	// until done is called and keeps no copy: the round trip's Ask is held
	// once, and left alone until every post has reported.
	PostThen(ctx context.Context, a *pending.Ask, done func(channel, ts string, err error))
	// Update rewrites a's message to a's current state; a.Channel and
	// a.MessageTS are what Post returned.
	Update(ctx context.Context, a pending.Ask) error
}

// NotPosted is a Notifier's Post error that says, for the people and the
// model reading the outcome, why the Ask could not be shown (Reason), apart
// from the internal detail (Err), which is only logged.
type NotPosted struct {
	Reason string
	Err    error
}

func (e *NotPosted) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Err.Error()
}

func (e *NotPosted) Unwrap() error { return e.Err }

// ScopeFunc is the grant an "Approve for session" of an Ask records.
type ScopeFunc func(pending.Ask) (grants.Scope, error)

// Config wires a Core.
type Config struct {
	Asks      Store
	Grants    GrantRecorder
	Notifiers []Notifier // every one is shown every Ask; at least one
	// Timeout is how long a human has to decide; after it the Ask expires
	// (and the call does not run).
	Timeout time.Duration
	// SessionTTL is the life of a grant recorded by "Approve for session".
	SessionTTL time.Duration
	// ScopeFor is the grant an "Approve for session" records; it must be the
	// same function the notifiers state in their confirm dialogs (see
	// ScopeText). Default: DefaultScopeFor.
	ScopeFor ScopeFunc
	// GrantDurations are the time-boxed lives offered beside "Approve for
	// session" (approvals.grant_durations), stored with each Ask that
	// offers it.
	GrantDurations []time.Duration
	Logger         *slog.Logger
	// UpdateTimeout bounds the bookkeeping after the waiter itself ended the
	// Ask (its ctx may be cancelled by then): recording the outcome, the
	// message updates, and how long a post in flight when the run stopped
	// may still take to answer; default 10s.
	UpdateTimeout time.Duration
	// AfterFunc arms the deadline timer of an Ask that Launch parked;
	// default time.AfterFunc (tests drive it).
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// Core asks a human through every notifier and waits for the answer.
type Core struct {
	cfg Config
	log *slog.Logger
}

// SystemDecider is who records outcomes no human chose.
const SystemDecider = "askops"

// New checks cfg and returns a Core.
func New(cfg Config) (*Core, error) {
	if cfg.Asks == nil || cfg.Grants == nil || len(cfg.Notifiers) == 0 {
		return nil, errors.New("approval: needs an ask store, a grant store and a notifier")
	}
	for _, n := range cfg.Notifiers {
		if n == nil {
			return nil, errors.New("approval: a configured notifier is nil")
		}
	}
	if cfg.Timeout <= 0 {
		return nil, errors.New("approval: timeout must be positive")
	}
	if cfg.SessionTTL <= 0 {
		return nil, errors.New("approval: session ttl must be positive")
	}
	if cfg.ScopeFor == nil {
		cfg.ScopeFor = DefaultScopeFor
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.UpdateTimeout <= 0 {
		cfg.UpdateTimeout = 10 * time.Second
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return &Core{cfg: cfg, log: cfg.Logger}, nil
}

// posted is where one notifier showed an Ask.
type posted struct {
	notifier   Notifier
	channel    string
	ts         string
	recordedAt bool // this is the message saved on the Ask's record
}

// Approve is Launch for a caller that waits: it records an Ask for req
// (whose Reason and Rule are the policy's verdict), shows it through every
// notifier, and returns it once it ended. It always returns a terminal Ask
// and never waits past the deadline: if no notifier could show it, it ends
// Unavailable at once; ctx's ending ends it cancelled.
func (c *Core) Approve(ctx context.Context, req pending.Request) pending.Ask {
	_, run := c.Launch(ctx, req, 0)
	ended := make(chan pending.Ask, 1)
	run(ctx, func(a pending.Ask) { ended <- a })
	return <-ended
}

// open records the Ask of Launch and holds it while ctx lives;
// prepared is req as recorded (Prepare), what the rest of the round trip
// works from; release ends the hold. !ok: it could not be recorded, and a
// is its terminal (unavailable) end.
func (c *Core) open(ctx context.Context, req pending.Request, ttl time.Duration) (prepared pending.Request, a pending.Ask, release func(), ok bool) {
	if ttl <= 0 || ttl > c.cfg.Timeout {
		ttl = c.cfg.Timeout
	}
	req = c.Prepare(req) // what every surface shows and offers, decided once
	a, err := c.cfg.Asks.Create(ctx, req, ttl)
	if err != nil {
		c.log.Error("could not record ask; failing closed", "run", req.RunID, "tool", req.Tool, "err", err)
		failed := pending.Ask{
			Request: req, Status: pending.Status(pending.Unavailable), DecidedBy: SystemDecider,
			DecisionReason: "the approval request could not be recorded",
		}
		return req, failed, nil, false
	}
	hold := c.cfg.Asks.Hold(ctx, a.ID)
	unhook := context.AfterFunc(ctx, hold)
	return req, a, func() { unhook(); hold() }, true
}

// trip is a round trip whose Ask has been shown: what its end needs.
type trip struct {
	// req is the request as it came, secrets and all, which a session
	// grant is built from (the store keeps a redacted copy in a); nil when
	// a's copy says the same (newTrip), so 10,000 waiting Asks do not each
	// keep a second request.
	req         *pending.Request
	a           pending.Ask
	shown       []posted
	channel, ts string // the message saved on the record
	// decidedBlind: the Ask ended before its message was saved.
	decidedBlind bool
}

// newTrip is the trip of a, recorded for req: req is kept only where the
// store's copy of it differs in anything but what it never stores (the
// session's name and start, one-off, a single approval kept as none).
func newTrip(req pending.Request, a pending.Ask) *trip {
	t := &trip{a: a}
	same := req
	same.SessionName, same.SessionStarted, same.OneOff = a.SessionName, a.SessionStarted, a.OneOff
	if same.Approvals < 2 {
		same.Approvals = a.Approvals
	}
	if !reflect.DeepEqual(same, a.Request) {
		t.req = &req
	}
	return t
}

// request is the request as it came (trip.req).
func (t *trip) request() pending.Request {
	if t.req != nil {
		return *t.req
	}
	return t.a.Request
}

// saveShown records on t's Ask where it was shown.
func (c *Core) saveShown(ctx context.Context, t *trip, shown []posted) {
	t.shown = shown
	a := &t.a
	// The record holds one message: the first notifier's that has an
	// address. Whoever decides the Ask (a click on any replica, the sweep)
	// updates that one; this waiter updates the others.
	for i := range shown {
		if shown[i].channel != "" || shown[i].ts != "" {
			shown[i].recordedAt = true
			t.channel, t.ts = shown[i].channel, shown[i].ts
			break
		}
	}
	if t.channel != "" || t.ts != "" {
		sctx, cancel := c.detached(ctx)
		ended, err := c.cfg.Asks.SaveMessage(sctx, a.ID, t.channel, t.ts)
		if err != nil {
			// Clicks still work: interactions update the message they came from.
			c.log.Warn("could not save where the ask was posted", "ask", a.ID, "err", err)
		}
		// A decision faster than this save (a click on another replica,
		// the console, the API) read a record without the message, so
		// its decider could not update it: this waiter must.
		t.decidedBlind = ended
		cancel()
	}
}

// wait waits for the shown Ask's end.
func (c *Core) wait(ctx context.Context, t *trip) pending.Ask {
	if ctx.Err() != nil {
		// The run stopped while the message was on its way: it exists
		// now, so end the Ask and let the update below take its buttons.
		// A stop that says why (the serve shutting down, the asker gone)
		// is recorded as Wait would have recorded it a moment later.
		reason := "the run stopped while the approval request was being posted"
		if cause := context.Cause(ctx); cause != ctx.Err() {
			reason = pending.CancelReason(ctx)
		}
		return c.endUnanswered(ctx, t.a, pending.Cancelled, reason)
	}
	return c.await(ctx, t)
}

// await is wait once the Ask is shown: ctx's ending (its cause) ends it
// cancelled.
func (c *Core) await(ctx context.Context, t *trip) pending.Ask {
	a := t.a
	final, err := c.cfg.Asks.WaitFor(ctx, a)
	if err != nil {
		// WaitFor's own Unavailable is not recorded (the store failed): end
		// the stored Ask as this call ends, so its buttons cannot later
		// "approve" a call that never ran, and its audit pair says what
		// happened. A decision that got there first stands.
		c.log.Warn("waiting for ask failed; ending it", "ask", a.ID, "status", final.Status, "err", err)
		outcome, reason := pending.Unavailable, "askops lost track of the approval request (the store failed)"
		if ctx.Err() != nil {
			outcome, reason = pending.Cancelled, "the run stopped while askops could not reach its store"
		}
		final = c.endUnanswered(ctx, a, outcome, reason)
	}
	return final
}

// end is the round trip after the Ask ended: the grant an approve for
// session won, and the messages brought in step.
func (c *Core) end(ctx context.Context, t *trip, final pending.Ask) pending.Ask {
	if final.Channel == "" {
		final.Channel, final.MessageTS = t.channel, t.ts
	}
	switch o, _ := final.Outcome(); o {
	case pending.ApprovedSession:
		// The grant is built from the call this process asked about, not
		// as the store hands it back: the store keeps secrets redacted,
		// and the next identical call carries them unredacted.
		granted := t.a
		granted.Request = t.request()
		granted.DecidedBy, granted.GrantTTL = final.DecidedBy, final.GrantTTL
		c.recordGrant(ctx, granted)
		c.updateNotifiers(ctx, final, t.decidedBlind, t.shown)
	case pending.Approved, pending.Denied:
		c.updateNotifiers(ctx, final, t.decidedBlind, t.shown)
	case pending.Expired, pending.Cancelled, pending.Unavailable:
		c.updateNotifiers(ctx, final, true, t.shown)
	default:
		// Wait broke its contract; never let a non-terminal Ask through.
		final.Status = pending.Status(pending.Unavailable)
		final.DecidedBy, final.DecisionReason = SystemDecider, "the ask store returned no outcome"
	}
	return final
}

// collect is the notifiers' posts of a as they reported them: those that
// showed it; with none, the first notifier's error.
func (c *Core) collect(a pending.Ask, results []posted, errs []error) ([]posted, error) {
	var shown []posted
	for i, p := range results {
		if errs[i] != nil {
			if len(c.cfg.Notifiers) > 1 {
				c.log.Warn("a notifier could not show the ask", "ask", a.ID, "notifier", i, "err", errs[i])
			}
			continue
		}
		shown = append(shown, p)
	}
	if len(shown) == 0 {
		return nil, errs[0]
	}
	return shown, nil
}

// notPosted ends an Ask nobody could see: Cancelled if the caller gave up,
// else Unavailable with the notifier's reason.
func (c *Core) notPosted(ctx context.Context, a pending.Ask, postErr error) pending.Ask {
	outcome, reason := pending.Unavailable, "the approval request could not be shown to anyone who may approve"
	if np, ok := errors.AsType[*NotPosted](postErr); ok && np.Reason != "" {
		reason = np.Reason
	}
	if ctx.Err() != nil {
		outcome, reason = pending.Cancelled, "the run stopped before the approval request was posted"
	}
	c.log.Error("ask not posted; failing closed", "ask", a.ID, "outcome", outcome, "err", postErr)
	return c.endUnanswered(ctx, a, outcome, reason)
}

// endUnanswered records an outcome no human chose, even if ctx has ended.
// It is a compare-and-set: a decision that got there first stands and is
// returned.
func (c *Core) endUnanswered(ctx context.Context, a pending.Ask, outcome pending.Outcome, reason string) pending.Ask {
	dctx, cancel := c.detached(ctx)
	defer cancel()
	final, err := c.cfg.Asks.Decide(dctx, a.ID, outcome, SystemDecider, reason)
	if err == nil {
		return final
	}
	if first, ok := pending.ConflictAsk(err); ok {
		return first // someone (or the deadline) ended it first; that stands
	}
	c.log.Error("could not record the ask's outcome", "ask", a.ID, "outcome", outcome, "err", err)
	a.Status, a.DecidedBy, a.DecisionReason = pending.Status(outcome), SystemDecider, reason
	return a
}

// postContext bounds the posts of an Ask by its deadline but not by the
// run's cancellation: a post cut off in flight may still have created the
// message, and without its address nothing could ever take its buttons
// away. Once ctx ends the posts get UpdateTimeout more to answer, so a
// stopped run is not held until the deadline by a slow channel.
func (c *Core) postContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	stop := context.AfterFunc(ctx, func() {
		grace := time.AfterFunc(c.cfg.UpdateTimeout, cancel)
		context.AfterFunc(pctx, func() { grace.Stop() })
	})
	return pctx, func() { stop(); cancel() }
}

// detached is a context for the bookkeeping after the waiter's own ending,
// when ctx may already be cancelled.
func (c *Core) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), c.cfg.UpdateTimeout)
}

// recordGrant records the session grant of an Ask this process's waiter saw
// end approved_session. Only the winning decision gets here, so a losing
// "for session" click leaves nothing behind; and it is recorded from the
// Ask this waiter holds, so the grant is the scope the approver was shown.
// A failure is logged; the call still runs this once, as approved.
func (c *Core) recordGrant(ctx context.Context, a pending.Ask) {
	if offered, known := a.OffersSession(); known && !offered {
		// No surface offers it (Offers, the console, the API refuse the
		// click); should one get through, no grant is left behind.
		c.log.Error("approved for session on an ask that offers no session grant; none recorded", "ask", a.ID, "session", a.SessionID)
		return
	}
	scope, err := c.cfg.ScopeFor(a)
	if err != nil {
		c.log.Error("approved for session but no scope could be derived; no grant recorded", "ask", a.ID, "err", err)
		return
	}
	gctx, cancel := c.detached(ctx)
	defer cancel()
	g, err := c.cfg.Grants.RecordFor(gctx, a.SessionID, scope, a.DecidedBy, c.cfg.SessionTTL, a.GrantTTL)
	if err != nil {
		c.log.Error("could not record session grant", "ask", a.ID, "session", a.SessionID, "scope", scope.String(), "err", err)
		return
	}
	c.log.Info("session grant recorded", "ask", a.ID, "grant", g.ID, "session", a.SessionID, "scope", scope.String(), "by", a.DecidedBy, "expires", g.ExpiresAt)
}

// updateNotifiers brings every shown message in step with final. The
// message saved on the record is updated by whoever decided it when a human
// did (the click's handler, on whichever replica); when nobody clicked, or
// the decision came before the message was saved, no one else will, so the
// waiter does (unanswered; the sweep or a click may too: updates are
// idempotent). Every other notifier's message only this waiter knows of.
func (c *Core) updateNotifiers(ctx context.Context, final pending.Ask, unanswered bool, shown []posted) {
	if !unanswered && len(shown) == 1 && shown[0].recordedAt {
		return // the decider updates it
	}
	uctx, cancel := c.detached(ctx)
	defer cancel()
	for _, p := range shown {
		if p.recordedAt && !unanswered {
			continue
		}
		a := final
		if !p.recordedAt {
			a.Channel, a.MessageTS = p.channel, p.ts
		}
		if err := p.notifier.Update(uctx, a); err != nil {
			c.log.Warn("could not update ask message", "ask", a.ID, "err", err)
		}
	}
}
