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

// The workspace the agent's process gives is resolved as the call's paths
// are, so a project reached through a link still holds its own files; one
// that cannot be resolved leaves the call unresolved, judged as text.
func TestResolvePathsResolvesTheWorkspace(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "proj")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"file_path":"go.mod"}`)
	got := ResolvePaths(Call{Tool: "Read", Input: in, Cwd: link, Workspace: link})
	if !got.Resolved || got.Workspace != real || got.Cwd != real {
		t.Errorf("linked workspace: resolved %v, workspace %q, cwd %q; want both %q", got.Resolved, got.Workspace, got.Cwd, real)
	}
	for _, ws := range []string{"proj", filepath.Join(real, "gone", "..", "x\x00")} {
		if got := ResolvePaths(Call{Tool: "Read", Input: in, Cwd: real, Workspace: ws}); got.Resolved || got.Workspace != ws {
			t.Errorf("workspace %q: resolved %v as %q, want left unresolved", ws, got.Resolved, got.Workspace)
		}
	}
}
