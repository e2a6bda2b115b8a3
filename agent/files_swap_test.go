package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/askops/askops/policy"
)

const swapSecret = "SECRET=hunter2"

// swapWorkspace is a workspace with a .git, a .env a deny rule names, a
// src/ the rules let write_file write, and the real policy over it.
func swapWorkspace(t *testing.T) (Env, *policy.Engine) {
	t.Helper()
	ws, err := openWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git/hooks", "src/d"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, filepath.Join(ws, ".env"), swapSecret+"\n")
	put(t, filepath.Join(ws, ".git/config"), "[core]\n")
	put(t, filepath.Join(ws, "notes.txt"), "notes\n")
	put(t, filepath.Join(ws, "src/a.txt"), "old\n")
	e, err := policy.New(policy.Config{Rules: []policy.Rule{
		{Tool: "read_file", Path: "**/.env", Decision: policy.Deny},
		{Tool: "write_file", Path: "src/**", Decision: policy.Allow},
		{Tool: "edit_file", Path: "src/**", Decision: policy.Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return Env{Workspace: ws, Cwd: ws, MaxOutputBytes: 32 << 10}, e
}

func put(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// judge prepares a call of tool and has the policy judge it, as the loop
// does when the call comes up; it returns the prepared action and whether
// the policy allowed it.
func judge(t *testing.T, env Env, e *policy.Engine, tool Tool, args map[string]any) (Action, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	a, err := parseArgs(tool.Name, tool.Params, string(raw))
	if err != nil {
		t.Fatal(err)
	}
	act, err := tool.Prepare(env, a)
	if err != nil {
		return Action{}, false
	}
	v := e.Evaluate(context.Background(), policy.Call{Tool: tool.Name, Safety: tool.Safety, Path: act.Path,
		Cwd: env.Cwd, Workspace: env.Workspace, Mode: policy.ModeAsk, Resolved: true, Exact: true})
	return act, v.Decision == policy.Allow
}

// The policy judges a file call's resolved path; the call runs later
// (after a person approved it, or while another process changes the
// workspace). What was swapped in between must not be what is opened: a
// directory made a symlink into .git, the file made a symlink to .env or
// a hard link to it or to .git/config. Each case judges, swaps, then runs.
func TestFileToolsOpenOnlyTheJudgedFile(t *testing.T) {
	cases := []struct {
		name  string
		tool  Tool
		args  map[string]any
		swap  func(t *testing.T, ws string)
		check func(t *testing.T, ws, out string)
	}{
		{name: "write under a directory made a symlink into .git", tool: writeFileTool(),
			args: map[string]any{"path": "src/d/pre-commit", "content": "#!/bin/sh\necho pwned\n"},
			swap: func(t *testing.T, ws string) { relink(t, "../.git/hooks", filepath.Join(ws, "src/d")) },
			check: func(t *testing.T, ws, out string) {
				if exists(filepath.Join(ws, ".git/hooks/pre-commit")) {
					t.Errorf("a hook was written: %s", out)
				}
			}},
		{name: "edit of a file made a symlink to .git/config", tool: editFileTool(),
			args:  map[string]any{"path": "src/a.txt", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = evil"},
			swap:  func(t *testing.T, ws string) { relink(t, "../.git/config", filepath.Join(ws, "src/a.txt")) },
			check: func(t *testing.T, ws, out string) { unchanged(t, filepath.Join(ws, ".git/config"), "[core]\n", out) }},
		{name: "edit of a file made a hard link to .git/config", tool: editFileTool(),
			args: map[string]any{"path": "src/a.txt", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = evil"},
			swap: func(t *testing.T, ws string) {
				hardlink(t, filepath.Join(ws, ".git/config"), filepath.Join(ws, "src/a.txt"))
			},
			check: func(t *testing.T, ws, out string) { unchanged(t, filepath.Join(ws, ".git/config"), "[core]\n", out) }},
		{name: "write of a file made a hard link to .git/config", tool: writeFileTool(),
			args: map[string]any{"path": "src/a.txt", "content": "[core]\n\tfsmonitor = evil\n"},
			swap: func(t *testing.T, ws string) {
				hardlink(t, filepath.Join(ws, ".git/config"), filepath.Join(ws, "src/a.txt"))
			},
			check: func(t *testing.T, ws, out string) {
				unchanged(t, filepath.Join(ws, ".git/config"), "[core]\n", out)
				unchanged(t, filepath.Join(ws, "src/a.txt"), "[core]\n\tfsmonitor = evil\n", out)
			}},
		{name: "read of a file made a symlink to .env", tool: readFileTool(), args: map[string]any{"path": "notes.txt"},
			swap:  func(t *testing.T, ws string) { relink(t, ".env", filepath.Join(ws, "notes.txt")) },
			check: noSecret},
		{name: "read of a file made a hard link to .env", tool: readFileTool(), args: map[string]any{"path": "notes.txt"},
			swap:  func(t *testing.T, ws string) { hardlink(t, filepath.Join(ws, ".env"), filepath.Join(ws, "notes.txt")) },
			check: noSecret},
		{name: "read of a file that was absent, now a hard link to .env", tool: readFileTool(), args: map[string]any{"path": "later.txt"},
			swap:  func(t *testing.T, ws string) { hardlink(t, filepath.Join(ws, ".env"), filepath.Join(ws, "later.txt")) },
			check: noSecret},
		{name: "list of a directory made a symlink to .git", tool: listFilesTool(), args: map[string]any{"path": "src/d"},
			swap: func(t *testing.T, ws string) { relink(t, "../.git", filepath.Join(ws, "src/d")) },
			check: func(t *testing.T, ws, out string) {
				if strings.Contains(out, "hooks") {
					t.Errorf("listed .git: %s", out)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, e := swapWorkspace(t)
			act, allowed := judge(t, env, e, tc.tool, tc.args)
			if !allowed {
				t.Fatalf("the policy did not allow %s before the swap", act.Summary)
			}
			tc.swap(t, env.Workspace)
			out, err := act.Run(context.Background())
			if err != nil {
				out = "error: " + err.Error()
			}
			tc.check(t, env.Workspace, out)
			if !strings.HasPrefix(out, "error: ") && !strings.Contains(tc.name, "write of a file made a hard link") {
				t.Errorf("the swapped call ran: %s", out)
			}
		})
	}
}

func noSecret(t *testing.T, _, out string) {
	t.Helper()
	if strings.Contains(out, swapSecret) {
		t.Errorf("read_file returned the denied .env: %s", out)
	}
}

func unchanged(t *testing.T, p, want, out string) {
	t.Helper()
	if b, err := os.ReadFile(p); err != nil || string(b) != want {
		t.Errorf("%s = %q (%v), want %q; the call said %s", p, b, err, want, out)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// relink replaces p (a file or a directory) with a symlink to target.
func relink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// hardlink replaces p with a hard link to target.
func hardlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, p); err != nil {
		t.Fatal(err)
	}
}

// A write to a file with another name (a hard link there before the call
// was judged) replaces the name written; the other name, outside the
// workspace or in .git, keeps its content.
func TestWriteDoesNotWriteThroughAHardLink(t *testing.T) {
	for _, tool := range []Tool{writeFileTool(), editFileTool()} {
		for _, other := range []string{"outside", ".git/config"} {
			t.Run(tool.Name+" "+other, func(t *testing.T) {
				env, e := swapWorkspace(t)
				o := filepath.Join(env.Workspace, other)
				if other == "outside" {
					o = filepath.Join(t.TempDir(), "bashrc")
					put(t, o, "# mine\n")
				}
				before, _ := os.ReadFile(o)
				if err := os.Link(o, filepath.Join(env.Workspace, "src/x")); err != nil {
					t.Skip("no hard link here:", err)
				}
				if err := os.Chmod(o, 0o640); err != nil {
					t.Fatal(err)
				}
				args := map[string]any{"path": "src/x", "content": "pwned\n"}
				if tool.Name == "edit_file" {
					args = map[string]any{"path": "src/x", "old_string": string(before), "new_string": "pwned\n"}
				}
				act, allowed := judge(t, env, e, tool, args)
				if !allowed {
					t.Fatalf("the policy did not allow %s", act.Summary)
				}
				out, err := act.Run(context.Background())
				if err != nil {
					t.Fatalf("%s: %v", act.Summary, err)
				}
				unchanged(t, o, string(before), out)
				unchanged(t, filepath.Join(env.Workspace, "src/x"), "pwned\n", out)
				if fi, err := os.Stat(filepath.Join(env.Workspace, "src/x")); err != nil || fi.Mode().Perm() != 0o640 {
					t.Errorf("the written file's mode is %v (%v), want the old file's 0640", fi.Mode(), err)
				}
				left, _ := filepath.Glob(filepath.Join(env.Workspace, "src", ".askops-write-*"))
				if len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			})
		}
	}
}

// read_file holds a line's head and tail, not the line: a file of 10 GB
// with no newline (a sparse one, a disk image) must not be read into
// memory, nor a long line skipped by offset.
func TestReadFileMemoryIsBoundedByTheOutput(t *testing.T) {
	env, _ := swapWorkspace(t)
	ws := env.Workspace
	sparse := filepath.Join(ws, "disk.img")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	long := filepath.Join(ws, "min.js")
	put(t, long, strings.Repeat("a", 8<<20)+"\nsecond\n")
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "disk.img"}, "looks binary"},
		{map[string]any{"path": "min.js", "offset": 2}, "     2\tsecond"},
		{map[string]any{"path": "min.js", "limit": 1}, "bytes cut"},
	}
	for _, tc := range cases {
		act, err := readFileTool().Prepare(env, args(t, readFileTool(), tc.args))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := act.Run(context.Background())
		runtime.ReadMemStats(&after)
		if err != nil {
			out = "error: " + err.Error()
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: %q does not contain %q", tc.args, clip(out, 300), tc.want)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
			t.Errorf("%v: read_file allocated %d MiB", tc.args, got>>20)
		}
	}
}

// edit_file holds the file in memory: one over its bound is refused.
func TestEditFileRefusesAHugeFile(t *testing.T) {
	env, _ := swapWorkspace(t)
	p := filepath.Join(env.Workspace, "src/huge")
	put(t, p, "needle\n")
	if err := os.Truncate(p, maxEditBytes+1); err != nil {
		t.Fatal(err)
	}
	act, err := editFileTool().Prepare(env, args(t, editFileTool(), map[string]any{"path": "src/huge", "old_string": "needle", "new_string": "pin"}))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := act.Run(context.Background())
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("edit of a %d-byte file: %q, %v", maxEditBytes+1, out, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("edit_file allocated %d MiB", got>>20)
	}
}

func args(t *testing.T, tool Tool, m map[string]any) Args {
	t.Helper()
	raw, _ := json.Marshal(m)
	a, err := parseArgs(tool.Name, tool.Params, string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return a
}
