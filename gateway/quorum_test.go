package gateway

import (
	"strings"
	"testing"

	"github.com/askops/askops/pending"
)

// The hook's answer says where a quorum stood, never a bare "denied".
func TestHookAnswersTellTheTally(t *testing.T) {
	q := pending.Ask{Request: pending.Request{Approvals: 2}, Votes: "U_ANA", Status: pending.Status(pending.Denied), DecidedBy: "U_BO"}
	if got := DenyMessage(q); !strings.HasPrefix(got, "Denied by U_BO in Slack after 1 of 2 approvals (U_ANA) (no reason given).") {
		t.Errorf("deny: %q", got)
	}
	q.Status, q.DecidedBy, q.Votes = pending.Status(pending.Expired), "", ""
	if got := DenyMessage(q); !strings.Contains(got, "timed out after 0 of 2 approvals") {
		t.Errorf("expiry: %q", got)
	}
	q.Status, q.DecidedBy, q.Votes = pending.Status(pending.Approved), "U_BO", "U_ANA\nU_BO"
	if got := allowReason(q); got != "askops: approved by U_BO (2 of 2 approvals (U_ANA, U_BO))" {
		t.Errorf("approval: %q", got)
	}
	one := pending.Ask{Status: pending.Status(pending.Denied), DecidedBy: "U_BO"}
	if got := DenyMessage(one); strings.Contains(got, "approvals") {
		t.Errorf("a one-approval Ask mentions a tally: %q", got)
	}
	// The API's JSON carries the quorum both ways.
	back := NewAskJSON(q).ask()
	if back.Approvals != 2 || back.Votes != q.Votes {
		t.Errorf("round trip through AskJSON: %d %q", back.Approvals, back.Votes)
	}
}
