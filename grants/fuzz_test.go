package grants_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// FuzzCoversStaysInScope checks Covers against oracles computed differently
// from the implementation: a covered file call resolves (Join+Clean) inside
// the granted path, and a command a prefix grant covers is, by a walk of its
// syntax tree, one plain command with no substitution, expansion or
// redirection. Run longer with: go test -fuzz FuzzCoversStaysInScope ./grants/
func FuzzCoversStaysInScope(f *testing.F) {
	for _, seed := range []struct{ path, cwd, command string }{
		{"docs/a.md", "/ws", "git status"},
		{"../docs/a.md", "/ws/docs", "git status; rm -rf /"},
		{"/ws/docs/../x", "", "git status $(id)"},
		{"a.md", "/ws/docs", "git status > /etc/passwd"},
		{"src/main.go", "/ws", "git status `id`"},
		{"main.go", "/ws/src", "git status -s 'a b' \"c\""},
		{"./src//main.go", "/ws/", "FOO=1 git status"},
		{"docs", "/ws/docs/..", "git status\nid"},
		{"", "/ws/docs", "git status <(id)"},
		{"/ws2/docs/a", "/ws", "git status ${x}"},
	} {
		f.Add(seed.path, seed.cwd, seed.command)
	}
	dir := must(f)(grants.DirScope("read_file", "docs", ws))
	file := must(f)(grants.PathScope("write_file", "src/main.go", ws))
	prefix := must(f)(grants.PrefixScope("git status", ws))
	f.Fuzz(func(t *testing.T, path, cwd, command string) {
		resolved := func() string {
			base := cwd
			if base == "" {
				base = ws
			}
			if filepath.IsAbs(path) {
				return filepath.Clean(path)
			}
			return filepath.Join(base, path)
		}
		hasDotDot := slices.Contains(strings.Split(path, "/"), "..") || slices.Contains(strings.Split(cwd, "/"), "..")
		if dir.Covers(policy.Call{Tool: "read_file", Path: path, Cwd: cwd, Workspace: ws}) {
			if r := resolved(); hasDotDot || (r != "/ws/docs" && !strings.HasPrefix(r, "/ws/docs/")) {
				t.Fatalf("dir docs covers path %q in cwd %q (resolves to %q)", path, cwd, r)
			}
		}
		if file.Covers(policy.Call{Tool: "write_file", Path: path, Cwd: cwd, Workspace: ws}) {
			if r := resolved(); hasDotDot || r != "/ws/src/main.go" {
				t.Fatalf("path src/main.go covers path %q in cwd %q (resolves to %q)", path, cwd, r)
			}
		}
		c := policy.Call{Tool: "bash", Command: command, Cwd: cwd, Workspace: ws}
		if prefix.Covers(c) {
			if filepath.Clean(cwd) != ws && cwd != "" {
				t.Fatalf("prefix in /ws covers cwd %q", cwd)
			}
			if why := notPlain(command); why != "" {
				t.Fatalf("prefix git status covers %q, which %s", command, why)
			}
		}
	})
}

// notPlain says why command is not one plain command starting with the
// literal words git status, judged by walking its syntax tree.
func notPlain(command string) string {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return "does not parse"
	}
	if len(f.Stmts) != 1 {
		return "has several statements"
	}
	calls := 0
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			calls++
			if len(n.Assigns) > 0 {
				why = "has an assignment"
			}
		case *syntax.Redirect:
			why = "has a redirection"
		case *syntax.CmdSubst, *syntax.ProcSubst:
			why = "has a substitution"
		case *syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob, *syntax.BraceExp:
			why = "has an expansion"
		case *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block:
			why = "is compound"
		}
		return true
	})
	if why != "" {
		return why
	}
	if calls != 1 {
		return "is not exactly one command"
	}
	call := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if len(call.Args) < 2 || call.Args[0].Lit() != "git" && !quotedAs(call.Args[0], "git") {
		return "does not start with git"
	}
	return ""
}

// quotedAs reports whether w is exactly lit in single or double quotes.
func quotedAs(w *syntax.Word, lit string) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.SglQuoted:
		return p.Value == lit
	case *syntax.DblQuoted:
		return len(p.Parts) == 1 && p.Parts[0].(*syntax.Lit).Value == lit
	}
	return false
}
