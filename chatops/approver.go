package chatops

import (
	"context"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/pending"
)

// AgentApprover is the agent's Approver for the runs chat-ops and bot run
// start: it turns the agent's request into the store's, takes it through
// the round trip (Next), and hands back the agent's decision. The two outcome vocabularies are the same words, so the status
// passes as is; one the agent does not know (a non-terminal Ask) it refuses
// as unavailable.
type AgentApprover struct {
	Next interface {
		Approve(ctx context.Context, req pending.Request) pending.Ask
	}
}

var _ agent.Approver = AgentApprover{}

// Approve implements agent.Approver.
func (a AgentApprover) Approve(ctx context.Context, r agent.Request) agent.Decision {
	ask := a.Next.Approve(ctx, pending.Request{
		RunID: r.RunID, SessionID: r.SessionID, Label: r.Label, StartedBy: r.StartedBy,
		Tool: r.Tool, Args: r.Args, Summary: r.Summary, Path: r.Path,
		Call: pending.Call{
			Kind: pending.CallKind(r.Call.Kind), Command: r.Call.Command,
			Path: r.Call.Path, Content: r.Call.Content, Old: r.Call.Old, New: r.Call.New,
		},
		Reason: r.Reason, Rule: r.Rule, Approvals: r.Approvals, Workspace: r.Workspace, Cwd: r.Cwd,
		ReplyChannel: r.ReplyChannel, ReplyThreadTS: r.ReplyThreadTS,
		SessionName: runSessionName(r),
	})
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

// runSessionName is a run's session as a person knows it: the Slack
// thread the run was started in (its session is the thread), or the bot
// run by its id.
func runSessionName(r agent.Request) string {
	if r.ReplyThreadTS != "" {
		return "the Slack thread of run '" + r.RunID + "'"
	}
	return "bot run '" + r.RunID + "'"
}
