package console

import (
	"fmt"
	"strings"

	"github.com/askops/askops/pending"
)

// The console's part in quorum and self-approval (issue 12).
//
// Who the console's user is: people sign in as Config.User and decide as
// "console:" + User. Runs record their starter as a Slack user id (runs
// started in Slack), "USER@host" (bot run, bot ask) or an API token's
// name. The console can tell only one of these apart: a run its own user
// started on some host (User "dana", started by "dana@build-1"), which is
// the console's usual case, since `bot run` and `bot ask` take $USER and
// so does console.user by default. That is treated as the same person, and
// refused unless self-approval is allowed; a Slack id cannot be matched to
// a console name, and is not refused. In the console-only setup the
// console's user is the one approver there is, so the wiring names them
// the Decider's OnlyApprover, the rule's "only approver" exception.
//
// Toward a quorum the console's user is a person only as the Slack user
// console.slack_user names (the store counts votes as people:
// pending.Options.People); otherwise they may be any Slack voter, and
// their approval beside a Slack user's adds nobody (voteCounted says so).

// startedBy reports whether the console's user started a's run.
func startedBy(a pending.Ask, user string) bool {
	s := a.StartedBy
	return user != "" && (s == user || s == DeciderPrefix+user || strings.HasPrefix(s, user+"@"))
}

// voteCounted is the flash after an approval that did not yet complete a
// quorum (before is the Ask as read before it). A quorum counts people
// (pending.Ask.Counted): the console's user is one only where the config
// links them to their Slack user, and otherwise may be any Slack voter,
// so their approval may be recorded without adding to the count.
func voteCounted(before, a pending.Ask) string {
	more := a.Needed() - a.Counted()
	if a.Counted() <= before.Counted() {
		return fmt.Sprintf("Your approval is recorded, but it does not add a person to the count: %s. The call runs once %d more approver(s) approve.", a.Tally(), more)
	}
	return fmt.Sprintf("Your approval is counted: %s. The call runs once %d more approver(s) approve.", a.Tally(), more)
}

// repeatVote is the flash when the same person approves twice.
func repeatVote(a pending.Ask) string {
	return fmt.Sprintf("You have already approved this request, and one person counts once (%s); nothing changed.", a.Tally())
}
