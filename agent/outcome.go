package agent

import (
	"cmp"
	"fmt"
	"time"

	"github.com/askops/askops/policy"
)

// The texts below are what the model reads when a call did not run. Each
// outcome has its own, and each says the action was not performed and must
// not be retried unchanged, because a model that cannot tell "denied" from
// "nobody answered" either nags or gives up at the wrong time. A part the
// decision leaves empty (who, why) reads as a stated default (cmp.Or), never
// as a blank.

func outcomeText(d Decision) string {
	switch d.Outcome {
	case Denied:
		by := cmp.Or(d.By, "an approver")
		reason := cmp.Or(d.Reason, "no reason given")
		return fmt.Sprintf("permission denied by %s: %s. The action was not performed. Do not retry the same call; take a different approach or explain what you need.", by, reason)
	case Expired:
		deadline := "unknown"
		if !d.Deadline.IsZero() {
			deadline = d.Deadline.UTC().Format(time.RFC3339)
		}
		// The reason says what was tried when it is more than the bare
		// deadline ("nobody answered in 15m (reminded at 5m, escalated to
		// S_ONCALL at 10m)"), so the model knows people were asked.
		what := ""
		if d.Reason != "" {
			what = "expired: " + d.Reason + ". "
		}
		return fmt.Sprintf("%sno one approved this call before its deadline (%s); the action was not performed. Do not retry the same call unchanged; continue without it, or explain why it is needed so a human can approve it when asked again.", what, deadline)
	case Cancelled:
		reason := cmp.Or(d.Reason, "the run was stopped")
		return fmt.Sprintf("the approval request was cancelled before anyone decided (%s); the action was not performed. Do not retry it.", reason)
	default: // Unavailable, and anything unknown (fails closed)
		reason := cmp.Or(d.Reason, "no approver could be reached")
		return fmt.Sprintf("the approval request could not reach anyone who may approve (%s); the action was not performed. Do not retry the same call now; continue without it or explain what you need.", reason)
	}
}

func policyDeniedText(v policy.Verdict) string {
	rule := cmp.Or(v.Rule, "built-in")
	reason := cmp.Or(v.Reason, "this call is not allowed")
	return fmt.Sprintf("blocked by policy (%s): %s. The action was not performed. Do not retry the same call; take a different approach or explain what you need.", rule, reason)
}
