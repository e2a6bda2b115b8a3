package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file reached through a link meets the rules of where the link leads,
// and a command naming more paths than the policy checks is not allowed
// while read rules exist.
func TestReadsThroughLinksAndPastTheBound(t *testing.T) {
	e, ws := corpusEngine(t)
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.env", filepath.Join(ws, "src", "settings")); err != nil {
		t.Fatal(err)
	}
	many := "cat" + strings.Repeat(" README.md", maxMentions+1)
	for _, tc := range []struct {
		command string
		want    Decision
		reason  string
	}{
		{"cat src/settings", Deny, `may read "src/settings"`},
		{"grep KEY < src/settings", Deny, `may read "src/settings"`},
		{"cat src/other", Allow, ""},
		{many, Ask, "more than 4096 paths"},
	} {
		v := e.Evaluate(t.Context(), corpusCall(tc.command, ws, ""))
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%.60q: %s (%s), want %s with %q", tc.command, v.Decision, v.Reason, tc.want, tc.reason)
		}
	}

	// Without read_file rules the operands cost nothing and change nothing.
	plain, err := New(Config{Rules: []Rule{{Tool: ToolBash, Command: "cat", Decision: Allow}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cat src/settings", many} {
		if v := plain.Evaluate(t.Context(), corpusCall(c, ws, "")); v.Decision != Allow {
			t.Errorf("%.60q without read rules: %s (%s), want allow", c, v.Decision, v.Reason)
		}
	}
}
