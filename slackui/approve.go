package slackui

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// AskStore is what the waiting side needs from the pending store.
type AskStore interface {
	Create(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, error)
	Decide(ctx context.Context, id string, outcome pending.Outcome, by, reason string) (pending.Ask, error)
	Wait(ctx context.Context, id string) (pending.Ask, error)
	SetMessage(ctx context.Context, id, channel, ts string) error
}

// GrantRecorder records session grants; grants.Store satisfies it.
type GrantRecorder interface {
	Record(ctx context.Context, sessionID string, s grants.Scope, by string, ttl time.Duration) (grants.Grant, error)
}

// AskNotifier posts and updates Ask messages; *Notifier satisfies it.
type AskNotifier interface {
	Post(ctx context.Context, a pending.Ask) (channel, ts string, err error)
	Update(ctx context.Context, a pending.Ask) error
}

// ApproverConfig wires an Approver.
type ApproverConfig struct {
	Asks     AskStore
	Grants   GrantRecorder
	Notifier AskNotifier
	// Timeout is how long a human has to decide; after it the Ask expires
	// (and the call does not run).
	Timeout time.Duration
	// SessionTTL is the life of a grant recorded by "Approve for session".
	SessionTTL time.Duration
	// ScopeFor is the grant an "Approve for session" records; it must be the
	// same function that feeds NotifierConfig.ScopeText (see
	// SessionScopeText). Default: DefaultScopeFor.
	ScopeFor func(pending.Ask) (grants.Scope, error)
	Logger   *slog.Logger
	// UpdateTimeout bounds the bookkeeping after the waiter itself ended the
	// Ask (its ctx may be cancelled by then): recording the outcome, the
	// message update, and how long a post in flight when the run stopped
	// may still take to answer; default 10s.
	UpdateTimeout time.Duration
}

// Approver asks a human in Slack and waits for the answer. It satisfies the
// agent's Approver interface.
type Approver struct {
	cfg ApproverConfig
	log *slog.Logger
}

// systemDecider is who records outcomes no human chose.
const systemDecider = "askops"

// NewApprover returns an Approver.
func NewApprover(cfg ApproverConfig) (*Approver, error) {
	if cfg.Asks == nil || cfg.Notifier == nil || cfg.Grants == nil {
		return nil, errors.New("slackui: approver needs an ask store, a grant store and a notifier")
	}
	if cfg.Timeout <= 0 {
		return nil, errors.New("slackui: approver timeout must be positive")
	}
	if cfg.SessionTTL <= 0 {
		return nil, errors.New("slackui: session ttl must be positive")
	}
	if cfg.ScopeFor == nil {
		cfg.ScopeFor = DefaultScopeFor
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.UpdateTimeout <= 0 {
		cfg.UpdateTimeout = 10 * time.Second
	}
	return &Approver{cfg: cfg, log: cfg.Logger}, nil
}

// Approve records an Ask for req, posts it, and waits until it ends. It
// always returns a terminal Ask and never waits past the deadline: if the
// Ask cannot be posted it ends Unavailable at once.
func (p *Approver) Approve(ctx context.Context, req pending.Request) pending.Ask {
	a, err := p.cfg.Asks.Create(ctx, req, p.cfg.Timeout)
	if err != nil {
		p.log.Error("could not record ask; failing closed", "run", req.RunID, "tool", req.Tool, "err", err)
		return pending.Ask{
			Request: req, Status: pending.Status(pending.Unavailable), DecidedBy: systemDecider,
			DecisionReason: "the approval request could not be recorded",
		}
	}
	postCtx, endPost := p.postContext(ctx, a.Deadline)
	channel, ts, err := p.cfg.Notifier.Post(postCtx, a)
	endPost()
	if err != nil {
		return p.notPosted(ctx, a, err)
	}
	sctx, cancel := p.detached(ctx)
	if err := p.cfg.Asks.SetMessage(sctx, a.ID, channel, ts); err != nil {
		// Clicks still work: interactions update the message they came from.
		p.log.Warn("could not save where the ask was posted", "ask", a.ID, "err", err)
	}
	cancel()

	var final pending.Ask
	if ctx.Err() != nil {
		// The run stopped while the message was on its way: it exists
		// now, so end the Ask and let the update below take its buttons.
		final = p.endUnanswered(ctx, a, pending.Cancelled, "the run stopped while the approval request was being posted")
	} else if final, err = p.cfg.Asks.Wait(ctx, a.ID); err != nil {
		// Wait's own Unavailable is not recorded (the store failed): end
		// the stored Ask as this call ends, so its buttons cannot later
		// "approve" a call that never ran, and its audit pair says what
		// happened. A decision that got there first stands.
		p.log.Warn("waiting for ask failed; ending it", "ask", a.ID, "status", final.Status, "err", err)
		outcome, reason := pending.Unavailable, "askops lost track of the approval request (the store failed)"
		if ctx.Err() != nil {
			outcome, reason = pending.Cancelled, "the run stopped while askops could not reach its store"
		}
		final = p.endUnanswered(ctx, a, outcome, reason)
	}
	if final.Channel == "" {
		final.Channel, final.MessageTS = channel, ts
	}
	switch o, _ := final.Outcome(); o {
	case pending.ApprovedSession:
		// The store keeps the arguments redacted; the grant is scoped to
		// the exact call this process asked about.
		final.Request = req
		p.recordGrant(ctx, final)
	case pending.Expired, pending.Cancelled, pending.Unavailable:
		// Nobody clicked, so no interaction will update the message; the
		// waiter does (the sweep may too; the update is idempotent).
		p.updateDetached(ctx, final)
	case "":
		// Wait broke its contract; never let a non-terminal Ask through.
		final.Status = pending.Status(pending.Unavailable)
		final.DecidedBy, final.DecisionReason = systemDecider, "the ask store returned no outcome"
	}
	return final
}

// notPosted ends an Ask nobody could see: Cancelled if the caller gave up,
// else Unavailable with the reason.
func (p *Approver) notPosted(ctx context.Context, a pending.Ask, postErr error) pending.Ask {
	outcome, reason := pending.Unavailable, "the approval request could not be posted to Slack"
	if errors.Is(postErr, ErrNoChannel) {
		reason = "no Slack channel is configured for approval requests"
	}
	if ctx.Err() != nil {
		outcome, reason = pending.Cancelled, "the run stopped before the approval request was posted"
	}
	p.log.Error("ask not posted; failing closed", "ask", a.ID, "outcome", outcome, "err", postErr)
	return p.endUnanswered(ctx, a, outcome, reason)
}

// endUnanswered records an outcome no human chose, even if ctx has ended.
// It is a compare-and-set: a decision that got there first stands and is
// returned.
func (p *Approver) endUnanswered(ctx context.Context, a pending.Ask, outcome pending.Outcome, reason string) pending.Ask {
	dctx, cancel := p.detached(ctx)
	defer cancel()
	final, err := p.cfg.Asks.Decide(dctx, a.ID, outcome, systemDecider, reason)
	if err == nil {
		return final
	}
	if first, ok := pending.ConflictAsk(err); ok {
		return first // someone (or the deadline) ended it first; that stands
	}
	p.log.Error("could not record the ask's outcome", "ask", a.ID, "outcome", outcome, "err", err)
	a.Status, a.DecidedBy, a.DecisionReason = pending.Status(outcome), systemDecider, reason
	return a
}

// postContext bounds the post of an Ask by its deadline but not by the
// run's cancellation: a chat.postMessage cut off in flight may still have
// created the message, and without its ts nothing could ever take its
// buttons away. Once ctx ends the post gets UpdateTimeout more to answer,
// so a stopped run is not held until the deadline by a slow Slack.
func (p *Approver) postContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	stop := context.AfterFunc(ctx, func() {
		grace := time.AfterFunc(p.cfg.UpdateTimeout, cancel)
		context.AfterFunc(pctx, func() { grace.Stop() })
	})
	return pctx, func() { stop(); cancel() }
}

// detached is a context for the bookkeeping after the waiter's own ending,
// when ctx may already be cancelled.
func (p *Approver) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), p.cfg.UpdateTimeout)
}

// recordGrant records the session grant of an Ask this process's waiter saw
// end approved_session. Only the winning decision gets here, so a losing
// "for session" click leaves nothing behind. A failure is logged; the call
// still runs this once, as approved.
func (p *Approver) recordGrant(ctx context.Context, a pending.Ask) {
	scope, err := p.cfg.ScopeFor(a)
	if err != nil {
		p.log.Error("approved for session but no scope could be derived; no grant recorded", "ask", a.ID, "err", err)
		return
	}
	gctx, cancel := p.detached(ctx)
	defer cancel()
	g, err := p.cfg.Grants.Record(gctx, a.SessionID, scope, a.DecidedBy, p.cfg.SessionTTL)
	if err != nil {
		p.log.Error("could not record session grant", "ask", a.ID, "session", a.SessionID, "scope", scope.String(), "err", err)
		return
	}
	p.log.Info("session grant recorded", "ask", a.ID, "grant", g.ID, "session", a.SessionID, "scope", scope.String(), "by", a.DecidedBy)
}

func (p *Approver) updateDetached(ctx context.Context, a pending.Ask) {
	uctx, cancel := p.detached(ctx)
	defer cancel()
	if err := p.cfg.Notifier.Update(uctx, a); err != nil {
		p.log.Warn("could not update ask message", "ask", a.ID, "err", err)
	}
}

// DefaultScopeFor is the grant "Approve for session" records for a: the
// policy's default scope (grants.ScopeFor) of the call the Ask is about,
// rebuilt from the stored arguments.
//
// A file tool's scope is built from the path in the form the policy judged
// the call (Request.Path: absolute, symlinks resolved), because that is the
// form it will see the same call in next time. The model's own path may go
// through a symlink: with alias -> real, "alias/a.txt" reaches the policy as
// <workspace>/real/a.txt, so a grant on "alias/a.txt" would never cover the
// identical call again, and the dialog would name another path than the
// message's summary. A grant on "real/a.txt" covers exactly that file, by
// whatever link it is reached, and nothing once the link points elsewhere:
// it never widens. Asks without Request.Path (recorded by callers that do
// not resolve paths) fall back to the path as given.
func DefaultScopeFor(a pending.Ask) (grants.Scope, error) {
	var args struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	if a.Args != "" {
		if err := json.Unmarshal([]byte(a.Args), &args); err != nil {
			return grants.Scope{}, err
		}
	}
	c := policy.Call{
		Tool: a.Tool, Cwd: a.Cwd, Workspace: a.Workspace, SessionID: a.SessionID,
	}
	switch {
	case a.Tool == "bash":
		c.Command = args.Command
	case a.Path != "":
		c.Path = a.Path
	default:
		c.Path = args.Path
	}
	return grants.ScopeFor(c)
}

// SessionScopeText turns a scope function into NotifierConfig.ScopeText: the
// confirm dialog states exactly the scope the Approver will record, and an
// Ask without a session scope gets no session button.
func SessionScopeText(scopeFor func(pending.Ask) (grants.Scope, error)) func(pending.Ask) string {
	if scopeFor == nil {
		scopeFor = DefaultScopeFor
	}
	return func(a pending.Ask) string {
		if a.SessionID == "" {
			return ""
		}
		s, err := scopeFor(a)
		if err != nil {
			return ""
		}
		return s.String()
	}
}
