package grants_test

import (
	"strings"
	"testing"

	"github.com/askops/askops/grants"
)

// A directory grant never reaches into .git, whatever its case: its hooks
// and config run code, so "anything in the workspace" is not .git/hooks.
func TestDirGrantNeverCoversGit(t *testing.T) {
	all, err := grants.DirScope("write_file", "/ws", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	src, err := grants.DirScope("edit_file", "/ws/src", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scope grants.Scope
		tool  string
		path  string
		want  bool
	}{
		{all, "write_file", "/ws/src/main.go", true},
		{all, "write_file", "/ws/.git/hooks/pre-commit", false},
		{all, "write_file", "/ws/.git/config", false},
		{all, "write_file", "/ws/.GIT/config", false},
		{all, "write_file", "/ws/.Git/hooks/post-checkout", false},
		{all, "write_file", "/ws/vendor/lib/.git/config", false},
		{all, "write_file", "/ws/.github/workflows/ci.yml", true},
		{src, "edit_file", "/ws/src/.git/hooks/pre-push", false},
		{src, "edit_file", "/ws/src/a.go", true},
	} {
		if got := tc.scope.Covers(fileCall(tc.tool, tc.path, "/ws")); got != tc.want {
			t.Errorf("%s covers %s %s: %v, want %v", tc.scope, tc.tool, tc.path, got, tc.want)
		}
	}
	for _, dir := range []string{"/ws/.git", "/ws/.git/hooks", "/ws/.GIT"} {
		if _, err := grants.DirScope("write_file", dir, "/ws"); err == nil || !strings.Contains(err.Error(), "never covers .git") {
			t.Errorf("DirScope(%s): %v, want a refusal", dir, err)
		}
	}
}

// git commit (and every subcommand that runs the repository's hooks or
// configured programs, git alone, git with an option first) is never a
// prefix grant; read-only and push prefixes stay grantable.
func TestGitHookCommandsAreNotPrefixGrants(t *testing.T) {
	for _, p := range []string{"git", "git commit", "git commit -m", "git merge", "git rebase", "git pull",
		"git checkout", "git switch", "git am", "git cherry-pick", "git -c core.hooksPath=x commit", "git -C sub status", "git stash"} {
		if _, err := grants.PrefixScope(p, "/ws"); err == nil {
			t.Errorf("PrefixScope(%q) accepted; it runs the repository's hooks", p)
		}
		s := grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: p, Cwd: "/ws"}
		if s.Covers(bashCall(p+" x", "/ws")) {
			t.Errorf("a stored prefix grant %q covers calls", p)
		}
	}
	for _, p := range []string{"git push", "git status", "git log", "git diff"} {
		if _, err := grants.PrefixScope(p, "/ws"); err != nil {
			t.Errorf("PrefixScope(%q) refused: %v", p, err)
		}
	}
	if _, err := grants.ScopeFor(bashCall(`git commit -m "fix"`, "/ws")); err != nil {
		t.Errorf("the exact command stays grantable: %v", err)
	}
}
