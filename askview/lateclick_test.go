package askview

import (
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// TestLateClickReplySaysHowItEnded: each ending gets its own sentence in
// the surface's words, and every one says the click changed nothing.
func TestLateClickReplySaysHowItEnded(t *testing.T) {
	w := Wording{
		Person: func(who string) string { return "<" + who + ">" },
		Time:   func(time.Time) string { return "at noon" },
		Reason: func(r string) string { return "«" + r + "»" },
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		status pending.Status
		reason string
		want   string
	}{
		{pending.Status(pending.Approved), "", "Already approved by <U1> at noon; your click changed nothing."},
		{pending.Status(pending.ApprovedSession), "", "Already approved for the session by <U1> at noon; your click changed nothing."},
		{pending.Status(pending.Denied), "too risky", "Already denied by <U1> at noon (reason: «too risky»); your click changed nothing."},
		{pending.Status(pending.Expired), "", "This request expired at noon: nobody decided in time, so it did not run. Your click changed nothing."},
		{pending.Status(pending.Cancelled), "", "This request was cancelled at noon (its run stopped), so it did not run. Your click changed nothing."},
		{pending.Status(pending.Cancelled), pending.ReasonAskerGone, "This request was cancelled at noon (the agent stopped waiting), so it did not run. Your click changed nothing."},
		{pending.Status(pending.Unavailable), "", "This request ended as unavailable at noon (askops could not carry it), so it did not run. Your click changed nothing."},
		{pending.StatusPending, "", "This request is still open."},
	}
	for _, tc := range cases {
		a := pending.Ask{Status: tc.status, DecidedBy: "U1", DecidedAt: at, DecisionReason: tc.reason}
		if got := LateClickReply(a, w); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.status, got, tc.want)
		}
	}
	if got := LateClickReply(pending.Ask{Status: pending.Status(pending.Approved)}, w); got != "Already approved by <>; your click changed nothing." {
		t.Errorf("without a time: %q", got)
	}
}
