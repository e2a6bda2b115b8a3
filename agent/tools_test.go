package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/policy"
)

// linkTo is a case's setup that makes the workspace's name a symlink to
// target: the ways out of the workspace these cases try all start with one.
func linkTo(target, name string) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorkspaceEscapesAreRefused(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"), "top secret\n")

	cases := []struct {
		name       string
		setup      func(t *testing.T, ws string)
		call       fakeopenai.ToolCall
		relOutside bool // the call's path is the outside secret, relative to the workspace (../../…)
		want       []string
	}{
		{name: "dot-dot read", call: call("c1", "read_file", nil), relOutside: true,
			want: []string{"refused", "leaves the workspace"}},
		{name: "dot-dot hidden in the middle", call: call("c1", "write_file", map[string]any{"path": "a/../../escape.txt", "content": "x"}),
			want: []string{"refused", "leaves the workspace"}},
		{name: "absolute outside", call: call("c1", "read_file", map[string]any{"path": filepath.Join(outside, "secret")}),
			want: []string{"refused", "absolute path outside the workspace"}},
		{name: "absolute /etc", call: call("c1", "list_files", map[string]any{"path": "/etc"}),
			want: []string{"refused", "absolute path outside the workspace"}},
		{name: "symlinked directory", setup: linkTo(outside, "link"),
			call: call("c1", "read_file", map[string]any{"path": "link/secret"}),
			want: []string{"refused", "symlink leads outside the workspace"}},
		{name: "symlinked file written through", setup: linkTo(filepath.Join(outside, "secret"), "innocent.txt"),
			call: call("c1", "write_file", map[string]any{"path": "innocent.txt", "content": "pwned"}),
			want: []string{"refused", "symlink leads outside the workspace"}},
		{name: "new file under a symlinked directory", setup: linkTo(outside, "link"),
			call: call("c1", "write_file", map[string]any{"path": "link/new/file.txt", "content": "x"}),
			want: []string{"refused", "symlink leads outside the workspace"}},
		{name: "dangling symlink", setup: linkTo(filepath.Join(outside, "not-yet"), "dangling"),
			call: call("c1", "write_file", map[string]any{"path": "dangling", "content": "x"}),
			want: []string{"refused", "cannot resolve"}},
		{name: "edit through symlink", setup: linkTo(outside, "link"),
			call: call("c1", "edit_file", map[string]any{"path": "link/secret", "old_string": "top", "new_string": "no"}),
			want: []string{"refused", "symlink"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			c := tc.call
			if tc.relOutside {
				rel, err := filepath.Rel(h.ws, filepath.Join(outside, "secret"))
				if err != nil {
					t.Fatal(err)
				}
				c = call("c1", "read_file", map[string]any{"path": rel})
			}
			h.srv.Add(fakeopenai.Call(c), fakeopenai.Text("ok"))
			h.approver.answer = answerWith(agent.Approved, "U1", "")
			if tc.setup != nil {
				tc.setup(t, h.ws)
			}
			res, _ := h.run(t, agent.RunSpec{})
			if res.Status != agent.StatusFinished {
				t.Fatalf("result = %+v", res)
			}
			got := toolResults(t, h.srv, 1)["c1"]
			mustContain(t, got, tc.want...)
			if n := len(h.approver.asked()); n != 0 {
				t.Errorf("an escaping call was put to a human")
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "top secret\n" {
				t.Errorf("the outside file changed: %q", b)
			}
			for _, p := range []string{"escape.txt", "not-yet", "new"} {
				if exists(filepath.Join(filepath.Dir(h.ws), p)) || exists(filepath.Join(outside, p)) {
					t.Errorf("%s was created outside the workspace", p)
				}
			}
		})
	}
}

func TestSymlinkInsideTheWorkspaceIsFollowed(t *testing.T) {
	h := newHarness(t, callTurns("ok", call("c1", "read_file", map[string]any{"path": "alias/f.txt"})), nil)
	writeFile(t, filepath.Join(h.ws, "real", "f.txt"), "inside\n")
	if err := os.Symlink(filepath.Join(h.ws, "real"), filepath.Join(h.ws, "alias")); err != nil {
		t.Fatal(err)
	}
	h.run(t, agent.RunSpec{})
	mustContain(t, toolResults(t, h.srv, 1)["c1"], "1\tinside")
	if p := h.policy.judged()[0].Path; p != filepath.Join(h.ws, "real", "f.txt") {
		t.Errorf("policy saw path %q, want the resolved real path", p)
	}
}

// The Ask of a file call carries the path the policy judged (resolved
// through symlinks), which the session grant is scoped to; the model's own
// path stays in Args.
func TestAskCarriesTheJudgedPath(t *testing.T) {
	h := newHarness(t, callTurns("ok", call("c1", "write_file", map[string]any{"path": "alias/a.txt", "content": "x"})), nil)
	h.approver.answer = answerWith(agent.Approved, "U42", "")
	if err := os.MkdirAll(filepath.Join(h.ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(h.ws, "real"), filepath.Join(h.ws, "alias")); err != nil {
		t.Fatal(err)
	}
	h.run(t, agent.RunSpec{})
	asks := h.approver.asked()
	if len(asks) != 1 {
		t.Fatalf("%d asks, want 1", len(asks))
	}
	judged := h.policy.judged()[0].Path
	if want := filepath.Join(h.ws, "real", "a.txt"); judged != want || asks[0].Path != judged {
		t.Errorf("policy judged %q, ask carries %q; want both %q", judged, asks[0].Path, want)
	}
	if !strings.Contains(asks[0].Args, `"alias/a.txt"`) {
		t.Errorf("ask args %s lost the model's path", asks[0].Args)
	}
}

func TestFileTools(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		call  fakeopenai.ToolCall
		want  []string
		after map[string]string // file contents afterwards
	}{
		{name: "edit one match", files: map[string]string{"f.go": "a := 1\nb := 2\n"},
			call:  call("c1", "edit_file", map[string]any{"path": "f.go", "old_string": "b := 2", "new_string": "b := 3"}),
			want:  []string{"edited f.go: replaced 1 occurrence"},
			after: map[string]string{"f.go": "a := 1\nb := 3\n"}},
		{name: "edit no match", files: map[string]string{"f.go": "a := 1\n"},
			call:  call("c1", "edit_file", map[string]any{"path": "f.go", "old_string": "zzz", "new_string": "y"}),
			want:  []string{"error: ", "not found in f.go (0 matches)", "not changed"},
			after: map[string]string{"f.go": "a := 1\n"}},
		{name: "edit three matches", files: map[string]string{"f.go": "x\nx\nx\n"},
			call:  call("c1", "edit_file", map[string]any{"path": "f.go", "old_string": "x", "new_string": "y"}),
			want:  []string{"error: ", "matches 3 times in f.go", "exactly once"},
			after: map[string]string{"f.go": "x\nx\nx\n"}},
		{name: "edit missing file",
			call: call("c1", "edit_file", map[string]any{"path": "nope.go", "old_string": "x", "new_string": "y"}),
			want: []string{"error: nope.go does not exist"}},
		{name: "write creates parents",
			call:  call("c1", "write_file", map[string]any{"path": "deep/er/new.txt", "content": "hello"}),
			want:  []string{"wrote 5 bytes to deep/er/new.txt"},
			after: map[string]string{"deep/er/new.txt": "hello"}},
		// write_file truncates only a non-empty file; a longer one must not
		// keep its tail, and an empty one takes the content as is.
		{name: "write replaces a longer file", files: map[string]string{"old.txt": "a much longer old content\n"},
			call:  call("c1", "write_file", map[string]any{"path": "old.txt", "content": "new"}),
			want:  []string{"wrote 3 bytes to old.txt"},
			after: map[string]string{"old.txt": "new"}},
		{name: "write fills an empty file", files: map[string]string{"empty.txt": ""},
			call:  call("c1", "write_file", map[string]any{"path": "empty.txt", "content": "new"}),
			want:  []string{"wrote 3 bytes to empty.txt"},
			after: map[string]string{"empty.txt": "new"}},
		{name: "read with offset and limit", files: map[string]string{"l.txt": "one\ntwo\nthree\nfour\n"},
			call: call("c1", "read_file", map[string]any{"path": "l.txt", "offset": 2, "limit": 2}),
			want: []string{"     2\ttwo\n     3\tthree\n[more lines follow; read on with offset=4]"}},
		{name: "read past the end", files: map[string]string{"l.txt": "one\n"},
			call: call("c1", "read_file", map[string]any{"path": "l.txt", "offset": 5}),
			want: []string{"error: offset 5 is past the end of l.txt, which has 1 lines"}},
		{name: "read a directory", files: map[string]string{"d/x": ""},
			call: call("c1", "read_file", map[string]any{"path": "d"}),
			want: []string{"error: d is a directory; use list_files"}},
		{name: "read a FIFO is refused, not blocked on", files: map[string]string{"fifo": "\x00mkfifo"},
			call: call("c1", "read_file", map[string]any{"path": "fifo"}),
			want: []string{"error: fifo is not a regular file"}},
		{name: "read empty", files: map[string]string{"e.txt": ""},
			call: call("c1", "read_file", map[string]any{"path": "e.txt"}),
			want: []string{"(e.txt is empty)"}},
		{name: "list", files: map[string]string{"b.txt": "", "a/x": "", "c.txt": ""},
			call: call("c1", "list_files", map[string]any{}),
			want: []string{"a/\nb.txt\nc.txt\n"}},
		{name: "list subdir", files: map[string]string{"a/x": "", "a/y": ""},
			call: call("c1", "list_files", map[string]any{"path": "a"}),
			want: []string{"x\ny\n"}},
		// A name holding a newline is one entry, quoted, not two names.
		{name: "list a name with a newline", files: map[string]string{"a\nb": "", "c": ""},
			call: call("c1", "list_files", map[string]any{}),
			want: []string{"\"a\\nb\"\nc\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(tc.call), fakeopenai.Text("ok")}, nil)
			h.approver.answer = answerWith(agent.Approved, "U1", "")
			for p, c := range tc.files {
				if c == "\x00mkfifo" {
					if err := syscall.Mkfifo(filepath.Join(h.ws, p), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeFile(t, filepath.Join(h.ws, p), c)
			}
			h.run(t, agent.RunSpec{})
			mustContain(t, toolResults(t, h.srv, 1)["c1"], tc.want...)
			for p, want := range tc.after {
				b, err := os.ReadFile(filepath.Join(h.ws, p))
				if err != nil || string(b) != want {
					t.Errorf("%s = %q (%v), want %q", p, b, err, want)
				}
			}
		})
	}
}

func TestWriteFileAskSummary(t *testing.T) {
	h := newHarness(t, callTurns("ok", call("c1", "write_file", map[string]any{"path": "conf/app.yaml", "content": "port: 80\n"})), nil)
	h.approver.answer = answerWith(agent.Approved, "U1", "")
	h.run(t, agent.RunSpec{})
	asks := h.approver.asked()
	if len(asks) != 1 || asks[0].Summary != "write_file conf/app.yaml (9 bytes)" || asks[0].Args != `{"content":"port: 80\n","path":"conf/app.yaml"}` {
		t.Fatalf("asks = %+v", asks)
	}
	if p := h.policy.judged()[0].Path; p != filepath.Join(h.ws, "conf", "app.yaml") {
		t.Errorf("policy path = %q", p)
	}
}

// A file call's path is resolved and judged when the turn is prepared, but
// runs later: after the calls ahead of it in the same turn, and after a
// human approved it. If meanwhile a directory on the path became a symlink
// leading out of the workspace, the tool must not follow it: the file tools
// open paths beneath the workspace at run time, refusing any escape.
func TestFileToolsRefuseASymlinkSwappedInAfterTheCheck(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "outside secret\n")
	writeFile(t, filepath.Join(outside, "edit.txt"), "old\n")
	swap := "rm -r sub && ln -s " + outside + " sub"
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(
			bash("c1", swap),
			call("c2", "write_file", map[string]any{"path": "sub/new.txt", "content": "pwned"}),
			call("c3", "edit_file", map[string]any{"path": "sub/edit.txt", "old_string": "old", "new_string": "pwned"}),
			call("c4", "read_file", map[string]any{"path": "sub/secret.txt"}),
			call("c5", "list_files", map[string]any{"path": "sub"}),
		),
		fakeopenai.Text("ok"),
	}, nil)
	h.policy.decide = allowAll
	// The files exist inside when the turn is prepared, so every path resolves inside.
	writeFile(t, filepath.Join(h.ws, "sub", "secret.txt"), "inside\n")
	writeFile(t, filepath.Join(h.ws, "sub", "edit.txt"), "old\n")
	h.run(t, agent.RunSpec{})

	res := toolResults(t, h.srv, 1)
	mustContain(t, res["c1"], "exit code: 0")
	if exists(filepath.Join(outside, "new.txt")) {
		t.Errorf("write_file followed the swapped symlink out of the workspace: %s", res["c2"])
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "edit.txt")); string(b) != "old\n" {
		t.Errorf("edit_file changed a file outside the workspace: %q (%s)", b, res["c3"])
	}
	if strings.Contains(res["c4"], "outside secret") {
		t.Errorf("read_file read a file outside the workspace: %s", res["c4"])
	}
	if strings.Contains(res["c5"], "secret.txt") {
		t.Errorf("list_files listed a directory outside the workspace: %s", res["c5"])
	}
	for _, id := range []string{"c2", "c3", "c4", "c5"} {
		mustContain(t, res[id], "error:")
	}
}

// A file call is judged when it comes up, not when its turn began: a
// command ahead of it in the turn (here a script a person approved; as
// well a `git pull` or a `tar x` bringing links) may have made a
// directory on its path a symlink into .git, or its file a symlink to
// .env. The real policy then asks before the write into .git/hooks and
// denies the read of .env, as it would in the next turn.
func TestAFileCallIsJudgedAsTheCallsAheadOfItLeftTheFiles(t *testing.T) {
	e, err := policy.New(policy.Config{Rules: []policy.Rule{
		{Tool: "read_file", Path: "**/.env", Decision: policy.Deny},
		{Tool: "write_file", Path: "src/**", Decision: policy.Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(
			bash("c1", "sh setup.sh"),
			call("c2", "write_file", map[string]any{"path": "src/gen/pre-commit", "content": "#!/bin/sh\necho pwned\n"}),
			call("c3", "read_file", map[string]any{"path": "notes.txt"}),
		),
		fakeopenai.Text("ok"),
	}, func(c *agent.Config) { c.Policy = e })
	h.approver.answer = func(_ context.Context, req agent.Request) agent.Decision {
		if req.Tool == "bash" {
			return decided(req, agent.Approved, "U1", "")
		}
		return decided(req, agent.Denied, "U1", "no")
	}
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(h.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(h.ws, ".env"), "SECRET=hunter2\n")
	writeFile(t, filepath.Join(h.ws, "setup.sh"), "ln -s ../.git/hooks src/gen\nln -s .env notes.txt\n")
	h.run(t, agent.RunSpec{})

	res := toolResults(t, h.srv, 1)
	mustContain(t, res["c1"], "exit code: 0")
	if exists(filepath.Join(h.ws, ".git/hooks/pre-commit")) {
		t.Errorf("write_file wrote a hook without asking: %s", res["c2"])
	}
	asks := h.approver.asked()
	if len(asks) != 2 || asks[1].Path != filepath.Join(h.ws, ".git/hooks/pre-commit") {
		t.Errorf("asks = %+v, want the bash command and then the write into .git/hooks", asks)
	}
	if strings.Contains(res["c3"], "hunter2") {
		t.Errorf("read_file returned the denied .env: %s", res["c3"])
	}
	mustContain(t, res["c3"], "denied by rule")
}
