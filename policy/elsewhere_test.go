package policy

import (
	"strings"
	"testing"
)

// A command find -execdir, find -okdir or git submodule foreach runs is
// in a directory the policy cannot name, so a relative write it makes
// lands nowhere the policy knows: never an allow, even in mode full and
// with no read_file rule to make find's walk ask.
func TestCommandsRunElsewhere(t *testing.T) {
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolBash, Command: "find", Decision: Allow},
		{Tool: ToolBash, Command: "cp", Decision: Allow},
		{Tool: ToolWriteFile, Path: "out/**", Decision: Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ws := corpusWorkspace(t)
	for _, tc := range []struct {
		command string
		mode    Mode
		want    Decision
	}{
		{"find . -maxdepth 2 -name hooks -execdir cp README hooks/pre-commit \\;", ModeFull, Ask},
		{"find out -name a -okdir cp README x \\;", ModeFull, Ask},
		{"git submodule foreach 'cp README x'", ModeFull, Ask},
		{"find out -name a -exec cp README out/x \\;", ModeAsk, Allow}, // -exec runs where find does
		{"find out -name a -execdir cp README /tmp/x \\;", ModeFull, Allow},
	} {
		v := e.Evaluate(t.Context(), corpusCall(tc.command, ws, tc.mode))
		if v.Decision != tc.want {
			t.Errorf("%q in mode %s: %s (%s), want %s", tc.command, tc.mode, v.Decision, v.Reason, tc.want)
		}
		if tc.want == Ask && !strings.Contains(v.Reason, "cd the policy cannot follow") {
			t.Errorf("%q: asks for another reason: %s", tc.command, v.Reason)
		}
	}
}
