package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// The hook's answer says where a quorum stood, never a bare "denied".
func TestHookAnswersTellTheTally(t *testing.T) {
	q := pending.Ask{Request: pending.Request{Approvals: 2}, Votes: "U_ANA", Status: pending.Status(pending.Denied), DecidedBy: "U_BO"}
	if got := hook.DenyMessage(answerOf(q)); !strings.HasPrefix(got, "Denied by U_BO in Slack after 1 of 2 approvals (U_ANA) (no reason given).") {
		t.Errorf("deny: %q", got)
	}
	q.Status, q.DecidedBy, q.Votes = pending.Status(pending.Expired), "", ""
	if got := hook.DenyMessage(answerOf(q)); !strings.Contains(got, "timed out after 0 of 2 approvals") {
		t.Errorf("expiry: %q", got)
	}
	q.Status, q.DecidedBy, q.Votes = pending.Status(pending.Approved), "U_BO", "U_ANA\nU_BO"
	if got := claudeAnswerOf(hook.EventPreToolUse, q, "Read", nil).HookSpecificOutput.PermissionDecisionReason; got != "askops: approved by U_BO (2 of 2 approvals (U_ANA, U_BO))" {
		t.Errorf("approval: %q", got)
	}
	one := pending.Ask{Status: pending.Status(pending.Denied), DecidedBy: "U_BO"}
	if got := hook.DenyMessage(answerOf(one)); strings.Contains(got, "approvals") {
		t.Errorf("a one-approval Ask mentions a tally: %q", got)
	}
	// The API's JSON carries the quorum both ways, and a client words it
	// as the serve does.
	b, _ := json.Marshal(NewAskJSON(q))
	var read hook.Ask
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	if back := AskOf(read); back.Approvals != 2 || back.Votes != q.Votes {
		t.Errorf("round trip through the API's JSON: %d %q", back.Approvals, back.Votes)
	}
	q.Status, q.Votes = pending.Status(pending.Denied), "U_ANA"
	if client, serve := hook.DenyMessage(read), hook.DenyMessage(answerOf(q)); client == serve {
		t.Errorf("the approved Ask read back words as the denied one: %q", client)
	}
	b, _ = json.Marshal(NewAskJSON(q))
	_ = json.Unmarshal(b, &read)
	if client, serve := hook.DenyMessage(read), hook.DenyMessage(answerOf(q)); client != serve {
		t.Errorf("a client words the denial %q, the serve %q", client, serve)
	}
}
