package chatops

import (
	"strings"
	"testing"
)

// TestStopSaysWhatIsWrongWithTheID: a run id the session store refuses
// (too long) is answered by what is wrong with it, mapped from the store's
// error code, not by "try again", which would not help.
func TestStopSaysWhatIsWrongWithTheID(t *testing.T) {
	o := newTestOps(t, testOptions{})
	long := strings.Repeat("r", 300)
	r := o.slash(t, "COPS", approverID, "stop "+long)
	if !strings.Contains(r.Text, "is not a run id: run id longer than 256 bytes.") || strings.Contains(r.Text, "try again") {
		t.Errorf("reply = %q", r.Text)
	}
}
