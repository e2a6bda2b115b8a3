package policy

import (
	"strings"
	"testing"
)

// A program whose writing options askops does not model may write a file
// its command line names: a write_file deny rule on it asks (the program
// may only read it; every deny the policy is sure of stands), an ask rule
// asks, and a file that changes what later commands run asks in every
// mode. Readers, modelled writers and a wrapper's command are judged as
// before.
func TestPossibleWritesMeetWriteRules(t *testing.T) {
	ws := corpusWorkspace(t)
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolWriteFile, Path: "dist/**", Decision: Deny},
		{Tool: ToolWriteFile, Path: "docs/**", Decision: Ask},
		{Tool: ToolWriteFile, Path: "out/**", Decision: Allow},
		{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		{Tool: ToolBash, Command: "pandoc", Decision: Allow},
		{Tool: ToolBash, Command: "sort", Decision: Allow},
		{Tool: ToolBash, Command: "cat", Decision: Allow},
		{Tool: ToolBash, Command: "mv", Decision: Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		mode    Mode
		want    Decision
		reason  string
	}{
		{"pandoc -o dist/x.html README.md", ModeFull, Ask, `pandoc may write "dist/x.html", which a rule denies`},
		{"pandoc --output=dist/x.html README.md", ModeFull, Ask, `pandoc may write "dist/x.html"`},
		{"cd src && pandoc -o ../dist/x.html x.md", ModeFull, Ask, `may write "../dist/x.html"`},
		{"pandoc -o docs/x.html README.md", ModeAsk, Ask, `the rules ask before write_file of "docs/x.html" (pandoc may write it)`},
		{"pandoc -o .git/hooks/pre-commit README.md", ModeFull, Ask, "pandoc may write .git/hooks/pre-commit"},
		{"pandoc -o out/x.html README.md", ModeFull, Allow, ""},
		{"pandoc -o out/x.html README.md", ModeAsk, Allow, ""},
		{"pandoc .env -o out/x.html", ModeFull, Deny, "read_file"},
		{"sort -o dist/x README.md", ModeFull, Deny, `the command writes "dist/x"`},
		{"cat dist/x", ModeFull, Allow, ""},
		{"mv dist/x out/x", ModeFull, Deny, `the command writes "dist/x"`},
		{"mv out/a out/b", ModeAsk, Allow, ""},
		{"timeout 5 cat dist/x", ModeFull, Allow, ""},
	} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: tc.command, Cwd: ws, Workspace: ws, Mode: tc.mode})
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%q (mode %s): %s (%s), want %s with %q", tc.command, tc.mode, v.Decision, v.Reason, tc.want, tc.reason)
		}
	}
}
