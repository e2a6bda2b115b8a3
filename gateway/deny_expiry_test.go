package gateway

import (
	"strings"
	"testing"

	"github.com/askops/askops/pending"
)

// A hook is told what was tried before an Ask expired, never a bare "timed out".
func TestDenyMessageSaysWhatWasTried(t *testing.T) {
	tried := pending.Ask{Status: pending.Status(pending.Expired), DecisionReason: "nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m)"}
	if got := DenyMessage(tried); !strings.HasPrefix(got, "askops: expired: nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m).") {
		t.Errorf("DenyMessage = %q", got)
	}
	bare := pending.Ask{Status: pending.Status(pending.Expired), DecisionReason: pending.DeadlineReason}
	if got := DenyMessage(bare); !strings.Contains(got, "nobody decided in time") {
		t.Errorf("DenyMessage of a bare expiry = %q", got)
	}
}
