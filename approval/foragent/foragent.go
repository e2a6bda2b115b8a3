// Package foragent is the agent's way into the approval round trip: the
// agent.Approver of every run askops starts (chat-ops in a Slack thread,
// bot run in a terminal). It turns the agent's request into the store's,
// takes it through the round trip and hands back the agent's decision.
//
// It is a package of its own, not a file of approval, so that approval
// imports no agent (and through it no model client): the round trip is the
// same for front doors that run no agent.
package foragent

import (
	"context"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// Approver is the agent's Approver for the runs chat-ops and bot run
// start: it turns the agent's request into the store's, takes it through
// the round trip (Next: the counted approval.Core, which waits parked, or
// a serve's Ask API), and hands back the agent's decision. The two outcome
// vocabularies are the same words, so the status passes as is; one the
// agent does not know (a non-terminal Ask) it refuses as unavailable.
type Approver struct {
	Next interface {
		// Launch records the Ask for req, and run takes it through the
		// rest of the round trip: done gets its end once, on a goroutine
		// of its own (approval.Core's Launch).
		Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(ctx context.Context, done func(pending.Ask)))
	}
}

var _ agent.Approver = Approver{}

// Approve implements agent.Approver: a run waiting for its human holds no
// goroutine while the round trip parks.
func (a Approver) Approve(ctx context.Context, r agent.Request, done func(agent.Decision)) {
	_, run := a.Next.Launch(ctx, request(r), 0)
	run(ctx, func(ask pending.Ask) { done(decision(ask)) })
}

// request is the store's request for the agent's.
func request(r agent.Request) pending.Request {
	req := pending.Request{
		RunID: r.RunID, SessionID: r.SessionID, Label: r.Label, StartedBy: r.StartedBy,
		Tool: r.Tool, Args: r.Args, Summary: r.Summary, Path: r.Path,
		Call: pending.Call{
			Kind: pending.CallKind(r.Call.Kind), Command: r.Call.Command,
			Path: r.Call.Path, Content: r.Call.Content, Old: r.Call.Old, New: r.Call.New,
		},
		Reason: r.Reason, Rule: r.Rule, Approvals: r.Approvals, Workspace: r.Workspace, Cwd: r.Cwd,
		ReplyChannel: r.ReplyChannel, ReplyThreadTS: r.ReplyThreadTS,
		SessionName: runSessionName(r), SessionStarted: r.SessionStarted,
	}
	shown := askview.Prepare(req, r.Reading) // the reading that was judged
	req.Shown = &shown
	return req
}

// decision is the agent's decision for the ended Ask.
func decision(ask pending.Ask) agent.Decision {
	return agent.Decision{
		AskID: ask.ID, Outcome: agent.Outcome(ask.Status), By: ask.DecidedBy,
		Reason: withTally(ask), Deadline: ask.Deadline,
	}
}

// withTally is the decision's reason as the model reads it, with where a
// quorum stood when the Ask ended: "denied by U_BO" alone would hide that
// U_ANA had approved, and "approved by U_BO" that two people did.
func withTally(a pending.Ask) string {
	t := a.Tally()
	if t == "" {
		return a.DecisionReason
	}
	if o, _ := a.Outcome(); o.Approves() {
		t = "approved with " + t
	} else {
		t = "after " + t
	}
	if a.DecisionReason == "" {
		return t
	}
	return a.DecisionReason + "; " + t
}

// runSessionName is a run's session as a person knows it: the name its
// starter gave it (a Slack thread's first words, see chatops), else
// the Slack thread the run was started in (its session is the thread), or
// the bot run by the id its terminal printed.
func runSessionName(r agent.Request) string {
	switch {
	case r.SessionName != "":
		return r.SessionName
	case r.ReplyThreadTS != "":
		return "the Slack thread of run '" + r.RunID + "'"
	}
	return "bot run '" + r.RunID + "'"
}
