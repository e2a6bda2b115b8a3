package approval

import "github.com/askops/askops/pending"

// SelfApproval is approvals.self_approval: whether whoever started a run
// (Request.StartedBy) may approve its Asks. Off by default: a run's
// starter approving its own risky call is one person deciding alone,
// which is what asking was for. Two exceptions: the only approver
// configured may (or nobody could), and anyone may deny (a denial never
// runs anything, and the starter is often the first to see the agent go
// wrong).
//
// Each front door applies it where it knows who is deciding: Slack clicks
// compare the clicker's user id with StartedBy (runs started from Slack
// record the starter's user id); the HTTP API refuses a token deciding an
// Ask it made, whatever this says.
type SelfApproval struct {
	Allowed bool // approvals.self_approval
}

// Refuses reports whether by may not cast outcome on a: an approval of
// an Ask whose run by started, while self-approval is off and by is not
// the only approver (only says who is).
func (p SelfApproval) Refuses(a pending.Ask, by string, outcome pending.Outcome, only func(string) bool) bool {
	return !p.Allowed && outcome.Approves() && by != "" && a.StartedBy == by && (only == nil || !only(by))
}

// SelfApprovalRefusal is what the refused approver is told.
const SelfApprovalRefusal = "You started this run, so you may not approve its requests (approvals.self_approval is off): another approver must. You may still deny it."

// SelfApprovalAudit is the audit reason of a refused self-approval.
func SelfApprovalAudit(a pending.Ask) string {
	return "self-approval: " + a.StartedBy + " started the run"
}
