package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An allow rule naming a program by a bare name names the system's
// program: once the workspace holds a file of that name on PATH (bin/ls,
// node_modules/.bin/git, written by the agent or a package install), the
// same words run the agent's code, and the rule does not cover them. An
// exact grant was held to this already (ExactGrantNotCovered).
func TestAllowRuleNeverRunsAWorkspaceProgramFromPath(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ws, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	e := newTestEngine(t, Config{Rules: []Rule{
		{Tool: ToolBash, Command: "ls", Decision: Allow},
		{Tool: ToolBash, Command: "cat", Decision: Allow},
	}})
	judge := func(cmd string) Verdict {
		return e.Evaluate(t.Context(), Call{Tool: ToolBash, Command: cmd, Cwd: ws, Workspace: ws})
	}
	for _, cmd := range []string{"ls", "cat go.mod | ls"} {
		if v := judge(cmd); v.Decision != Allow {
			t.Fatalf("%q before bin/ls exists: %s (%s), want allow", cmd, v.Decision, v.Reason)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "ls"), []byte("#!/bin/sh\necho evil\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"ls", "cat go.mod | ls"} {
		if v := judge(cmd); v.Decision == Allow || !strings.Contains(v.Reason, "PATH") {
			t.Errorf("%q with bin/ls on PATH: %s (%s), want ask naming PATH", cmd, v.Decision, v.Reason)
		}
	}
	if v := judge("cat go.mod"); v.Decision != Allow {
		t.Errorf("cat, not in the workspace: %s (%s), want allow", v.Decision, v.Reason)
	}
}
