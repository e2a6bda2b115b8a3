package policy

import (
	"strings"
	"testing"
)

// A file call's verdict holds for every reading a file system askops does
// not know may give its path (Exact false): Windows' trailing dots and
// spaces, alternate data streams and 8.3 short names, HFS+'s ignored code
// points, case folding (of the rules too), NFD names, a ~ or a drive the
// agent's tool roots elsewhere, and a ".." after a name nobody resolved.
// Found by a red-team probe of 8,800 file calls (filecall.go).
func TestEveryReadingOfAFilePath(t *testing.T) {
	const ws = "/ws"
	e, err := New(Config{Rules: []Rule{
		{Tool: ToolReadFile, Path: "**/.env", Decision: Deny},
		{Tool: ToolReadFile, Path: "**/.ssh/id_*", Decision: Deny},
		{Tool: ToolReadFile, Path: "secrets/**", Decision: Ask},
		{Tool: ToolReadFile, Path: "Private/**", Decision: Deny},
		{Tool: ToolReadFile, Path: "docs/clé.txt", Decision: Deny},
		{Tool: ToolWriteFile, Path: "**", Decision: Allow},
		{Tool: ToolWriteFile, Path: "secrets/**", Decision: Deny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) Call {
		return Call{Tool: ToolReadFile, Safety: ReadOnly, Path: p, Cwd: ws, Workspace: ws, Resolved: true}
	}
	write := func(p string) Call {
		return Call{Tool: ToolWriteFile, Safety: SideEffect, Path: p, Cwd: ws, Workspace: ws, Resolved: true}
	}
	full := func(c Call) Call { c.Mode = ModeFull; return c }
	search := func(p, glob string) Call {
		c := read(p)
		c.Search, c.Glob, c.Resolved = true, glob, false
		return c
	}
	unresolved := func(c Call) Call { c.Resolved = false; return c }
	exact := func(c Call) Call { c.Exact = true; return c }
	const notAllow Decision = "not allow"
	cases := []struct {
		c    Call
		want Decision
	}{
		// Windows: trailing dots and spaces, streams, short names.
		{write("/ws/.git./hooks/pre-commit"), Ask},
		{write("/ws/.GIT./hooks/pre-commit"), Ask},
		{write("/ws/.git /config"), Ask},
		{write("/ws/.git::$INDEX_ALLOCATION/hooks/pre-commit"), Ask},
		{write("/ws/.git:x/config"), Ask},
		{write("/ws/GIT~1/hooks/pre-commit"), notAllow},
		{write("/ws/src/git~2/config"), notAllow},
		{write("/ws/.gıt/config"), Ask}, // NTFS upper-cases ı to I
		{write("/ws/.g\u200cit/config"), Ask},
		// Mode full allows writes, but not into .git, in any spelling:
		// a built-in danger there as for bash's echo > .git/hooks/x.
		{full(write("/ws/.git/hooks/pre-commit")), Ask},
		{full(exact(write("/ws/.git/config"))), Ask},
		{full(write("/ws/.GIT./hooks/pre-commit")), Ask},
		{full(write("/ws/src/a.go")), Allow},
		{read("/ws/.env."), Deny},
		{read("/ws/.env::$DATA"), Deny},
		{full(read("/ws/.env . ")), Deny},
		{full(read("/ws/src/.ENV:x")), Deny},
		{read("/ws/ENV~1"), Deny},
		{read("/ws/SECRET~1/key"), notAllow},
		{full(read("/ws/PRIVAT~1/x")), Deny},
		{write("/ws/SECRET~1/key"), Deny},
		{read("/ws/secrets./key"), Ask},
		// Case: the rules fold too, and paths given relative or outside.
		{read("/ws/PRIVATE/x"), Deny},
		{full(read("/ws/private/x")), Deny},
		{read("SECRETS/key"), Ask},
		{read("/home/u/.SSH/id_rsa"), Deny},
		{full(read("/home/u/.Ssh/id_rsa")), Deny},
		// Unicode: an NFD name is its NFC rule's file on macOS.
		{read("/ws/docs/cle\u0301.txt"), Deny},
		{read("/ws/DOCS/CLÉ.TXT"), Deny},
		// Searches judge the same spellings.
		{search("/ws/SECRETS", "key"), Ask},
		{search("/ws/private", "*.go"), Deny},
		{search("/ws/conf", ".ENV"), Deny},
		// A home directory or a drive the agent's tool roots the path at.
		{read("~/.ssh/id_rsa"), Deny},
		{read("~/notes.txt"), Ask},
		{read("~root/.bashrc"), Ask},
		{read("C:/Users/u/notes.txt"), Ask},
		{full(read("C:/Users/u/.env")), Deny},
		{write("~/.bashrc"), Ask},
		// A ".." after a name nobody resolved: a link there leads elsewhere.
		{unresolved(read("/ws/innerlink/../key")), Ask},
		{full(unresolved(read("/ws/link/../.env"))), Deny},
		{full(unresolved(write("/ws/hookslink/../config"))), Ask},
		// Ordinary calls stay allowed.
		{search("/ws/src", "main.go"), Allow},
		{read("/ws/README.md"), Allow},
		{read("src/main.go"), Allow},
		{unresolved(read("/ws/src/main.go")), Allow},
		{read("../ws/src/main.go"), Allow},
		{write("/ws/src/main.go"), Allow},
		{write("/ws/docs/notes~.md"), Allow},
		{full(unresolved(write("/ws/src/main.go"))), Allow},
		{exact(write("/ws/.GIT./x")), Allow}, // an exact file system takes the name as written
		{exact(read("/ws/PRIVATE/x")), Allow},
	}
	for _, tc := range cases {
		v := e.Evaluate(t.Context(), tc.c)
		if v.Decision != tc.want && !(tc.want == notAllow && v.Decision != Allow) {
			t.Errorf("%s %q (mode %q, resolved %v, search %v %q): %s (%s), want %s", tc.c.Tool, tc.c.Path, tc.c.Mode, tc.c.Resolved, tc.c.Search, tc.c.Glob, v.Decision, v.Reason, tc.want)
		}
	}
}

func TestForeignRootAndClimbs(t *testing.T) {
	for p, want := range map[string]bool{"~": true, "~/x": true, "~u/x": true, `C:\x`: true, "c:x": true, "C:": true, "/ws/~": false, "src/C:": false, "x": false, "é:": false} {
		if got := ForeignRoot(p); got != want {
			t.Errorf("ForeignRoot(%q) = %v", p, got)
		}
	}
	for p, want := range map[string]bool{"a/../b": true, "/ws/l/../x": true, `a\..\b`: true, "../x": false, "./../x": false, "/ws/x..y": false, "/ws/x": false} {
		if got := ClimbsAfterName(p); got != want {
			t.Errorf("ClimbsAfterName(%q) = %v", p, got)
		}
	}
	if !strings.Contains(windowsNames("/ws/.git. /a::$DATA"), "/.git/a") {
		t.Errorf("windowsNames: %q", windowsNames("/ws/.git. /a::$DATA"))
	}
}
