package foragent

import (
	"testing"

	"github.com/askops/askops/pending"
)

// The model reads who agreed on a quorum Ask, not a bare "denied".
func TestWithTally(t *testing.T) {
	q := pending.Ask{Request: pending.Request{Approvals: 2}, Votes: "U_ANA", Status: pending.Status(pending.Denied), DecidedBy: "U_BO", DecisionReason: "not on a Friday"}
	if got := withTally(q); got != "not on a Friday; after 1 of 2 approvals (U_ANA)" {
		t.Errorf("deny: %q", got)
	}
	q.Status, q.DecisionReason, q.Votes = pending.Status(pending.Approved), "", "U_ANA\nU_BO"
	if got := withTally(q); got != "approved with 2 of 2 approvals (U_ANA, U_BO)" {
		t.Errorf("approve: %q", got)
	}
	if got := withTally(pending.Ask{DecisionReason: "no"}); got != "no" {
		t.Errorf("one approval: %q", got)
	}
}
