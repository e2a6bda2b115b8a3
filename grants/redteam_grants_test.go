package grants_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// grantCase is one follow-up call judged against a grant recorded for it
// alone, through the policy's Evaluate as the agent's calls are.
type grantCase struct {
	name    string
	scope   func(t *testing.T) (grants.Scope, error)
	call    policy.Call
	covered bool
}

func runGrantCases(t *testing.T, cases []grantCase) {
	t.Helper()
	store := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { store.Close() })
	engine, err := policy.New(policy.Config{Grants: store})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		scope, err := tc.scope(t)
		if err != nil {
			t.Fatalf("%s: scope: %v", tc.name, err)
		}
		session := fmt.Sprintf("r%d", i)
		if _, err := store.Record(t.Context(), session, scope, "U1", time.Hour); err != nil {
			t.Fatalf("%s: record: %v", tc.name, err)
		}
		c := tc.call
		c.SessionID = session
		if got := scope.Covers(c); got != tc.covered {
			t.Errorf("%s: %s covers %q %q: %v, want %v", tc.name, scope, c.Command, c.Path, got, tc.covered)
		}
		v := engine.Evaluate(t.Context(), c)
		if granted := v.Decision == policy.Allow && v.Grant != ""; granted != tc.covered {
			t.Errorf("%s: Evaluate(%q %q) with %s = %s %q, want covered %v", tc.name, c.Command, c.Path, scope, v.Decision, v.Reason, tc.covered)
		}
	}
}

func rtBash(dir, cmd string) policy.Call {
	return policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: cmd, Cwd: dir, Workspace: dir}
}

// Bash skips only space, tab and newline around a command; any other white
// space (U+00A0, U+2028, U+3000, …) is part of a word. A grant trimmed it
// away (strings.TrimSpace), so "cat src/a.txt" covered "cat
// src/a.txt<U+00A0>", which reads another file, and a prefix grant on
// chmod judged run.sh while chmod changed "run.sh<U+00A0>" (a link, say,
// to .git/hooks/pre-commit). The grant is recorded, and calls matched,
// with only bash's blanks trimmed.
func TestGrantsTrimOnlyWhatBashSkips(t *testing.T) {
	ws := prefixFixture(t)
	exact := func(cmd string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) {
			return grants.ScopeFor(policy.Call{Tool: "bash", Command: cmd, Cwd: ws, Workspace: ws})
		}
	}
	prefix := func(p string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PrefixScope(p, ws) }
	}
	var cases []grantCase
	for _, sp := range []string{"\u00a0", "\u2028", "\u2029", "\u3000", "\u2003", "\u1680", "\u202f", "\u205f", "\u0085", "\v", "\f", "\r"} {
		q := fmt.Sprintf("%q", sp)
		cases = append(cases,
			grantCase{"exact, trailing " + q, exact("cat src/a.txt"), rtBash(ws, "cat src/a.txt"+sp), false},
			grantCase{"exact, leading " + q, exact("cat src/a.txt"), rtBash(ws, sp+"cat src/a.txt"), false},
			grantCase{"prefix, trailing " + q, prefix("chmod"), rtBash(ws, "chmod +x run.sh"+sp), false},
			grantCase{"prefix, leading " + q, prefix("cat"), rtBash(ws, sp+"cat src/a.txt"), false},
			// Approved with it, the grant keeps it: it never covers the call without.
			grantCase{"recorded with trailing " + q, exact("cat src/a.txt" + sp), rtBash(ws, "cat src/a.txt"), false},
		)
	}
	cases = append(cases,
		grantCase{"the same command", exact("cat src/a.txt"), rtBash(ws, "cat src/a.txt"), true},
		grantCase{"bash's blanks around it", exact("cat src/a.txt"), rtBash(ws, " \tcat src/a.txt \n"), true},
		grantCase{"recorded with bash's blanks", exact("\tcat src/a.txt \n"), rtBash(ws, "cat src/a.txt"), true},
		grantCase{"prefix, bash's blanks", prefix("chmod"), rtBash(ws, "chmod +x run.sh\n"), true},
		grantCase{"prefix, the ordinary call", prefix("git log"), rtBash(ws, "git log --oneline -5"), true},
	)
	runGrantCases(t, cases)

	s, err := grants.ScopeFor(policy.Call{Tool: "bash", Command: " cat src/a.txt\u00a0\n", Cwd: ws, Workspace: ws})
	if err != nil || s.Command != "cat src/a.txt\u00a0" {
		t.Errorf("ScopeFor kept %q (%v), want the U+00A0 kept and the blanks trimmed", s.Command, err)
	}
}

// A prefix grant's model covers its program, not the programs it starts by
// name through PATH: git's ssh, gpg, pager and credential helpers (and the
// programs its config names by a bare name), the go command's C compiler
// and version control tools, docker's ssh, gh's git, kubectl's credential
// plugins. When PATH finds one of them in the workspace (node_modules/.bin,
// a bin directory), the agent wrote what runs: not covered.
func TestPrefixGrantsSubprogramsOnPath(t *testing.T) {
	isolateGitConfig(t)
	sshRepo := gitWorkspace(t, []string{"origin=git@github.com:acme/app.git"})
	pagerRepo := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[core]", "\tpager = mypager -R")
	credRepo := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[credential]", "\thelper = vault")
	gpgRepo := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[log]", "\tshowSignature = true", "[gpg]", "\tprogram = mygpg")
	plain := gitWorkspace(t, []string{"origin=git@github.com:acme/app.git"}) // nothing on PATH
	kube := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kube, []byte("users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws-auth\n      args: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kube)

	// Each workspace's bin is on PATH (first), as node_modules/.bin may be.
	bins := []string{}
	for _, ws := range []string{sshRepo, pagerRepo, credRepo, gpgRepo} {
		bins = append(bins, filepath.Join(ws, "bin"))
	}
	t.Setenv("PATH", strings.Join(append(bins, os.Getenv("PATH")), string(os.PathListSeparator)))
	put := func(ws string, names ...string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(ws, "bin", n), []byte("#!/bin/sh\nid\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(sshRepo, "ssh", "gcc", "aws-auth")
	put(pagerRepo, "mypager")
	put(credRepo, "git-credential-vault")
	put(gpgRepo, "mygpg")

	prefix := func(p, ws string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PrefixScope(p, ws) }
	}
	runGrantCases(t, []grantCase{
		{"git push over ssh, ssh in the workspace", prefix("git push", sshRepo), rtBash(sshRepo, "git push origin main"), false},
		{"git fetch over ssh, ssh in the workspace", prefix("git fetch", sshRepo), rtBash(sshRepo, "git fetch origin"), false},
		{"git log, core.pager by name in the workspace", prefix("git log", pagerRepo), rtBash(pagerRepo, "git log -5"), false},
		{"git push, credential helper in the workspace", prefix("git push", credRepo), rtBash(credRepo, "git push origin main"), false},
		{"git fetch, credential helper in the workspace", prefix("git fetch", credRepo), rtBash(credRepo, "git fetch origin"), false},
		{"git log, gpg.program in the workspace", prefix("git log", gpgRepo), rtBash(gpgRepo, "git log"), false},
		{"go list, the C compiler and git in the workspace", prefix("go list", sshRepo), rtBash(sshRepo, "go list -m -u all"), false},
		{"docker ps, ssh in the workspace", prefix("docker ps", sshRepo), rtBash(sshRepo, "docker ps -a"), false},
		{"kubectl get, a credential plugin in the workspace", prefix("kubectl get", sshRepo), rtBash(sshRepo, "kubectl get pods"), false},

		// Nothing of the workspace on PATH: covered as before.
		{"git push over ssh", prefix("git push", plain), rtBash(plain, "git push origin main"), true},
		{"git log", prefix("git log", plain), rtBash(plain, "git log --oneline -5"), true},
		{"go list", prefix("go list", plain), rtBash(plain, "go list -m -u all"), true},
		{"docker ps", prefix("docker ps", plain), rtBash(plain, "docker ps -a"), true},
		{"kubectl get, a plugin of the system", prefix("kubectl get", plain), rtBash(plain, "kubectl get pods -o wide"), true},
	})
}

// A directory grant never covers .git, in any spelling a file system reads
// as .git (Windows' trailing dots and spaces and streams, an 8.3 short
// name, HFS+'s ignored code points, case); nor, on this machine, a file
// the path reaches through a link or that has other names (a hard link to
// .git/config); nor a search (a read of every file under the path) that
// reaches any of those, or that askops cannot look through.
func TestFileGrantsKeepOutOfGitByEveryName(t *testing.T) {
	ws := prefixFixture(t)
	if err := os.MkdirAll(filepath.Join(ws, "dir", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dir/x", ".gitignore", "docs/b.md"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(tool, d string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.DirScope(tool, d, ws) }
	}
	path := func(tool, p string) func(*testing.T) (grants.Scope, error) {
		return func(*testing.T) (grants.Scope, error) { return grants.PathScope(tool, p, ws) }
	}
	file := func(tool, p string, resolved bool) policy.Call {
		return policy.Call{Tool: tool, Safety: policy.SideEffect, Path: p, Cwd: ws, Workspace: ws, Resolved: resolved}
	}
	search := func(p string, resolved bool) policy.Call {
		c := file("read_file", filepath.Join(ws, p), resolved)
		c.Search = true
		return c
	}
	var cases []grantCase
	for _, tool := range []string{"read_file", "list_files"} {
		for _, p := range []string{".git./config", ".git /config", ".git::$INDEX_ALLOCATION/config", "GIT~1/config",
			".g\u200cit/config", ".git\ufeff/hooks/x", "dir/.git./config", "dir/GIT~1/config", "dir/.GIT/config"} {
			d := "."
			if strings.HasPrefix(p, "dir/") {
				d = "dir"
			}
			cases = append(cases, grantCase{tool + " " + p, dir(tool, d), file(tool, p, false), false})
		}
		cases = append(cases,
			grantCase{tool + " a file in the directory", dir(tool, "dir"), file(tool, "dir/x", false), true},
			grantCase{tool + " a file deeper", dir(tool, "dir"), file(tool, "dir/sub/x", false), true},
			grantCase{tool + " .gitignore", dir(tool, "."), file(tool, ".gitignore", false), true},
			grantCase{tool + " .github", dir(tool, "."), file(tool, ".github/workflows/ci.yml", false), true},
		)
	}
	for _, tool := range []string{"write_file", "edit_file", "read_file"} {
		cases = append(cases,
			grantCase{tool + " a hard link to .git/config", dir(tool, "src"), file(tool, filepath.Join(ws, "src/hl"), true), false},
			grantCase{tool + " a hard link, path grant", path(tool, "src/hl"), file(tool, filepath.Join(ws, "src/hl"), true), false},
			grantCase{tool + " through a link into .git", dir(tool, "src"), file(tool, filepath.Join(ws, "src/glink/config"), true), false},
			grantCase{tool + " through a link out", dir(tool, "src"), file(tool, filepath.Join(ws, "src/out/x"), true), false},
			grantCase{tool + " a file of the directory", dir(tool, "src"), file(tool, filepath.Join(ws, "src/a.txt"), true), true},
			grantCase{tool + " a new file", dir(tool, "src"), file(tool, filepath.Join(ws, "src/new.txt"), true), true},
			grantCase{tool + " the file", path(tool, "src/a.txt"), file(tool, filepath.Join(ws, "src/a.txt"), true), true},
		)
	}
	cases = append(cases,
		grantCase{"search the workspace (it holds .git)", dir("read_file", "."), search(".", true), false},
		grantCase{"search vendor (vendor/lib/.git)", dir("read_file", "vendor"), search("vendor", true), false},
		grantCase{"search src (a hard link to .git/config)", dir("read_file", "src"), search("src", true), false},
		grantCase{"search docs, not resolved here", dir("read_file", "docs"), search("docs", false), false},
		grantCase{"search docs", dir("read_file", "docs"), search("docs", true), true},
		grantCase{"read a file of docs, not resolved here", dir("read_file", "docs"), file("read_file", "docs/a.md", false), true},
	)
	runGrantCases(t, cases)
}
