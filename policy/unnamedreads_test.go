package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unnamedWorkspace is a workspace holding .env at its root, Go files at
// the root and under src/, and out/ (empty).
func unnamedWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src", "out"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{".env": "KEY=secret\n", "main.go": "package main\n", "src/x.go": "package src // TODO\n"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// unnamedRules: read_file deny of .env at the workspace root, and bash
// allow rules for the programs the table runs.
func unnamedRules(denyPath string) []Rule {
	rules := []Rule{{Tool: ToolReadFile, Path: denyPath, Decision: Deny}}
	for _, c := range []string{"cat", "grep", "rg", "ag", "ack", "git grep", "git add", "git stash", "tar", "zip", "cp", "ls", "find",
		"du", "mkdir", "timeout", "wc", "sort", "head", "rsync", "diff", "sha256sum", "echo", "cd", "go vet"} {
		rules = append(rules, Rule{Tool: ToolBash, Command: c, Decision: Allow})
	}
	return rules
}

// The files a command reads without naming them meet read_file's rules:
// a glob's matches, a directory operand's files (unless the program reads
// names only), and the tree a search reads with no path operand. Every
// deny below was an allow before (in mode full, and through the allow
// rules in mode ask).
func TestUnnamedReads(t *testing.T) {
	ws := unnamedWorkspace(t)
	denied := []string{
		"cat $(printf .%s env)",
		"f=.e; cat \"${f}nv\"",
		"tar cf - -T list",
		"cat .*",
		"cat .e?v",
		"cat .env*",
		"cat .[e]nv",
		"cat ./.e*",
		"cat ./*/../.e*",
		"cat < .e*",
		"cat .{e,x}nv",
		"cat $'.env'",
		"cat .''env*",
		"grep -r S .",
		"grep -rl S",
		"grep -R S",
		"grep --recursive S",
		"grep -d recurse S",
		"grep --directories=recurse S",
		"grep -r -e S",
		"grep -ri -A 2 S",
		"grep -r \"$p\"",
		"rg -uu S",
		"rg S",
		"rg -e S",
		"ag S",
		"ack S",
		"git grep S",
		"git add -A",
		"git stash -u",
		"tar cf - .",
		"tar -czf out/x.tgz .",
		"zip -r - .",
		"cp -r . out/x",
		"cp -r . /tmp/x",
		"rsync -a ./ out/x",
		"diff -r . out",
		"sha256sum ./*",
		"cat .",
		"timeout 5 grep -r S",
		"cd src && grep -r S ..",
		"find . -exec cat {} +",
		"wc -c -- *",
		"go vet .",
		"npm pack",
		"npm publish --dry-run",
		"cargo package",
		"vercel",
		"semgrep scan",
		"gitleaks detect",
		"cat $HOME/.env",
		"cat \"$PWD/.env\"",
		"base64 \"$(pwd)\"/.env",
		"python3 -m http.server 8000",
		"php -S localhost:8000",
		"for f in .e*; do cat \"$f\"; done",
		"for f in .env; do cat \"$f\"; done",
		// Closed world: grep's --include filter is not read, so this one
		// is denied though grep opens no .env (strace).
		"grep -rl S --include=*.go",
	}
	// Ordinary commands: the verdict is the one the engine without
	// read_file rules gives (allow in mode full, or the ask an allow rule
	// could not lift: a glob is never covered by one, and *.go may expand
	// to file names read as options).
	ordinary := []string{
		"cat *.go",
		"cat ./*.go",
		"cat -- *.go",
		"grep TODO -- *.go",
		"grep S main.go",
		"grep -r TODO src",
		"grep -r TODO src/*.go",
		"grep -r S src",
		"grep -r -e S src",
		"grep -r -e S -- src",
		"rg S src",
		"rg -e S -- src",
		"ls .",
		"ls -la",
		"ls src/*",
		"ls ./*",
		"echo ./*",
		"find . -name '*.go'",
		"du -sh .",
		"mkdir -p build",
		"timeout 5 ls .",
		"cd src && ls ..",
		"echo .",
		"tar -C src -cf - x.go",
		"cat main.go",
		"git add main.go",
		"git stash",
		"for f in ./*.go; do gofmt -l \"$f\"; done",
		"gofmt -l ./*.go",
		"echo $(date)",
		"ls -d $(dirname src/x.go)",
		"f=main.go; cat \"$f\"",
		"cat \"$PWD/main.go\"",
	}
	// Unseen (the call not resolved here), **/.env may name a file under
	// src, or under src/x.go should it be a directory grep -r reads: denied
	// (TestUnnamedReadsUnseen).
	unseenDenied := map[string]bool{
		"grep -r TODO src": true, "grep -r TODO src/*.go": true, "grep -r S src": true, "grep -r -e S src": true,
		"grep -r -e S -- src": true, "rg S src": true, "rg -e S -- src": true, "tar -C src -cf - x.go": true,
	}
	// Unseen, a program the policy does not know (gofmt) given a glob's
	// matches may be given a directory among them and read it whole: it
	// asks under either rule, written out or through a loop's variable
	// (operandvalues.go judges the loop's values as the literal words).
	unseenAsked := map[string]bool{"for f in ./*.go; do gofmt -l \"$f\"; done": true, "gofmt -l ./*.go": true}
	plain, err := New(Config{Rules: unnamedRules("")[1:]})
	if err != nil {
		t.Fatal(err)
	}
	for _, denyPath := range []string{".env", "**/.env"} {
		e, err := New(Config{Rules: unnamedRules(denyPath)})
		if err != nil {
			t.Fatal(err)
		}
		for _, resolved := range []bool{false, true} {
			for _, mode := range []Mode{ModeAsk, ModeFull} {
				call := func(cmd string) Call {
					c := corpusCall(cmd, ws, mode)
					c.Resolved = resolved
					return c
				}
				for _, cmd := range denied {
					// Denied where the file was found and the program is
					// known to read it, else asked: never allowed.
					v := e.Evaluate(t.Context(), call(cmd))
					if v.Decision == Allow || !strings.Contains(v.Reason, " read") {
						t.Errorf("%s resolved=%v %s: %q: %s (%s), want deny or ask: it may read .env", denyPath, resolved, mode, cmd, v.Decision, v.Reason)
					}
				}
				for _, cmd := range ordinary {
					if !resolved && (unseenAsked[cmd] || denyPath == "**/.env" && unseenDenied[cmd]) {
						continue
					}
					want := plain.Evaluate(t.Context(), call(cmd)).Decision
					if v := e.Evaluate(t.Context(), call(cmd)); v.Decision != want {
						t.Errorf("%s resolved=%v %s: %q: %s (%s), want %s as without read rules", denyPath, resolved, mode, cmd, v.Decision, v.Reason, want)
					}
				}
			}
		}
	}

	// Each deny above was an allow in mode full without the fix: the
	// engine without read rules is what the rules were not applied to.
	for _, cmd := range denied {
		if v := plain.Evaluate(t.Context(), corpusCall(cmd, ws, ModeFull)); v.Decision != Allow {
			t.Errorf("without read rules, mode full: %q: %s (%s), want allow (the hole)", cmd, v.Decision, v.Reason)
		}
	}
}

// Where the call was not resolved here, a directory is judged by whether
// a rule could name a file in it; resolved, by the files it holds.
func TestUnnamedReadsUnseen(t *testing.T) {
	ws := unnamedWorkspace(t)
	e, err := New(Config{Rules: append(unnamedRules("**/.env"), Rule{Tool: ToolReadFile, Path: "secrets/**", Decision: Ask})})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "secrets", "k"), []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd      string
		resolved bool
		mode     Mode
		want     Decision
	}{
		{"grep -r TODO src", false, ModeAsk, Ask},  // src may hold a .env
		{"grep -r TODO src", true, ModeAsk, Allow}, // it holds none
		{"cat ./*.go", false, ModeFull, Allow},     // *.go cannot match .env
		{"cat src/*", false, ModeAsk, Ask},         // * can
		{"cat src/*", true, ModeFull, Allow},
		{"grep -r K secrets", true, ModeAsk, Ask},
		{"grep -r K secrets", true, ModeFull, Allow}, // ask rules do not hold in mode full
		{"cat secrets/*.txt", false, ModeAsk, Ask},
		{"cat ~/.env", false, ModeAsk, Ask},
		{"cat ~/.e*", false, ModeAsk, Ask},
		{"cat ~/notes.txt", false, ModeFull, Allow},
		{"ls ~", false, ModeFull, Allow},
		{"cd ~", false, ModeFull, Allow},
	} {
		c := corpusCall(tc.cmd, ws, tc.mode)
		c.Resolved = tc.resolved
		if v := e.Evaluate(t.Context(), c); v.Decision != tc.want {
			t.Errorf("%q resolved=%v %s: %s (%s), want %s", tc.cmd, tc.resolved, tc.mode, v.Decision, v.Reason, tc.want)
		}
	}
}

// A link found under a directory read whole is judged where it leads.
func TestUnnamedReadsThroughLinks(t *testing.T) {
	ws := unnamedWorkspace(t)
	if err := os.Symlink("../.env", filepath.Join(ws, "src", "settings")); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Rules: unnamedRules(".env")})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"grep -R S src", "cat src/*", "tar -chf - src"} {
		c := corpusCall(cmd, ws, ModeFull)
		c.Resolved = true
		if v := e.Evaluate(t.Context(), c); v.Decision != Deny {
			t.Errorf("%q: %s (%s), want deny: src/settings is .env", cmd, v.Decision, v.Reason)
		}
	}
}

// A program run on file names read from input (xargs cat) reads files
// the policy cannot name: while read_file rules exist it asks, in every
// mode; a program that reads names only there is judged as before.
func TestUnnamedReadsFromInput(t *testing.T) {
	ws := unnamedWorkspace(t)
	e, err := New(Config{Rules: append(unnamedRules("**/.env"), Rule{Tool: ToolBash, Command: "xargs", Decision: Allow}, Rule{Tool: ToolBash, Command: "rm", Decision: Allow})})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(Config{Rules: append(unnamedRules("")[1:], Rule{Tool: ToolBash, Command: "xargs", Decision: Allow}, Rule{Tool: ToolBash, Command: "rm", Decision: Allow})})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeAsk, ModeFull} {
		for _, cmd := range []string{"find . -type f | xargs cat", "ls -a | xargs grep KEY", "find . -print0 | xargs -0 -n1 head"} {
			if v := e.Evaluate(t.Context(), corpusCall(cmd, ws, mode)); v.Decision != Ask || !strings.Contains(v.Reason, "named on its input") {
				t.Errorf("%s: %q: %s (%s), want ask: it reads files named on its input", mode, cmd, v.Decision, v.Reason)
			}
			if v := plain.Evaluate(t.Context(), corpusCall(cmd, ws, ModeFull)); v.Decision != Allow {
				t.Errorf("without read rules, mode full: %q: %s (%s), want allow (the hole)", cmd, v.Decision, v.Reason)
			}
		}
		for _, cmd := range []string{"find . -name '*.tmp' | xargs rm", "find . -type d | xargs ls"} {
			want := plain.Evaluate(t.Context(), corpusCall(cmd, ws, mode)).Decision
			if v := e.Evaluate(t.Context(), corpusCall(cmd, ws, mode)); v.Decision != want {
				t.Errorf("%s: %q: %s (%s), want %s as without read rules", mode, cmd, v.Decision, v.Reason, want)
			}
		}
	}
}

// A file listed under a tree read that has another name (a hard link)
// asks, in every mode, as a named one does (linkedRead): the rules were
// checked against the name found.
func TestUnnamedReadsHardLink(t *testing.T) {
	ws := unnamedWorkspace(t)
	if err := os.Link(filepath.Join(ws, ".env"), filepath.Join(ws, "src", "notes.txt")); err != nil {
		t.Skip("no hard links here:", err)
	}
	e, err := New(Config{Rules: unnamedRules("**/.env")})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"grep -r S src", "cat src/*.txt"} {
		c := corpusCall(cmd, ws, ModeFull)
		c.Resolved = true
		if v := e.Evaluate(t.Context(), c); v.Decision != Ask || !strings.Contains(v.Reason, "hard link") {
			t.Errorf("%q: %s (%s), want ask: src/notes.txt is .env's other name", cmd, v.Decision, v.Reason)
		}
	}
	c := corpusCall("grep -r S out", ws, ModeFull)
	c.Resolved = true
	if v := e.Evaluate(t.Context(), c); v.Decision != Allow {
		t.Errorf("grep -r S out: %s (%s), want allow", v.Decision, v.Reason)
	}
}

// A tree read denies only what is certain: the file a deny rule names was
// found there (the call resolved here, the directory listed) and the
// program is known to read what it is given (knownReader). A program that
// may or may not read it (go vet ., git add -A, rg, which skips hidden
// files), a loop's body, or a directory the policy could not list asks,
// in every mode: never an allow, and no denial of a command that may not
// read the file at all.
func TestUnnamedReadsDenyOnlyWhatIsCertain(t *testing.T) {
	ws := unnamedWorkspace(t)
	e, err := New(Config{Rules: unnamedRules("**/.env")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd      string
		resolved bool
		want     Decision
	}{
		{"cat .e?v", true, Deny},
		{"cat *", true, Ask},   // * matches .env only if dotglob is set
		{"cat ./*", true, Ask}, // the same
		{"cat ./.e*", true, Deny},
		{"grep -r S .", true, Deny},
		{"tar cf - .", true, Deny},
		{"cp -r . /tmp/x", true, Deny},
		{"cat .e?v", false, Ask},
		{"grep -r S .", false, Ask},
		{"go vet .", true, Ask},
		{"git add -A", true, Ask},
		{"rg S", true, Ask},
		{"for f in .e*; do cat \"$f\"; done", true, Ask},
		{"cat .env", true, Deny}, // named: the rule on it, as before
	} {
		for _, mode := range []Mode{ModeAsk, ModeFull} {
			c := corpusCall(tc.cmd, ws, mode)
			c.Resolved = tc.resolved
			if v := e.Evaluate(t.Context(), c); v.Decision != tc.want {
				t.Errorf("%q resolved=%v %s: %s (%s), want %s", tc.cmd, tc.resolved, mode, v.Decision, v.Reason, tc.want)
			}
		}
	}
}
