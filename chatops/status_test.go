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

// A command's result says whether it ran inside the OS bound, and the
// status line says so: bounded, or run as a person approved it.
func TestStatusSaysWhetherTheCommandRanBounded(t *testing.T) {
	u := newStatusUpdater(&runStatus{id: "r1", user: "U1", task: "t"}, nil) // no message: nothing is sent
	u.event(agent.Event{Kind: agent.EventToolCall, Tool: "bash", Summary: "make test", Decision: "allow"})
	u.event(agent.Event{Kind: agent.EventToolResult, Tool: "bash", Bounded: "yes (landlock ABI 7, namespaces yes)"})
	if got := u.st.text(); !strings.HasSuffix(got, "last: `bash` make test · bounded: yes (landlock ABI 7, namespaces yes)") {
		t.Errorf("bounded:\n%s", got)
	}
	u.event(agent.Event{Kind: agent.EventToolCall, Tool: "bash", Summary: "git push"})
	u.event(agent.Event{Kind: agent.EventDecided, Outcome: agent.Approved, By: "U_ANA"})
	u.event(agent.Event{Kind: agent.EventToolResult, Tool: "bash", Bounded: "no, approved by U_ANA"})
	if got := u.st.text(); !strings.HasSuffix(got, "→ approved · bounded: no, approved by U_ANA") {
		t.Errorf("approved:\n%s", got)
	}
	if got := progressLine(agent.Event{Kind: agent.EventToolResult, Iteration: 2, Bounded: "no, approved by U_ANA"}, "Slack"); got != "[2] ran, bounded: no, approved by U_ANA" {
		t.Errorf("progress line %q", got)
	}
}
