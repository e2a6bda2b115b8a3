package grants_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// writeFiles writes each file (with its directories) under ws.
func writeFiles(t *testing.T, ws string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlinks(t *testing.T, ws string, links map[string]string) {
	t.Helper()
	for link, dest := range links {
		if err := os.Symlink(dest, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// diff given a directory reads the files in it: DIR and DIR compares every
// name the two share, DIR and FILE compares DIR/FILE's name with FILE. The
// grant judged only the operand, so with d1/x a link to a file outside the
// workspace, "diff d1 d2" printed it (checked with GNU diff: "< secret"),
// and a hard link to .git/config in the directory printed the repository's
// credentials. Each file of a directory operand is now judged as a file
// diff reads.
func TestPrefixGrantDiffJudgesTheFilesOfADirectory(t *testing.T) {
	ws := prefixFixture(t)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, "d2/x", "d2/a.txt", "d4/x", "plain/x", "plain/sub/y", "a.txt")
	if err := os.MkdirAll(filepath.Join(ws, "d3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "d1"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlinks(t, ws, map[string]string{"d1/x": outside, "d1/a.txt": "/etc/passwd", "dl": "d1"})
	if err := os.Link(filepath.Join(ws, ".git", "config"), filepath.Join(ws, "d3", "x")); err != nil {
		t.Fatal(err)
	}
	prefix := func(p string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PrefixScope(p, ws) }
	}
	runGrantCases(t, []grantCase{
		{"two directories, a link out in one", prefix("diff"), rtBash(ws, "diff d1 d2"), false},
		{"two directories, -u", prefix("diff"), rtBash(ws, "diff -u d2 d1"), false},
		{"a directory and a file: DIR/FILE is a link out", prefix("diff"), rtBash(ws, "diff d1 a.txt"), false},
		{"a file and a directory", prefix("diff"), rtBash(ws, "diff a.txt d1"), false},
		{"a hard link to .git/config in a directory", prefix("diff"), rtBash(ws, "diff d3 d2"), false},
		{"a directory through a link, holding a link out", prefix("diff"), rtBash(ws, "diff d2 dl"), false},

		{"two files", prefix("diff"), rtBash(ws, "diff -u src/a.txt docs/a.md"), true},
		{"two plain directories", prefix("diff"), rtBash(ws, "diff d2 d4"), true},
		{"a plain directory with a subdirectory", prefix("diff"), rtBash(ws, "diff -q d4 plain"), true},
	})
}

// Outside a work tree, or given an operand outside it, git diff is git
// diff --no-index: it compares two directory trees on disk, a nested
// repository's .git/config included (checked with git 2.39: "git diff v o"
// outside a repository, and "git diff /ws/lib /ws/lib2" from a repository
// in /ws/app, printed the nested .git/config's credentials). The grant
// judged the operands as pathspecs. git diff is now covered only in a work
// tree, with every operand inside it.
func TestPrefixGrantGitDiffNeverNoIndex(t *testing.T) {
	isolateGitConfig(t)
	plain, err := filepath.EvalSymlinks(t.TempDir()) // no repository
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, plain, "v/lib/.git/config", "o/lib/.git/config", "a.txt", "b.txt")

	// A workspace holding a repository (app) and other trees beside it.
	outer, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, outer, "lib/sub/.git/config", "lib2/sub/.git/config")
	app := filepath.Join(outer, "app")
	if err := os.Rename(gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}), app); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, app, "main.go", "src/x.go")

	prefix := func(p, cwd string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PrefixScope(p, cwd) }
	}
	inApp := func(cmd string) grantCase {
		c := rtBash(app, cmd)
		c.Workspace = outer
		return grantCase{call: c, scope: prefix("git diff", app)}
	}
	cases := []grantCase{
		{"outside a repository, two trees", prefix("git diff", plain), rtBash(plain, "git diff v o"), false},
		{"outside a repository, two files", prefix("git diff", plain), rtBash(plain, "git diff a.txt b.txt"), false},
		{"outside a repository, no operand", prefix("git diff", plain), rtBash(plain, "git diff --stat"), false},
	}
	for _, tc := range []struct {
		name, cmd string
		covered   bool
	}{
		{"two trees of the workspace outside the work tree", "git diff " + outer + "/lib " + outer + "/lib2", false},
		{"one operand outside the work tree", "git diff main.go " + outer + "/lib", false},
		{"the work tree's own files", "git diff main.go src/x.go", true},
		{"a revision and a path", "git diff --stat HEAD -- src", true},
		{"no operand", "git diff --cached --stat", true},
	} {
		c := inApp(tc.cmd)
		c.name, c.covered = tc.name, tc.covered
		cases = append(cases, c)
	}
	runGrantCases(t, cases)
}

// go build -o DIR writes each main package's executable into DIR under
// the package's name: with bin on PATH, "go build -o bin ./cmd/ls" under
// a prefix grant on go build wrote bin/ls, and the next plain "ls" ran it
// (checked with go 1.26 and bash: it printed the package's "evil ls"); a
// path judged as the file written may be a directory that files are
// written into. A write into a directory on PATH is now judged by the
// directory too (chmod 777 bin made it writable to all). go build itself
// is no longer grantable by prefix (see TestPrefixGrantNeverCompiles).
func TestPrefixGrantGoBuildOutputDirectory(t *testing.T) {
	ws := prefixFixture(t)
	prefix := func(p, cwd string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PrefixScope(p, cwd) }
	}
	runGrantCases(t, []grantCase{
		{"chmod a directory on PATH", prefix("chmod", ws), rtBash(ws, "chmod 777 bin"), false},
		{"chmod a plain directory", prefix("chmod", ws), rtBash(ws, "chmod 755 out"), true},
	})
	if _, err := grants.PrefixScope("go build", ws); err == nil {
		t.Error("a prefix grant on go build is accepted")
	}
}

// go build and go vet compile the workspace's code, and compiling reads
// whatever the code names: a cgo preamble's #include of a file outside
// the workspace made gcc print its first line, and an assembly file's
// #include made the Go assembler print its first word with cgo off
// (checked with go 1.26 and gcc 12: "secret-token" came out of a
// file in /tmp). A dependency the module names can hold such code too.
// The model promised every file read lies in the workspace; no model of
// flags can keep it, so neither is grantable by prefix (the exact
// command still is).
func TestPrefixGrantNeverCompiles(t *testing.T) {
	ws := prefixFixture(t)
	for _, p := range []string{"go build", "go build -o out/app", "go vet", "go vet ./..."} {
		if _, err := grants.PrefixScope(p, ws); err == nil || !strings.Contains(err.Error(), "#include") {
			t.Errorf("PrefixScope(%q) = %v, want refused: compiling reads what the code includes", p, err)
		}
		// A stored grant the model now refuses covers nothing.
		s := grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: p, Cwd: ws}
		for _, cmd := range []string{p + " ./...", p + " -o out/app ./..."} {
			if s.Covers(rtBash(ws, cmd)) {
				t.Errorf("a stored prefix grant on %q covers %q", p, cmd)
			}
		}
	}
	exact, err := grants.ScopeFor(rtBash(ws, "go build ./..."))
	if err != nil || !exact.Covers(rtBash(ws, "go build ./...")) {
		t.Errorf("an exact grant on go build ./...: %v", err)
	}
}

// An exact grant names text, and text names programs by bare names that
// bash finds through PATH. With a workspace directory on PATH (a bin,
// node_modules/.bin), the agent can put a file there after the grant (a
// write grant, a package install), and the approved "ls" or "git status"
// then ran it: the same text, the agent's code (checked with bash: a
// bin/ls printing "evil ls" ran for the granted "ls"). An exact grant no
// longer covers a call whose bare-named program (outside bash's builtins)
// is a workspace file found through PATH; a program written as a path
// (./run.sh) is what the approver saw.
func TestExactGrantNeverRunsAWorkspaceProgramFromPath(t *testing.T) {
	ws := prefixFixture(t) // ws/bin and ws/node_modules/.bin are on PATH
	for _, f := range []string{"bin/ls", "bin/wc", "bin/echo", "node_modules/.bin/git", "bin/env"} {
		writeFiles(t, ws, f)
		if err := os.Chmod(filepath.Join(ws, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exact := func(cmd string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) {
			return grants.ScopeFor(rtBash(ws, cmd))
		}
	}
	var cases []grantCase
	for _, cmd := range []string{"ls", "ls -la src", "git status", "cat src/a.txt | wc -l", "cd src && ls", "env ls",
		"command ls src", "if true; then ls; fi"} {
		cases = append(cases, grantCase{cmd, exact(cmd), rtBash(ws, cmd), false})
	}
	for _, cmd := range []string{"cat src/a.txt", "echo hi", "./run.sh", "cd src", "printf '%s\\n' x"} {
		cases = append(cases, grantCase{cmd + " (no workspace program on PATH)", exact(cmd), rtBash(ws, cmd), true})
	}
	runGrantCases(t, cases)
}

// A standing file grant (bot grants add -tool write_file -dir src) held a
// workspace-relative path and nothing else, and standing grants are
// matched against every session's calls: made for agent.workspace, it
// covered write_file src/x in any other session's workspace (another
// agent's repository), which its admin never saw. A file scope made for a
// workspace now names it and covers calls in that workspace only; a
// standing file grant recorded without one covers nothing (re-add it).
func TestStandingFileGrantStaysInItsWorkspace(t *testing.T) {
	a, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(a, alias); err != nil {
		t.Fatal(err)
	}
	store := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { store.Close() })
	engine, err := policy.New(policy.Config{Grants: store})
	if err != nil {
		t.Fatal(err)
	}
	write := func(ws, p string) policy.Call {
		return policy.Call{Tool: "write_file", Safety: policy.SideEffect, Path: filepath.Join(ws, p), Cwd: ws, Workspace: ws,
			Resolved: true, SessionID: "any"}
	}
	dir, err := grants.DirScope("write_file", "src", a)
	if err != nil {
		t.Fatal(err)
	}
	file, err := grants.PathScope("read_file", "docs/a.md", a)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []grants.Scope{dir, file} {
		if _, err := store.RecordStanding(t.Context(), s, "admin:x"); err != nil {
			t.Fatal(err)
		}
	}
	// As recorded before scopes named their workspace: refused now.
	legacy := grants.Scope{Tool: "edit_file", Kind: grants.KindDir, Path: "lib"}
	if _, err := store.RecordStanding(t.Context(), legacy, "admin:x"); grants.ErrorCode(err) != grants.CodeInvalid {
		t.Errorf("a standing file grant naming no workspace: %v, want invalid", err)
	}
	read := write(b, "docs/a.md")
	read.Tool, read.Safety = "read_file", policy.SideEffect
	readA := write(a, "docs/a.md")
	readA.Tool = "read_file"
	edit := write(a, "lib/x.go")
	edit.Tool = "edit_file"
	for _, tc := range []struct {
		name    string
		c       policy.Call
		covered bool
	}{
		{"write_file src/x in another workspace", write(b, "src/x"), false},
		{"read_file docs/a.md in another workspace", read, false},
		{"edit_file under a refused standing grant", edit, false},
		{"write_file src/x in its workspace", write(a, "src/x"), true},
		{"read_file docs/a.md in its workspace", readA, true},
		{"its workspace by another name (a link)", write(alias, "src/x"), true},
	} {
		v := engine.Evaluate(t.Context(), tc.c)
		if granted := v.Decision == policy.Allow && v.Grant != ""; granted != tc.covered {
			t.Errorf("%s: %s %q", tc.name, v.Decision, v.Reason)
		}
	}

	// A session's file grant (the default "for session" scope) is as before.
	s, err := grants.ScopeFor(write(b, "src/x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Record(t.Context(), "sess", s, "U1", time.Hour); err != nil {
		t.Fatal(err)
	}
	c := write(b, "src/x")
	c.SessionID = "sess"
	if v := engine.Evaluate(t.Context(), c); v.Decision != policy.Allow || v.Grant == "" {
		t.Errorf("a session's write_file grant: %s %q", v.Decision, v.Reason)
	}
}

// A standing prefix grant (bot grants add -prefix cat -cwd app) judged the
// files of each call against the calling session's workspace: a session
// whose workspace is wider than agent.workspace (a Codex session started
// in ~/src, the grant made for ~/src/app) had "cat ~/src/other/.env"
// covered. A standing bash scope made by bot grants add names its
// workspace and covers calls there only; one naming none (recorded before)
// judges a prefix's files inside its own directory.
func TestStandingPrefixGrantJudgesFilesInItsWorkspace(t *testing.T) {
	isolateGitConfig(t)
	wide, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(wide, "app")
	writeFiles(t, wide, "app/notes.txt", "other/.env")
	store := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { store.Close() })
	engine, err := policy.New(policy.Config{Grants: store})
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := grants.PrefixScope("cat", app)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := grants.PrefixScope("head", app)
	if err != nil {
		t.Fatal(err)
	}
	bound.Workspace = app // as bot grants add makes it, agent.workspace being app
	for _, s := range []grants.Scope{legacy, bound} {
		if _, err := store.RecordStanding(t.Context(), s, "admin:x"); err != nil {
			t.Fatal(err)
		}
	}
	call := func(ws, cmd string) policy.Call {
		return policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: cmd, Cwd: app, Workspace: ws, SessionID: "codex"}
	}
	other := filepath.Join(wide, "other", ".env")
	for _, tc := range []struct {
		name    string
		c       policy.Call
		covered bool
	}{
		{"legacy prefix, a file of the wider workspace", call(wide, "cat "+other), false},
		{"bound prefix, a session with a wider workspace", call(wide, "head "+other), false},
		{"bound prefix, a session with a wider workspace, its own file", call(wide, "head notes.txt"), false},
		{"legacy prefix, a file of its directory", call(wide, "cat notes.txt"), true},
		{"bound prefix, its workspace", call(app, "head -n 3 notes.txt"), true},
	} {
		v := engine.Evaluate(t.Context(), tc.c)
		if granted := v.Decision == policy.Allow && v.Grant != ""; granted != tc.covered {
			t.Errorf("%s: %s %q", tc.name, v.Decision, v.Reason)
		}
	}
}
