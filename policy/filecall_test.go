package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a door knows of the agent's file system travels in the Call, and
// one Evaluate judges it (filecall.go): every reading of a path a file
// system askops does not know may give, a search's files, a write nobody
// resolved, the .git rule, a script's question, a network approval's
// command.
func TestWhatTheDoorKnows(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"src/a.go", "src/.env", "docs/x.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolWriteFile, Path: "src/**", Decision: Allow},
		{Tool: ToolWriteFile, Path: "Makefile", Decision: Allow},
		{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		{Tool: ToolReadFile, Path: "secrets/**", Decision: Ask},
		{Tool: ToolBash, Command: "ls", Decision: Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) Call {
		return Call{Tool: ToolReadFile, Safety: ReadOnly, Path: p, Workspace: ws, Resolved: true}
	}
	write := func(p string) Call {
		return Call{Tool: ToolWriteFile, Safety: SideEffect, Path: p, Workspace: ws, Resolved: true}
	}
	with := func(c Call, f func(*Call)) Call { f(&c); return c }
	cases := []struct {
		name string
		c    Call
		want Decision
		why  string
	}{
		{"a resolved write a rule allows", write(ws + "/src/a.go"), Allow, "allowed by rule"},
		{"the same write unresolved", with(write(ws+"/src/a.go"), func(c *Call) { c.Resolved = false }), Ask, "cannot see this machine's files"},
		{"unresolved in mode full", with(write(ws+"/src/a.go"), func(c *Call) { c.Resolved, c.Mode = false, ModeFull }), Allow, "mode full"},
		{"a backslash, read as a separator", write(ws + `/src/sub\a.go`), Ask, "backslash"},
		{".GIT is .git where case folds", write(ws + "/src/.GIT/hooks/pre-push"), Ask, ".git"},
		{".GIT on an exact file system is a name", with(write(ws+"/src/.GIT/hooks/pre-push"), func(c *Call) { c.Exact = true }), Allow, "allowed by rule"},
		{".git under an allow rule", write(ws + "/src/.git/config"), Ask, ".git"},
		{"Claude Code's settings in mode full", with(write(ws+"/.claude/settings.local.json"), func(c *Call) { c.Mode = ModeFull }), Ask, "Claude Code's settings"},
		{"an agent's settings under an allow rule", write(ws + "/src/.codex/config.toml"), Ask, "Codex's settings"},
		{".mcp.json in mode full", with(write(ws+"/.mcp.json"), func(c *Call) { c.Mode = ModeFull }), Ask, "MCP servers"},
		{".Claude is .claude where case folds", with(write(ws+"/.Claude/settings.json"), func(c *Call) { c.Mode = ModeFull }), Ask, "Claude Code's settings"},
		{"a name that only begins like it", with(write(ws+"/.claudeignore"), func(c *Call) { c.Mode = ModeFull }), Allow, "mode full"},
		{".ENV read where case folds", read(ws + "/src/.ENV"), Deny, "denied by rule"},
		{"SECRETS/key meets secrets/**", read(ws + "/SECRETS/key"), Ask, "rules[3]"},
		{"a folded name loses no allow rule", write(ws + "/Makefile"), Allow, "allowed by rule"},
		{"a search of a directory holding .env", with(read(ws+"/src"), func(c *Call) { c.Search = true }), Deny, "denied by rule"},
		{"a search whose glob leaves .env out", with(read(ws+"/src"), func(c *Call) { c.Search, c.Glob = true, "*.go" }), Allow, ""},
		{"a relative search is of the workspace's directory", Call{Tool: ToolReadFile, Safety: ReadOnly, Path: "src", Cwd: ws, Workspace: ws, Resolved: true, Search: true}, Deny, "denied by rule"},
		{"an unseen search that may reach .env", with(read(ws+"/docs"), func(c *Call) { c.Search, c.Resolved = true, false }), Deny, "cannot see"},
		{"a NUL in the path", read(ws + "/a\x00b"), Deny, "NUL"},
		{"a script's call no grant covers", with(write(ws+"/src/a.go"), func(c *Call) { c.Mode = ModeScript }), Ask, "a script asked"},
		{"a script's call a rule denies", with(read(ws+"/.env"), func(c *Call) { c.Mode = ModeScript }), Deny, "denied by rule"},
		{"network access judged as its command", Call{Tool: ToolNetworkAccess, Command: "rm -rf /", Workspace: ws}, Ask, "dangerous"},
		{"network access with no command", Call{Tool: ToolNetworkAccess, Workspace: ws}, Ask, "network_access"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := e.Evaluate(t.Context(), tc.c)
			if v.Decision != tc.want || !strings.Contains(v.Reason+v.Rule, tc.why) {
				t.Errorf("%s (%s), want %s (%q)", v.Decision, v.Reason, tc.want, tc.why)
			}
			if v.ByMode != (tc.why == "mode full") {
				t.Errorf("ByMode = %v", v.ByMode)
			}
		})
	}
}
