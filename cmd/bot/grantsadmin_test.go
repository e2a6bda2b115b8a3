package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/grants"
)

// An admin's scope is named in the workspace's real spelling (the form the
// agent's calls carry), never outside it; its arguments are checked per
// tool before any path is.
func TestAdminScope(t *testing.T) {
	real := t.TempDir()
	if err := os.Mkdir(filepath.Join(real, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	w, err := openWorkspace(link)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Scope(adminScope{Tool: "bash", Command: "npm test", Cwd: filepath.Join(link, "app")})
	if err != nil || s.Cwd != filepath.Join(real, "app") {
		t.Errorf("bash scope %+v, %v: want the real cwd %s", s, err, filepath.Join(real, "app"))
	}
	if _, err := w.Scope(adminScope{Tool: "bash", Command: "ls", Cwd: "../"}); err == nil || !strings.Contains(err.Error(), `contains ".."`) {
		t.Errorf("cwd with ..: %v", err)
	}
	if _, err := openWorkspace(filepath.Join(real, "missing")); err == nil {
		t.Error("a missing workspace opened")
	}

	none := func(...string) []string { return nil }
	for _, tc := range []struct {
		scope adminScope
		given []string
		want  string
	}{
		{adminScope{}, nil, "-tool is required"},
		{adminScope{Tool: "bash", Command: "ls", Cwd: "."}, []string{"-path"}, "-path is for file tools"},
		{adminScope{Tool: "bash", Command: "ls", Prefix: "git", Cwd: "."}, nil, "exactly one of -command"},
		{adminScope{Tool: "bash", Command: "ls"}, nil, "bash needs -cwd"},
		{adminScope{Tool: "read_file", Path: "a"}, []string{"-cwd"}, "-cwd is for bash"},
		{adminScope{Tool: "read_file"}, nil, "exactly one of -path"},
		{adminScope{Tool: "curl"}, nil, `unknown tool "curl"`},
		{adminScope{Tool: "list_files", Dir: "."}, nil, ""},
	} {
		given := none
		if tc.given != nil {
			given = func(...string) []string { return tc.given }
		}
		err := tc.scope.Check(given)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.scope, err, tc.want)
		}
	}
}

// A standing grant always says an admin made it, and a listing line cannot
// be forged by what a stored field holds.
func TestAdminGrantorAndLine(t *testing.T) {
	for _, tc := range []struct{ by, user, want string }{
		{"", "ana", "admin:ana"}, {"bob", "ana", "admin:bob"}, {"admin:bob", "", "admin:bob"},
	} {
		if got, err := adminGrantor(tc.by, tc.user); err != nil || got != tc.want {
			t.Errorf("AdminGrantor(%q, %q) = %q, %v; want %q", tc.by, tc.user, got, err, tc.want)
		}
	}
	for _, by := range []string{"", "a\tb"} {
		if _, err := adminGrantor(by, ""); err == nil {
			t.Errorf("AdminGrantor(%q) accepted", by)
		}
	}
	g := grants.Grant{ID: "x\ty", By: "admin:ana\nfake", CreatedAt: time.Unix(0, 0)}
	if cols := strings.Split(listingLine(g), "\t"); len(cols) != 5 || cols[4] != "never" || strings.Contains(listingLine(g), "\n") {
		t.Errorf("line %q: want 5 columns on one line, expires never", listingLine(g))
	}
}

// Old grant ids may begin with "-": revoke must read them as ids, not
// flags, while real flags and their values stay flags.
func TestSplitIDs(t *testing.T) {
	old := "-AAAAAAAAAAAAAAAAAAAAA" // 22 base64url characters
	isFlag := func(name string) bool { return name == "session" || name == "config" }
	flags, ids := splitGrantIDs([]string{"-session", "s1", old, "--config=f"}, isFlag)
	if !slices.Equal(flags, []string{"-session", "s1", "--config=f"}) || !slices.Equal(ids, []string{old}) {
		t.Errorf("flags %q ids %q", flags, ids)
	}
	flags, ids = splitGrantIDs([]string{"--", old}, isFlag)
	if !slices.Equal(flags, []string{"--", old}) || len(ids) != 0 {
		t.Errorf("after --: flags %q ids %q", flags, ids)
	}
}
