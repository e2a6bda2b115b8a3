package slackui

import (
	"context"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/pending"
)

// AskDeciders is the one answer to "may this user decide this Ask" for
// the App Home: an approver, or a target of an escalation level that has
// fired for the Ask (not before), and in either case not the run's
// starter approving it while approvals.self_approval is off (unless they
// are the only approver). Interactions apply the same three rules to every
// click, from the channel, a DM or the Home, so the Home shows buttons to
// exactly the people a click from them would be accepted of.
type AskDeciders struct {
	*Approvers
	// Escalated, if set, admits the targets of a fired level (*Escalation).
	Escalated EscalatedAuthority
	Rule      approval.SelfApproval
}

// MayDecideAsk implements AskAuthority.
func (d AskDeciders) MayDecideAsk(ctx context.Context, user string, a pending.Ask) (bool, error) {
	if d.Rule.Refuses(a, user, pending.Approved, d.Only) {
		return false, nil
	}
	ok, err := d.MayDecide(ctx, user)
	if ok || d.Escalated == nil {
		return ok, err
	}
	if esc, eerr := d.Escalated.MayDecideEscalated(ctx, user, a); esc {
		return true, nil
	} else if eerr != nil {
		return false, eerr
	}
	return false, err
}

// MayDecideSome reports whether someone who is no approver may decide
// some Asks (escalation targets), so the Home asks per Ask for everyone.
func (d AskDeciders) MayDecideSome() bool { return d.Escalated != nil }

// beyondApprovers reports whether aa may let someone who is no approver
// decide an Ask (AskDeciders with escalation), so the Home asks it per Ask
// even for them.
func beyondApprovers(aa AskAuthority) bool {
	b, ok := aa.(interface{ MayDecideSome() bool })
	return ok && b.MayDecideSome()
}
