package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file with a second name (a hard link) is read under that name past a
// read_file rule on its first: notes.txt made a hard link of .env (by a
// tarball's link entry, an earlier script) printed the secret through an
// allowed cat, and through read_file in mode full. While read_file rules
// exist, a read of a hard-linked file asks in every mode (mode never
// denies); without them, nothing another name could reveal is protected,
// and the read is judged as before.
func TestReadOfAHardLinkedFileAsks(t *testing.T) {
	ws := t.TempDir()
	for name, body := range map[string]string{".env": "TOKEN=s3cret", "README.md": "hello"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes.txt", "sub/notes.txt"} {
		if err := os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	protected := newTestEngine(t, Config{Rules: []Rule{
		{Tool: ToolReadFile, Path: ".env", Decision: Deny},
		{Tool: ToolBash, Command: "cat", Decision: Allow},
		{Tool: ToolReadFile, Path: "**", Decision: Allow},
	}})
	open := newTestEngine(t, Config{Rules: []Rule{{Tool: ToolBash, Command: "cat", Decision: Allow}}})
	for _, tc := range []struct {
		e    *Engine
		mode Mode
		c    Call
		want Decision
	}{
		{protected, ModeAsk, Call{Tool: ToolBash, Command: "cat notes.txt"}, Ask},
		{protected, ModeFull, Call{Tool: ToolBash, Command: "cat notes.txt"}, Ask},
		{protected, ModeNever, Call{Tool: ToolBash, Command: "cat notes.txt"}, Deny},
		{protected, ModeFull, Call{Tool: ToolBash, Command: "cd sub; cat ../notes.txt"}, Ask},
		{protected, ModeAsk, Call{Tool: ToolReadFile, Path: "notes.txt", Resolved: true}, Ask},
		{protected, ModeFull, Call{Tool: ToolReadFile, Path: "notes.txt", Resolved: true}, Ask},
		// A search of a directory holding it (Grep) reads it too.
		{protected, ModeFull, Call{Tool: ToolReadFile, Path: ws + "/sub", Search: true, Resolved: true}, Ask},
		// The other reads stand as they were.
		{protected, ModeAsk, Call{Tool: ToolBash, Command: "cat README.md"}, Allow},
		{protected, ModeAsk, Call{Tool: ToolReadFile, Path: "README.md", Resolved: true}, Allow},
		{protected, ModeFull, Call{Tool: ToolReadFile, Path: ws + "/sub", Search: true, Glob: "*.go", Resolved: true}, Allow},
		{protected, ModeFull, Call{Tool: ToolBash, Command: "cat .env"}, Deny},
		{open, ModeAsk, Call{Tool: ToolBash, Command: "cat notes.txt"}, Allow},
	} {
		c := tc.c
		c.Cwd, c.Workspace, c.Mode = ws, ws, tc.mode
		v := tc.e.Evaluate(t.Context(), c)
		if v.Decision != tc.want {
			t.Errorf("%s %s %q%s: %s (%s), want %s", tc.mode, c.Tool, c.Command, c.Path, v.Decision, v.Reason, tc.want)
			continue
		}
		if tc.want != Allow && strings.Contains(c.Command+c.Path, "notes") && !strings.Contains(v.Reason, "hard link") {
			t.Errorf("%s %q%s: reason %q does not name the hard link", tc.mode, c.Command, c.Path, v.Reason)
		}
	}
}
