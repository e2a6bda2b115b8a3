package slackui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// The Ask message's part in quorum, self-approval and time-boxed grants:
//
//   - an Ask that needs N approvals says so and who has approved so far
//     ("1 of 2 approvals: @ana"), on every vote, and offers no session
//     approval (pending refuses one anyway);
//   - with approvals.grant_durations the session choice is several
//     buttons, "Approve for 15 min", "Approve for 1 h", "Approve for
//     session", each confirming the scope and how long;
//   - a click that is refused (the run's starter approving it, a second
//     approval by the same person) is told why, only to the clicker, and
//     audited.

// ActionApproveFor prefixes the action id of a time-boxed "Approve for
// 15 min" button; the rest is the duration in whole seconds ("…_900").
// The button's value is the Ask id, as for every Ask button.
const ActionApproveFor = "askops_approve_for_"

// blockQuorum is the "1 of 2 approvals" line of an open quorum Ask.
const blockQuorum = "askops_quorum"

// ApproveForAction is the action id of the "Approve for d" button.
func ApproveForAction(d time.Duration) string {
	return ActionApproveFor + strconv.FormatInt(int64(d/time.Second), 10)
}

// parseApproveFor reads ApproveForAction.
func parseApproveFor(actionID string) (time.Duration, bool) {
	s, ok := strings.CutPrefix(actionID, ActionApproveFor)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > int64(1<<62/time.Second) {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// grantSpan is what a grant of life covers: "session" (life 0) or "15 min".
func grantSpan(life time.Duration) string {
	if life <= 0 {
		return "session"
	}
	return grants.DurationText(life)
}

// sessionButtons are the session choices of an open Ask: none on a quorum
// Ask or without a stated scope; else one per grant duration, then "for
// session". footer says why a choice is missing.
func sessionButtons(a pending.Ask, o RenderOptions, cv askview.View) (buttons []slack.BlockElement, footer []string) {
	if o.GrantScope == "" || a.Needed() > 1 {
		return nil, nil
	}
	for _, life := range append(askview.GrantLives(a, slices.Clone(o.GrantDurations)), 0) {
		confirm, ok := sessionConfirm(o.GrantScope, cv, life)
		if !ok {
			return nil, []string{"_Approve for session is not offered: its scope is too long to state in the confirmation._"}
		}
		id, label := ActionApproveSession, "Approve for session"
		if life > 0 {
			id, label = ApproveForAction(life), "Approve for "+grants.DurationText(life)
		}
		buttons = append(buttons, buttonElem(id, label, a.ID).WithConfirm(confirm))
	}
	return buttons, nil
}

// quorumBlock is the line of an open Ask that needs several approvals.
func quorumBlock(a pending.Ask) slack.Block {
	need := a.Needed()
	if need < 2 {
		return nil
	}
	s := fmt.Sprintf("*Needs %d approvals from different people* — %d of %d approvals", need, a.Counted(), need)
	if a.Votes != "" {
		s += ": " + votersText(a) // "1 of 2 approvals: @ana", as issue 12 words it
	}
	return contextBlock(blockQuorum, s+uncountedText(a))
}

// quorumGist is the notification text's note on a quorum: " (1 of 2
// approvals)".
func quorumGist(a pending.Ask) string {
	if a.Needed() < 2 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d approvals)", a.Counted(), a.Needed())
}

// doneTally adds to a decided quorum Ask's outcome line where the count
// stood: who approved with whom, or how far it got before a deny or the
// deadline.
func doneTally(a pending.Ask, o pending.Outcome) string {
	need := a.Needed()
	if need < 2 {
		return ""
	}
	n := a.Counted()
	if a.Votes == "" {
		return fmt.Sprintf("\n_0 of %d approvals_", need)
	}
	if o.Approves() {
		return fmt.Sprintf("\n_%d of %d approvals: %s_", n, need, votersText(a))
	}
	return fmt.Sprintf("\n_Ended after %d of %d approvals: %s_", n, need, votersText(a))
}

// uncountedText says, where the count is less than the voters listed,
// why (pending.Ask.Counted): "" otherwise.
func uncountedText(a pending.Ask) string {
	if a.Counted() >= a.Votes.Count() {
		return ""
	}
	return "\n_" + pending.UncountedNote + "._"
}

func votersText(a pending.Ask) string {
	vs := a.Votes.List()
	shown := make([]string, len(vs))
	for i, v := range vs {
		shown[i] = personText(v)
	}
	return strings.Join(shown, ", ")
}

// Only reports whether user is the one approver configured: no user
// groups, nobody-in-the-channel, and the approver list is just user. Such
// an approver may approve the runs they start themselves (someone must).
func (a *Approvers) Only(user string) bool {
	return !a.cfg.AnyoneInChannel && len(a.cfg.Groups) == 0 && len(a.cfg.Users) == 1 && a.cfg.Users[0] == user
}

// Texts the clicker sees when a vote changed the count but not the outcome,
// or was refused.
func voteCountedText(a pending.Ask) string {
	s := fmt.Sprintf("Your approval is counted: %d of %d approvals. The call runs once %d more approver(s) approve; one Deny ends it.",
		a.Counted(), a.Needed(), a.Needed()-a.Counted())
	if a.Counted() < a.Votes.Count() {
		s += " (" + pending.UncountedNote + ".)"
	}
	return s
}

func repeatVoteText(a pending.Ask) string {
	return fmt.Sprintf("You have already approved this request, and one person counts once: it needs %d approvals from different people (%d so far). Ask another approver.",
		a.Needed(), a.Counted())
}

// SelfApprovalAuthority is the approvers with approvals.self_approval as a
// per-Ask rule (AskAuthority), for the App Home: the Asks of a run the
// viewer started get no buttons there when they may not approve them (they
// stay listed under the viewer's runs). Clicks are checked by
// Interactions whatever the Home shows.
type SelfApprovalAuthority struct {
	*Approvers
	Rule approval.SelfApproval
}

// MayDecideAsk implements AskAuthority.
func (s SelfApprovalAuthority) MayDecideAsk(ctx context.Context, user string, a pending.Ask) (bool, error) {
	if s.Rule.Refuses(a, user, pending.Approved, s.Only) {
		return false, nil
	}
	return s.MayDecide(ctx, user)
}
