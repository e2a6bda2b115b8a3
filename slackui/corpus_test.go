package slackui

import (
	"fmt"
	"testing"

	"github.com/askops/askops/internal/secretshapes"
	"github.com/askops/askops/pending"
)

// Slack never shows a shape of the redaction corpus, even from an Ask that
// did not come redacted from the store: not the approval message, not the
// decided message with a reason quoting the command, not the "Deny with
// reason" or "Show full" modals; as a command and as a file written.
func TestCorpusNeverReachesSlack(t *testing.T) {
	o := RenderOptions{Now: testNow, GrantScope: testScope}
	leaked := 0
	shapes := secretshapes.Corpus(t)
	for _, sh := range shapes {
		command := sampleAsk()
		command.Call = pending.Call{Kind: pending.CallCommand, Command: sh.In}
		command.Args, command.Summary = sh.CommandArgs(), sh.In
		write := sampleAsk()
		write.Tool, write.Summary = "write_file", ""
		write.Call = pending.Call{Kind: pending.CallWrite, Path: "/srv/app/.env", Content: sh.In}
		write.Args = sh.WriteArgs("/srv/app/.env")
		for _, a := range []pending.Ask{command, write} {
			a.Reason = fmt.Sprintf("the rules ask before %q (matches %q)", "x", sh.In)
			decided := a
			decided.Status, decided.DecidedBy = pending.Status(pending.Denied), "U0APPROVER"
			decided.DecisionReason = "not with " + sh.In
			for where, v := range map[string]any{
				"message": RenderAsk(a, o), "decided message": RenderAsk(decided, o),
				"deny modal": DenyReasonModal(a), "full text modal": FullTextModal(a, 0),
			} {
				if sh.LeakedInJSON(t, v) {
					leaked++
					t.Errorf("%s (%s): the %s shows the secret", sh.Name, a.Tool, where)
				}
			}
		}
	}
	t.Logf("shapes %d, rendered 8 ways each, leaked %d", len(shapes), leaked)
}
