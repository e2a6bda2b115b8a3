package chatops

import (
	"context"
	"regexp"
	"strings"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/askview"
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
		SessionName: runSessionName(r), SessionStarted: r.SessionStarted,
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

// runSessionName is a run's session as a person knows it: the name its
// starter gave it (a Slack thread's first words, see threadName), else
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

// slackMarkup is Slack's markup in a message's text: a link or a channel
// with the text it shows (<https://x|x>, <#C1|ops>), or without (<!here>).
var slackMarkup = regexp.MustCompile(`<([^<>|]*)(?:\|([^<>]*))?>`)

// threadName is a run's Slack thread as a person knows it: by the words
// its run was asked in, as they wrote them ("thread 'deploy v1.4'"): the
// prompt's first line, Slack's markup read back as the text it shows,
// cut to 40 runes with a mark. "" for a prompt with no words.
func threadName(task string) string {
	line := ""
	for l := range strings.SplitSeq(task, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	line = slackMarkup.ReplaceAllStringFunc(line, func(m string) string {
		sub := slackMarkup.FindStringSubmatch(m)
		switch {
		case sub[2] != "" && strings.HasPrefix(sub[1], "#"):
			return "#" + sub[2]
		case sub[2] != "":
			return sub[2]
		case strings.HasPrefix(sub[1], "!"):
			return "@" + strings.TrimPrefix(sub[1], "!")
		}
		return sub[1]
	})
	line = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(line)
	line = strings.Join(strings.Fields(line), " ")
	if line == "" {
		return ""
	}
	return "thread " + askview.QuoteName(line)
}
