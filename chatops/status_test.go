package chatops

import (
	"strings"
	"testing"

	"github.com/askops/askops/agent"
)

// The status message names the last call and, once decided, its outcome;
// a new call starts its line afresh.
func TestStatusShowsTheLastCallAndItsOutcome(t *testing.T) {
	u := newStatusUpdater(&runStatus{id: "r1", user: "U1", task: "deploy"}, nil) // no message: nothing is sent
	u.event(agent.Event{Kind: agent.EventStarted, Iteration: 1})
	u.event(agent.Event{Kind: agent.EventToolCall, Tool: "bash", Summary: "make deploy\nand more"})
	u.event(agent.Event{Kind: agent.EventAsked})
	if got := u.st.text(); !strings.Contains(got, "_waiting for approval_ · step 1 · 1 tool call(s)\nlast: `bash` make deploy …") || strings.Contains(got, "→") {
		t.Errorf("waiting:\n%s", got)
	}
	u.event(agent.Event{Kind: agent.EventDecided, Outcome: agent.ApprovedSession})
	if got := u.st.text(); !strings.HasSuffix(got, "last: `bash` make deploy … → approved for session") {
		t.Errorf("decided:\n%s", got)
	}
	u.event(agent.Event{Kind: agent.EventToolCall, Tool: "read_file", Summary: "a.txt"})
	if got := u.st.text(); !strings.HasSuffix(got, "2 tool call(s)\nlast: `read_file` a.txt") {
		t.Errorf("next call:\n%s", got)
	}
}
