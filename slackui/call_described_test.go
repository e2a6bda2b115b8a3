package slackui

import (
	"strings"
	"testing"

	"github.com/askops/askops/pending"
)

// TestMessageShowsTheDescribedCall: a described call renders exactly as
// the same call given only by arguments did, whatever the arguments hold
// (the renderer reads the description, not the arguments' keys), and
// a described command is shown as a command even when the arguments carry
// keys no description names (the agent's timeout_seconds).
func TestMessageShowsTheDescribedCall(t *testing.T) {
	cases := []struct {
		name, tool, args string
		call             pending.Call
	}{
		{"command", "bash", `{"command":"git push origin main"}`,
			pending.Call{Kind: pending.CallCommand, Command: "git push origin main"}},
		{"command with its cwd", "bash", `{"command":"make","cwd":"/srv/other"}`,
			pending.Call{Kind: pending.CallCommand, Command: "make", Cwd: "/srv/other"}},
		{"write", "write_file", `{"path":"deploy/config.yaml","content":"replicas: 3\ntoken: ghp_0123456789abcdefghijABCDEFGHIJ012345\n"}`,
			pending.Call{Kind: pending.CallWrite, Path: "deploy/config.yaml", Content: "replicas: 3\ntoken: ghp_0123456789abcdefghijABCDEFGHIJ012345\n"}},
		{"edit", "edit_file", `{"path":"Makefile","old_string":"test:\n\tgo test ./...\n","new_string":"test:\n\tgo test -race ./...\n"}`,
			pending.Call{Kind: pending.CallEdit, Path: "Makefile", Old: "test:\n\tgo test ./...\n", New: "test:\n\tgo test -race ./...\n"}},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			byArgs := sampleAsk()
			byArgs.Tool, byArgs.Args = tc.tool, tc.args
			described := byArgs
			described.Args, described.Call = `{"model_wrote":"something else","timeout_seconds":5}`, tc.call
			want := messageJSON(t, RenderAsk(byArgs, RenderOptions{Now: testNow, GrantScope: testScope}))
			got := messageJSON(t, RenderAsk(described, RenderOptions{Now: testNow, GrantScope: testScope}))
			if got != want {
				t.Errorf("described call renders\n%s\nwant (as by its arguments)\n%s", got, want)
			}
		})
	}

	a := sampleAsk()
	a.Args = `{"command":"echo   hi","timeout_seconds":5}`
	a.Call = pending.Call{Kind: pending.CallCommand, Command: "echo hi"}
	j := messageJSON(t, RenderAsk(a, RenderOptions{Now: testNow}))
	if strings.Contains(j, "timeout_seconds") || !strings.Contains(j, "echo hi") {
		t.Errorf("a described command is not shown as the command that runs:\n%s", j)
	}
}
