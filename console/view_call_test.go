package console

import (
	"testing"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// TestViewShowsTheDescribedCall: the page reads a call's description, not
// its arguments' keys; a call recorded with arguments only still shows as
// before; an edit is the diff the Slack message shows.
func TestViewShowsTheDescribedCall(t *testing.T) {
	var a pending.Ask
	a.Cwd = "/srv/app"
	a.Args = `{"path":"a.txt","content":"old"}`
	if v := viewCall(askview.Of(a, 0)); v.Kind != "write" || v.Path != "a.txt" || v.Body != "old" {
		t.Errorf("by arguments: %+v", v)
	}
	a.Args = `{"command":"echo   hi","timeout_seconds":5}`
	a.Call = pending.Call{Kind: pending.CallCommand, Command: "echo hi", Cwd: "/srv"}
	if v := viewCall(askview.Of(a, 0)); v.Kind != "command" || v.Command != "echo hi" || v.CwdArg != "/srv" || len(v.Programs) != 1 {
		t.Errorf("described command: %+v", v)
	}
	a.Call = pending.Call{Kind: pending.CallEdit, Path: "m.go", Old: "a", New: "b"}
	if v := viewCall(askview.Of(a, 0)); v.Kind != "edit" || v.Path != "m.go" ||
		len(v.Diff) != 2 || v.Diff[0] != (diffLine{"-", "a"}) || v.Diff[1] != (diffLine{"+", "b"}) {
		t.Errorf("described edit: %+v", v)
	}
}
