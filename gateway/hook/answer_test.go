package hook

import (
	"strings"
	"testing"
)

// A hook is told what was tried before an Ask expired, never a bare "timed out".
func TestDenyMessageSaysWhatWasTried(t *testing.T) {
	tried := Ask{Status: expired, Reason: "nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m)"}
	if got := DenyMessage(tried); !strings.HasPrefix(got, "askops: expired: nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m).") {
		t.Errorf("DenyMessage = %q", got)
	}
	bare := Ask{Status: expired, Reason: DeadlineReason}
	if got := DenyMessage(bare); !strings.Contains(got, "nobody decided in time") {
		t.Errorf("DenyMessage of a bare expiry = %q", got)
	}
}

// A person's deny reaches the model as one: who denied, where, why, and
// to stop and ask its user, first (Claude Code puts only its own prefix
// before it). The policy's deny does not read as a person's.
func TestDenyMessageOfAPerson(t *testing.T) {
	const stop = " The action was not performed. Do not retry this call; ask the user."
	for _, c := range []struct {
		by, reason, want string
	}{
		{"U0123ABCD", "not during the freeze", "Denied by U0123ABCD in Slack: not during the freeze." + stop},
		{"U0123ABCD", "", "Denied by U0123ABCD in Slack (no reason given)." + stop},
		{"console:alice", "use the staging cluster", "Denied by alice in the askops console: use the staging cluster." + stop},
		{"laptop-ana", "no", "Denied by laptop-ana through the askops API: no." + stop},
		{PolicyDecider, "git push --force: never rewrite shared history", "askops: denied by askops policy: git push --force: never rewrite shared history. The action was not performed; do not retry it unchanged."},
	} {
		a := Ask{Status: denied, DecidedBy: c.by, Reason: c.reason}
		if got := DenyMessage(a); got != c.want {
			t.Errorf("denied by %q:\n got %q\nwant %q", c.by, got, c.want)
		}
	}
}
