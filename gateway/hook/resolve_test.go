package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ResolvePaths settles each path to the one file the agent's tool will
// touch, or leaves the call unresolved: a ".." after a link (the kernel
// takes it from where the link leads, a tool that cleans the path first
// from the link's own directory), a ~user, a Glob's fixed directories
// (outlink/*), askops' own tools by name. Found by a red-team probe.
func TestResolvePathsSettlesOneFile(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git/hooks", "src", "secrets/inner"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"hookslink": ".git/hooks", "innerlink": "secrets/inner", "outlink": out, "gitlink": ".git"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	home, err := os.UserHomeDir()
	if err == nil {
		home, err = filepath.EvalSymlinks(home)
	}
	if err != nil {
		home = "(no home)"
	}
	for _, tc := range []struct {
		tool, input string
		resolved    bool
		field, want string // the field's resolved value ("" when unresolved)
	}{
		{"Write", `{"file_path":"{ws}/hookslink/../config","content":""}`, false, "", ""},
		{"Read", `{"file_path":"innerlink/../key"}`, false, "", ""},
		{"Read", `{"file_path":"~root/.bashrc"}`, false, "", ""},
		{"Read", `{"file_path":"~/.ssh/id_rsa"}`, home != "(no home)", "file_path", home + "/.ssh/id_rsa"},
		{"write_file", `{"path":"gitlink/hooks/pre-commit","content":""}`, true, "path", "{ws}/.git/hooks/pre-commit"},
		{"Glob", `{"pattern":"outlink/*"}`, true, "path", "{out}"},
		{"Glob", `{"pattern":"gitlink/hooks/*","path":"{ws}"}`, true, "path", "{ws}/.git/hooks"},
		{"Glob", `{"pattern":"~/*"}`, false, "", ""},
		// Ordinary calls resolve as they did.
		{"Read", `{"file_path":"src/../README.md"}`, true, "file_path", "{ws}/README.md"},
		{"Write", `{"file_path":"{ws}/src/new.go","content":""}`, true, "file_path", "{ws}/src/new.go"},
		{"Glob", `{"pattern":"**/*.go"}`, true, "pattern", "**/*.go"},
	} {
		sub := func(s string) string {
			b, _ := json.Marshal(ws)
			o, _ := json.Marshal(out)
			return strings.NewReplacer("{ws}", string(b[1:len(b)-1]), "{out}", string(o[1:len(o)-1])).Replace(s)
		}
		got := ResolvePaths(Call{Tool: tc.tool, Input: json.RawMessage(sub(tc.input)), Cwd: ws})
		if got.Resolved != tc.resolved {
			t.Errorf("%s %s: resolved %v, want %v", tc.tool, tc.input, got.Resolved, tc.resolved)
			continue
		}
		if tc.field == "" {
			continue
		}
		var in map[string]any
		_ = json.Unmarshal(got.Input, &in)
		if in[tc.field] != sub(tc.want) {
			t.Errorf("%s %s: %s = %v, want %s", tc.tool, tc.input, tc.field, in[tc.field], sub(tc.want))
		}
	}
}
