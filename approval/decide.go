package approval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// The deciding half of the round trip: one person's vote on an Ask, from
// whichever surface it came (a Slack click or form, the console's form,
// the HTTP API), judged by the same rules in the same order:
//
//  1. the grant's life: a duration goes only with "for session" and must
//     be one of approvals.grant_durations;
//  2. the fast path: an approver's click on the Ask's own message is cast
//     in one store round trip, the binding checked by the store in the
//     same step (pending.BoundCaster);
//  3. authority: the voter may decide (Slack's approvers and escalation
//     targets; a console user signed in and a decide-scoped token are
//     admitted by their surface);
//  4. the Ask as the store holds it: unknown, or already decided (the
//     late voter is told by whom);
//  5. the binding: a click on a message must be for the Ask that message
//     shows, and the message must have offered the action;
//  6. self-approval, and "for session" where it is not offered;
//  7. the store's vote: quorum (people count once; a repeat vote counts
//     nothing) and the first decision wins.
//
// Every refusal of a person's vote is audited; every message that shows
// the Ask is brought in step after a decision (and after a late vote,
// with the decision that won). The surface words the Result in its own
// text.

// DecideStore is what deciding needs from the pending store;
// pending.Store satisfies it.
type DecideStore interface {
	Get(ctx context.Context, id string) (pending.Ask, error)
	Cast(ctx context.Context, id string, b pending.Ballot) (pending.Ask, error)
	AppendEvent(ctx context.Context, e pending.Event) (pending.Event, error)
}

// Authority says who may decide Asks at all: Slack's approvers (user ids
// and user groups) implement it. A surface whose voters are admitted by
// signing in (the console) or by a token's scope (the API) needs none.
type Authority interface {
	MayDecide(ctx context.Context, by string) (bool, error)
}

// AskAuthority is an Authority with rules for one Ask beyond "is an
// approver": the targets of an escalation level that fired, the recipient
// of a direct-message copy. approver and checkErr are MayDecide's answer;
// it returns nil when by may decide askID, else the refusal (for the log,
// and for the surface to word).
type AskAuthority interface {
	Authority
	MayDecideAsk(ctx context.Context, by, askID string, approver bool, checkErr error) error
}

// MessageUpdater rewrites the message of an Ask at a.Channel/a.MessageTS
// to a's state; slackui's Notifier satisfies it.
type MessageUpdater interface {
	Update(ctx context.Context, a pending.Ask) error
}

// Voter is who casts a vote.
type Voter struct {
	// By is who the vote is recorded and audited as: a Slack user id, the
	// console's "console:dana", an API token's name.
	By string
	// Person is the Slack user the vote counts as toward a quorum, when
	// the surface knows it (a Slack click); "" lets the store name the
	// person from its People map (api.tokens[].slack_user,
	// console.slack_user), or nobody.
	Person string
	// Token: the voter is a credential that also asks (an API token): it
	// may decide no Ask it made, whatever approvals.self_approval says.
	Token bool
	// Started reports whether the voter started the run whose starter was
	// recorded as startedBy; nil means startedBy == By.
	Started func(startedBy string) bool
}

// Message is a message an Ask is shown on, as the surface names it.
type Message struct {
	Channel, TS string
}

// Vote is one person's decision on an Ask, parsed by its surface.
type Vote struct {
	Ask     string // the Ask's id
	Outcome pending.Outcome
	Reason  string // a deny's reason, as typed
	// Life is a time-boxed "for session" (approvals.grant_durations);
	// LifeChosen says the voter chose one (even a malformed 0).
	Life       time.Duration
	LifeChosen bool
	Voter      Voter
	// Authority says whether Voter.By may decide; nil: the surface has
	// admitted the voter already.
	Authority Authority
	// On is the message the vote was cast on (a click), if any: it is
	// brought in step with the others after the vote.
	On *Message
	// Fast lets an approver's vote on On, when On is the Ask's own
	// message and the action is one every open Ask's message offers, take
	// the store's one-round-trip path (pending.BoundCaster).
	Fast bool
	// Bind, if set, checks that the vote belongs to the Ask the store
	// holds (a click on that Ask's own message, which offered the action);
	// it may complete the record (adopt the clicked message) through a.
	// A refusal is returned as Result kind NotBound with Bind's error.
	Bind func(ctx context.Context, a *pending.Ask) error
}

// OutcomeOf reads a decision as the console's form and the API spell it:
// "approve", "approve_session" or "deny".
func OutcomeOf(word string) (pending.Outcome, bool) {
	switch word {
	case "approve":
		return pending.Approved, true
	case "approve_session":
		return pending.ApprovedSession, true
	case "deny":
		return pending.Denied, true
	}
	return "", false
}

// Kind is how a vote went.
type Kind string

// The kinds of Result. Decided and Counted changed the Ask; every other
// kind changed nothing (NotDurable: the decision may yet stand).
const (
	Decided        Kind = "decided"         // this vote ended the Ask: Ask is final
	Counted        Kind = "counted"         // a quorum vote, recorded; the Ask is still open
	AlreadyDecided Kind = "already_decided" // late: Ask is the decision that won
	RepeatVote     Kind = "repeat_vote"     // the same person approved before: Ask is the open Ask
	SelfApproved   Kind = "self_approval"   // the voter started the run (Token: made the Ask)
	NotAuthorized  Kind = "not_authorized"  // Authority refused (Err says why, or that it could not check)
	NotBound       Kind = "not_bound"       // Bind refused: Err says why
	NotOffered     Kind = "not_offered"     // "for session" where the Ask offers none (Needed > 1, or no scope)
	BadLife        Kind = "bad_life"        // a grant duration without "for session", or not configured
	Unknown        Kind = "unknown"         // the store does not know the Ask
	Invalid        Kind = "invalid"         // the id or the ballot is malformed
	NotDurable     Kind = "not_durable"     // recorded, but not yet on the replicas (pending.ErrNotDurable)
	Unavailable    Kind = "unavailable"     // the store failed; nothing changed, unless Unsure
)

// Result is how a vote went, as facts each surface words in its own text.
type Result struct {
	Kind Kind
	// Ask is the Ask after the vote: final (Decided), open with the new
	// tally (Counted), the decision that won (AlreadyDecided, when the
	// store said), the open Ask (RepeatVote, SelfApproved, NotOffered).
	Ask pending.Ask
	// Before is the Ask as read before the vote (zero on the fast path).
	Before pending.Ask
	// Known says Ask holds a record (AlreadyDecided may come without one).
	Known bool
	// Token: SelfApproved because a token decided an Ask it made.
	Token bool
	// NoSession: NotOffered although one approval suffices: no scope can
	// be stated for the Ask.
	NoSession bool
	// LifeWithout: BadLife because a duration came without "for session";
	// else it is not among Offered (empty: none configured).
	LifeWithout bool
	Offered     []time.Duration
	// Unsure: Unavailable on the vote itself, for a reason that does not
	// rule out that the store recorded it: its answer came too late or
	// never (a timeout, a connection lost after the vote was sent). The
	// vote may stand, and the Ask may be decided by it: no surface may
	// say that nothing changed.
	Unsure bool
	// Err is the store's or a check's error, for the log.
	Err error
}

// Changed reports whether the vote was recorded.
func (r Result) Changed() bool { return r.Kind == Decided || r.Kind == Counted }

// DeciderConfig wires the Decider: one per process, built from
// approvals.* by the wiring and shared by every surface (Slack, the
// console, the API), so no surface can decide by other rules.
type DeciderConfig struct {
	Asks DecideStore
	// SelfApproval is approvals.self_approval.
	SelfApproval SelfApproval
	// OnlyApprover reports whether by is the only approver there is, who
	// may approve the runs they started (SelfApproval's exception): Slack's
	// one configured approver, or the console's user where no Slack is
	// configured. Nil: nobody is.
	OnlyApprover func(by string) bool
	// GrantDurations are approvals.grant_durations: the lives a "for
	// session" may choose.
	GrantDurations []time.Duration
	// SessionOffered reports whether a's "Approve for session" is offered
	// (a scope can be stated); nil offers it wherever one approval
	// suffices.
	SessionOffered func(a pending.Ask) bool
	// Messages are brought in step after a decision.
	Messages []MessageUpdater
	// UpdateDelay delays the updates after a deciding vote, so the woken
	// agent goes first; default 20ms, negative for none. The decision
	// wakes its agent at once, on this replica or another, and rendering
	// and sending the updates is a few hundred µs of CPU that ran beside
	// the woken agent on a shared machine (BenchmarkClickToResume). Nobody
	// sees 20 ms on a message.
	UpdateDelay time.Duration
	// UpdateTimeout bounds each message update; default 10s.
	UpdateTimeout time.Duration
	Logger        *slog.Logger
}

// Decider decides Asks: the one deciding half every surface calls. It
// runs message updates off the vote's path; Close waits for them.
type Decider struct {
	cfg DeciderConfig
	log *slog.Logger

	mu       sync.RWMutex // guards closed against inflight.Go racing Close's Wait
	closed   bool
	closing  chan struct{} // closed by Close: delayed updates start at once
	inflight sync.WaitGroup
}

// NewDecider returns the deciding half for cfg.
func NewDecider(cfg DeciderConfig) *Decider {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.UpdateDelay == 0 {
		cfg.UpdateDelay = 20 * time.Millisecond
	}
	if cfg.UpdateTimeout <= 0 {
		cfg.UpdateTimeout = 10 * time.Second
	}
	return &Decider{cfg: cfg, log: cfg.Logger, closing: make(chan struct{})}
}

// Close waits for the message updates already started; later votes still
// decide but update no message.
func (d *Decider) Close() {
	d.mu.Lock()
	if !d.closed {
		close(d.closing)
	}
	d.closed = true
	d.mu.Unlock()
	d.inflight.Wait()
}

// Decide judges v and records it where the rules allow. The error is
// Result.Err when the store failed (Unavailable), for the log; every
// other refusal is a Result kind with a nil error.
func (d *Decider) Decide(ctx context.Context, v Vote) (Result, error) {
	if r, ok := d.checkLife(v); !ok {
		return r, nil
	}
	b := pending.Ballot{Outcome: v.Outcome, By: v.Voter.By, Person: v.Voter.Person, Reason: v.Reason, GrantTTL: v.Life}
	approver, checkErr := true, error(nil)
	if v.Authority != nil {
		approver, checkErr = v.Authority.MayDecide(ctx, v.Voter.By)
	}
	if approver && checkErr == nil && v.Fast && v.On != nil {
		if r, done := d.castOnMessage(ctx, v, b); done {
			return r, r.Err
		}
	}
	if aa, ok := v.Authority.(AskAuthority); ok {
		if err := aa.MayDecideAsk(ctx, v.Voter.By, v.Ask, approver, checkErr); err != nil {
			return Result{Kind: NotAuthorized, Err: err}, nil
		}
	} else if checkErr != nil || !approver {
		if checkErr == nil {
			checkErr = fmt.Errorf("refused %s on ask %s: not an approver", v.Voter.By, v.Ask)
		}
		return Result{Kind: NotAuthorized, Err: checkErr}, nil
	}

	a, err := d.cfg.Asks.Get(ctx, v.Ask)
	if err != nil {
		return d.storeFailed(v, err)
	}
	if v.Bind != nil {
		if err := v.Bind(ctx, &a); err != nil {
			return Result{Kind: NotBound, Ask: a, Before: a, Known: true, Err: err}, nil
		}
	}
	if _, done := a.Outcome(); done {
		// Whoever ended it brought its messages in step (the deciding
		// vote, the waiter, the sweep). Only a late click re-renders: the
		// message it came from may be a stale copy. (A form or an API call
		// read as ended adds no update: one from the API delayed a sweep's
		// update on the same replica past TestKilledAskerEndsItsAsk's
		// wait.)
		if v.On != nil {
			d.inStep(v, a, 0)
		}
		return Result{Kind: AlreadyDecided, Ask: a, Before: a, Known: true}, nil
	}
	if r, refused := d.refuse(ctx, v, a); refused {
		return r, nil
	}
	got, err := d.cfg.Asks.Cast(ctx, a.ID, b)
	r := d.voted(ctx, v, got, b, err)
	r.Before = a
	return r, r.storeErr()
}

// checkLife is rule 1: no store is touched.
func (d *Decider) checkLife(v Vote) (Result, bool) {
	if !v.LifeChosen {
		return Result{}, true
	}
	if v.Outcome != pending.ApprovedSession {
		return Result{Kind: BadLife, LifeWithout: true}, false
	}
	if v.Life > 0 && slices.Contains(d.cfg.GrantDurations, v.Life) {
		return Result{}, true
	}
	return Result{Kind: BadLife, Offered: d.cfg.GrantDurations}, false
}

// castOnMessage is the common click in one store round trip: an approver
// votes Approve or Deny on the Ask's own message, and the store checks
// that binding (and, where the self-approval rule could refuse the voter,
// that they did not start the run) in the same step as the vote. A
// binding that does not hold wrote nothing (done false): the full way
// reads the record and judges the vote.
func (d *Decider) castOnMessage(ctx context.Context, v Vote, b pending.Ballot) (Result, bool) {
	caster, ok := d.cfg.Asks.(pending.BoundCaster)
	if !ok || v.Voter.Token || v.Voter.Started != nil || v.LifeChosen || v.Outcome == pending.ApprovedSession {
		return Result{}, false
	}
	on := pending.Binding{Channel: v.On.Channel, MessageTS: v.On.TS}
	if d.selfRefuses(v, pending.Ask{Request: pending.Request{StartedBy: v.Voter.By}}) {
		on.NotStartedBy = v.Voter.By // were they the starter, the full way refuses and audits it
	}
	got, bound, err := caster.CastOn(ctx, v.Ask, b, on)
	if !bound {
		return Result{}, false
	}
	return d.voted(ctx, v, got, b, err), true
}

// MayApprove reports whether voter may approve the open Ask a by the
// self-approval rule, as Decide would judge it: what a surface asks
// before it offers the Ask to a person (a console push), never instead
// of Decide.
func (d *Decider) MayApprove(a pending.Ask, voter Voter) bool {
	v := Vote{Ask: a.ID, Outcome: pending.Approved, Voter: voter}
	return !(startedBy(v, a) && (voter.Token || d.selfRefuses(v, a)))
}

// startedBy reports whether v's voter started a's run.
func startedBy(v Vote, a pending.Ask) bool {
	if v.Voter.Started != nil {
		return a.StartedBy != "" && v.Voter.Started(a.StartedBy)
	}
	return a.StartedBy != "" && a.StartedBy == v.Voter.By
}

// refuse is rule 6 on the open Ask a; a refusal is audited.
func (d *Decider) refuse(ctx context.Context, v Vote, a pending.Ask) (Result, bool) {
	started := startedBy(v, a)
	switch {
	case v.Voter.Token && started:
		// A token is the agent's own credential: an agent approving (or
		// denying) what it asked is no decision.
		d.audit(ctx, a, v, "self-approval: the token that made the ask may not decide it")
		return Result{Kind: SelfApproved, Token: true, Ask: a, Before: a, Known: true}, true
	case started && d.selfRefuses(v, a):
		d.audit(ctx, a, v, SelfApprovalAudit(a))
		return Result{Kind: SelfApproved, Ask: a, Before: a, Known: true}, true
	case v.Outcome == pending.ApprovedSession && a.Needed() > 1:
		return Result{Kind: NotOffered, Ask: a, Before: a, Known: true}, true
	case v.Outcome == pending.ApprovedSession && !storedOffer(a):
		// The offer the Ask was made with (Core.Prepare): what no surface
		// offers, no door grants.
		return Result{Kind: NotOffered, NoSession: true, Ask: a, Before: a, Known: true}, true
	case v.Outcome == pending.ApprovedSession && d.cfg.SessionOffered != nil && !d.cfg.SessionOffered(a):
		return Result{Kind: NotOffered, NoSession: true, Ask: a, Before: a, Known: true}, true
	}
	return Result{}, false
}

// storedOffer reports whether a offers "Approve for session" by the offer
// stored when it was made; a record without one (the previous release)
// is judged by the surfaces' SessionOffered. Remove in v0.2.0: no Ask of
// the previous release is still open by then.
func storedOffer(a pending.Ask) bool {
	offered, known := a.OffersSession()
	return offered || !known
}

// selfRefuses is the self-approval rule for a voter who started a's run.
func (d *Decider) selfRefuses(v Vote, a pending.Ask) bool {
	// The starter is matched by the caller; Refuses compares by itself.
	a.StartedBy = v.Voter.By
	return d.cfg.SelfApproval.Refuses(a, v.Voter.By, v.Outcome, d.cfg.OnlyApprover)
}

// voted reads the store's answer to b's vote (got, err).
func (d *Decider) voted(ctx context.Context, v Vote, got pending.Ask, b pending.Ballot, err error) Result {
	if open, ok := pending.RepeatVote(err); ok {
		d.audit(ctx, open, v, "repeat vote: "+b.By+" has already approved")
		return Result{Kind: RepeatVote, Ask: open, Known: true}
	}
	if err != nil {
		r, _ := d.storeFailed(v, err)
		r.Unsure = r.Kind == Unavailable && mayHaveLanded(err)
		return r
	}
	if got.Status == pending.StatusPending {
		d.log.Info("ask vote counted", "ask", got.ID, "by", b.By, "tally", got.Tally())
		d.inStep(v, got, 0)
		return Result{Kind: Counted, Ask: got, Known: true}
	}
	d.log.Info("ask decided", "ask", got.ID, "outcome", got.Status, "by", b.By, "tally", got.Tally())
	d.inStep(v, got, d.cfg.UpdateDelay) // its agent goes first
	return Result{Kind: Decided, Ask: got, Known: true}
}

// storeFailed is the Result of a store error on v.
func (d *Decider) storeFailed(v Vote, err error) (Result, error) {
	switch pending.ErrorCode(err) {
	case pending.CodeConflict:
		if first, ok := pending.ConflictAsk(err); ok {
			d.inStep(v, first, 0) // bring every copy in step with the winner
			return Result{Kind: AlreadyDecided, Ask: first, Known: true, Err: err}, nil
		}
		return Result{Kind: AlreadyDecided, Err: err}, nil
	case pending.CodeNotFound:
		return Result{Kind: Unknown, Err: err}, nil
	case pending.CodeInvalid:
		return Result{Kind: Invalid, Err: err}, nil
	}
	if pending.NotDurable(err) {
		return Result{Kind: NotDurable, Err: err}, nil
	}
	return Result{Kind: Unavailable, Err: err}, err
}

// mayHaveLanded reports whether a write that failed with err may yet have
// been carried out by the store: unless the store answered with an error
// of its own (a refusal: out of memory, read-only) or the connection was
// never made, the request may have reached it and its answer been lost
// (a deadline that passed first, a connection that broke after sending).
func mayHaveLanded(err error) bool {
	if _, refused := errors.AsType[interface {
		error
		RedisError()
	}](err); refused {
		return false
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return false
	}
	return true
}

func (r Result) storeErr() error {
	if r.Kind == Unavailable {
		return r.Err
	}
	return nil
}

// audit records a refused vote; a failure is logged (the vote already
// changed nothing).
func (d *Decider) audit(ctx context.Context, a pending.Ask, v Vote, why string) {
	e := pending.Event{Kind: pending.EventRefused, AskID: a.ID, RunID: a.RunID, Tool: a.Tool, Outcome: v.Outcome, By: v.Voter.By, Reason: why}
	if _, err := d.cfg.Asks.AppendEvent(ctx, e); err != nil {
		d.log.Warn("could not audit a refused decision", "ask", a.ID, "by", v.Voter.By, "err", err)
	}
}

// inStep brings every message that shows a in step with it: the one the
// vote came from, the one the store records, and every recorded copy (the
// direct messages of an escalation), through every MessageUpdater.
func (d *Decider) inStep(v Vote, a pending.Ask, delay time.Duration) {
	if len(d.cfg.Messages) == 0 {
		return
	}
	for _, at := range EachMessage(a, v.On) {
		for _, u := range d.cfg.Messages {
			d.background(delay, at, u)
		}
	}
}

// background updates a's message through u after delay (at once when
// Close comes first), off the vote's path; Close waits for it.
func (d *Decider) background(delay time.Duration, a pending.Ask, u MessageUpdater) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		d.log.Warn("decider closed; message update skipped", "ask", a.ID)
		return
	}
	d.inflight.Go(func() {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-d.closing:
				t.Stop()
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.UpdateTimeout)
		defer cancel()
		if err := u.Update(ctx, a); err != nil {
			d.log.Warn("could not update the ask's message", "ask", a.ID, "err", err)
		}
	})
}

// EachMessage is a once per message that shows it, each copy naming that
// one message alone: on (the message a vote or click came from, if any)
// first, then the one the store records, then every recorded copy (the
// direct messages of an escalation). Every surface that brings an Ask's
// messages in step after a decision goes through it.
func EachMessage(a pending.Ask, on *Message) []pending.Ask {
	var targets [][2]string
	if on != nil {
		targets = append(targets, [2]string{on.Channel, on.TS})
	}
	for _, m := range append([][2]string{{a.Channel, a.MessageTS}}, a.Copies.List()...) {
		if !slices.Contains(targets, m) {
			targets = append(targets, m)
		}
	}
	var out []pending.Ask
	for _, m := range targets {
		if m[0] == "" || m[1] == "" {
			continue
		}
		at := a
		at.Channel, at.MessageTS, at.Copies = m[0], m[1], "" // one message each
		out = append(out, at)
	}
	return out
}
