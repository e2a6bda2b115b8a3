package policy

import (
	"context"
	"strings"
	"testing"
)

// panickingGrants is a grant store with a bug: it panics.
type panickingGrants struct{}

func (panickingGrants) GrantFor(context.Context, string, Call) (string, bool, error) {
	panic("a bug")
}

// A reading that fails (a panic on a call nobody foresaw) asks, says why,
// and leaves the process that asked running: never an allow.
func TestAFailedReadingAsks(t *testing.T) {
	e, err := New(Config{Rules: []Rule{{Tool: ToolBash, Command: "ls", Decision: Allow}}, Grants: panickingGrants{}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: "make deploy", Cwd: ws, Workspace: ws, SessionID: "s"})
	if v.Decision != Ask || !strings.Contains(v.Reason, "internal error") {
		t.Fatalf("got %s (%s), want ask for an internal error", v.Decision, v.Reason)
	}
}
