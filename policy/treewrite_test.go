package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTreeWritesMeetTheRulesUnderThem: a command that writes, deletes or
// changes the files under a directory by names the line does not give (a
// recursive delete, chmod or copy, an extraction, git writing the work
// tree) meets every write_file deny and ask rule that may name a file
// there, in every mode: it may write secrets/token, and the policy cannot
// tell. The same command beside no such rule is judged as before.
func TestTreeWritesMeetTheRulesUnderThem(t *testing.T) {
	ws := corpusWorkspace(t)
	for _, d := range []string{"secrets", "src", "docs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "out/a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := []Rule{
		{Tool: ToolWriteFile, Path: "secrets/**", Decision: Deny},
		{Tool: ToolWriteFile, Path: "docs/**/*.md", Decision: Ask},
		{Tool: ToolWriteFile, Path: "out/**", Decision: Allow},
	}
	for _, c := range []string{"cp", "rsync", "find", "chmod", "mv", "tar", "unzip", "patch", "git"} {
		rules = append(rules, Rule{Tool: ToolBash, Command: c, Decision: Allow})
	}
	e := newTestEngine(t, Config{Rules: rules})
	bare := newTestEngine(t, Config{Rules: []Rule{}})
	const mayWrite = "may include what a write_file deny rule names"
	for _, tc := range []struct {
		cmd  string
		mode Mode
		want Decision
		why  string
	}{
		// Trees that may hold secrets/token: asked in every mode.
		{"git checkout main", ModeFull, Ask, mayWrite},
		{"git checkout -b topic origin/main", ModeFull, Ask, mayWrite},
		{"git switch main", ModeFull, Ask, mayWrite},
		{"git reset --hard", ModeFull, Ask, mayWrite},
		{"git pull", ModeFull, Ask, mayWrite},
		{"git merge topic", ModeFull, Ask, mayWrite},
		{"git rebase main", ModeFull, Ask, mayWrite},
		{"git cherry-pick abc123", ModeFull, Ask, mayWrite},
		{"git stash pop", ModeFull, Ask, mayWrite},
		{"git stash", ModeFull, Ask, mayWrite},
		{"git apply out/p.diff", ModeFull, Ask, mayWrite},
		{"git checkout -- .", ModeFull, Ask, mayWrite},
		{"git -C src checkout main", ModeFull, Ask, mayWrite}, // the work tree is the repository's, above src
		{"git --work-tree=. checkout main", ModeFull, Ask, mayWrite},
		{"tar -xf out/a.tar", ModeFull, Ask, mayWrite},
		{"unzip out/a.zip", ModeFull, Ask, mayWrite},
		{"patch -p1 < out/p.diff", ModeFull, Ask, mayWrite},
		{"cp -r src/. .", ModeFull, Ask, mayWrite},
		{"rsync -a src/ ./", ModeFull, Ask, mayWrite},
		{"git init", ModeFull, Ask, mayWrite},                          // its template's files
		{"git checkout-index -a --prefix=./", ModeFull, Ask, mayWrite}, // the index's names
		{"git push . HEAD:refs/heads/x", ModeFull, Ask, mayWrite},      // a local repository written
		{"git checkout main", ModeNever, Deny, mayWrite},
		{"git pull", ModeAsk, Ask, mayWrite},
		// An ask rule under the tree asks in mode ask, and not in mode full.
		{"cp -r src/. docs", ModeAsk, Ask, `the rules ask before write_file of the files under "docs"`},
		{"cp -r src/. docs", ModeFull, Allow, "mode full"},
		{"find docs -delete", ModeAsk, Ask, `the rules ask before write_file of the files under "docs"`},
		{"chmod -R go-w docs", ModeAsk, Ask, `the rules ask before write_file of the files under "docs"`},
		// Trees no rule can name a file under.
		{"cp -r src out/b", ModeAsk, Allow, ""},
		{"rsync -a src/ out/dst/", ModeAsk, Allow, ""},
		{"find out -delete", ModeAsk, Allow, ""},
		{"chmod -R 755 out", ModeAsk, Allow, ""},
		{"tar -xf out/a.tar -C out", ModeFull, Allow, "mode full"},
		// Not trees: a file, a listing, the index alone, a new branch
		// where the files stay as they are, a push.
		{"chmod -R 755 out/a.txt", ModeAsk, Allow, ""},
		{"cp out/a.txt out/b.txt", ModeAsk, Allow, ""},
		{"git stash list", ModeFull, Allow, "mode full"},
		{"git reset HEAD~1", ModeFull, Allow, "mode full"},
		{"git checkout -b topic", ModeFull, Allow, "mode full"},
		{"git apply --check out/p.diff", ModeFull, Allow, "mode full"},
		{"git --work-tree=. status", ModeFull, Allow, "mode full"},
		{"rsync -a src/ host:dst/", ModeFull, Allow, "mode full"},
	} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: tc.cmd, Cwd: ws, Workspace: ws, Mode: tc.mode})
		if v.Decision != tc.want || !strings.Contains(v.Reason+" "+v.Rule, tc.why) {
			t.Errorf("%s in mode %s: %s (%s; rule %q), want %s with %q", tc.cmd, tc.mode, v.Decision, v.Reason, v.Rule, tc.want, tc.why)
		}
		// With no rules the tree is only a write.
		if w := bare.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: tc.cmd, Cwd: ws, Workspace: ws, Mode: ModeFull}); strings.Contains(w.Reason, "files under") {
			t.Errorf("%s with no rules in mode full: %s (%s), want no tree verdict", tc.cmd, w.Decision, w.Reason)
		}
	}
}

// TestTreeWritesListedWhereResolved: where the call was resolved on this
// machine, a tree whose files are the ones there now (a delete, chmod -R)
// and the tree a copy or move makes anew are listed, and each file judged
// at the name it is written under: a deny on **/.env stops rm -r lib
// where lib holds a .env, and leaves rm -r src and cp -r src out/new
// alone where none is there. Unresolved, or after the line wrote there,
// the rules alone judge it (asked).
func TestTreeWritesListedWhereResolved(t *testing.T) {
	ws := corpusWorkspace(t)
	for f, body := range map[string]string{"src/main.go": "package main\n", "src/sub/x.go": "package sub\n", "lib/.env": "A=1\n", "lib/a.go": "package lib\n", "out/there/x": "x\n"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../lib", filepath.Join(ws, "src/lnk")); err != nil {
		t.Fatal(err)
	}
	e := newTestEngine(t, Config{Rules: []Rule{{Tool: ToolWriteFile, Path: "**/.env", Decision: Deny}}})
	const unseen = "may include what a write_file deny rule names"
	for _, tc := range []struct {
		cmd      string
		resolved bool
		want     Decision
		why      string
	}{
		{"rm -r src", true, Allow, "mode full"},
		{"rm -rf src/sub", true, Allow, "mode full"},
		{"find src -name '*.go' -delete", true, Allow, "mode full"},
		{"chmod -R go-w src", true, Allow, "mode full"},
		{"git rm -r src", true, Allow, "mode full"},
		{"cp -r src out/new", true, Allow, "mode full"},
		{"rsync -a src/ out/new/", true, Allow, "mode full"},
		{"mv src out/moved", true, Allow, "mode full"},
		{"rm -r lib", true, Deny, `deletes "lib/.env"`},
		{"chmod -R 777 lib", true, Deny, "lib/.env"},
		{"cp -r lib out/new", true, Deny, "out/new/.env"},
		{"mv lib out/moved", true, Deny, `"out/moved/.env"`},
		// Unresolved: the rules alone.
		{"rm -r src", false, Ask, unseen},
		{"cp -r src out/new", false, Ask, unseen},
		// The line wrote there first, or the copy lands in a directory
		// that is there already (a link in it may lead elsewhere).
		{"touch src/x; rm -r src", true, Ask, unseen},
		{"cp -r lib/a.go src/; rm -r src", true, Ask, unseen},
		{"rsync -a src/ out/there/", true, Ask, unseen},
		{"cp -rT src out/there", true, Ask, unseen},
		{"cp -rL src out/new", true, Ask, unseen}, // links followed: not what a listing shows
		// Names from elsewhere: never listed.
		{"tar -xf out/a.tar -C src", true, Ask, unseen},
		{"git checkout main", true, Ask, unseen},
	} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolBash, Safety: SideEffect, Command: tc.cmd, Cwd: ws, Workspace: ws, Mode: ModeFull, Resolved: tc.resolved})
		if v.Decision != tc.want || !strings.Contains(v.Reason, tc.why) {
			t.Errorf("%s (resolved %v): %s (%s), want %s with %q", tc.cmd, tc.resolved, v.Decision, v.Reason, tc.want, tc.why)
		}
	}
}
