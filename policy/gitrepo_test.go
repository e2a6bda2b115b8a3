package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// git reads the configuration of the repository it finds (gitrepo.go):
// with an allow rule for git itself (the programs rules), one pointed
// elsewhere asks, and so does git run from a directory of the workspace
// that is a repository the policy has not read (the agent's own workdir
// made one: out/b holds HEAD, objects/, refs/ and a config whose
// core.fsmonitor git status runs).
func TestGitRepositoryElsewhere(t *testing.T) {
	ws := corpusWorkspace(t)
	for _, d := range []string{"src", "out/b/objects", "out/b/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		"out/b/HEAD":   "ref: refs/heads/main\n",
		"out/b/config": "[core]\n\tbare = false\n\tworktree = ../..\n\tfsmonitor = rm -f zz\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	programs, err := New(Config{Rules: programsRules()})
	if err != nil {
		t.Fatal(err)
	}
	corpus, _ := corpusEngine(t)
	for _, c := range []struct {
		engine  *Engine
		command string
		cwd     string // relative to the workspace
		want    Decision
	}{
		{programs, "git -C /tmp status", "", Ask},
		{programs, "git -C out/b status", "", Ask},
		{programs, "git --git-dir=out/b status", "", Ask},
		{programs, "git --exec-path=out x", "", Ask},
		{programs, "git --bare log", "", Ask},
		{programs, "git --attr-source=HEAD status", "", Ask},
		{programs, "git -C out status", "", Allow}, // no repository between out and the workspace
		{programs, "git -C . status", "", Allow},
		{programs, "git --no-pager log", "", Allow},
		{programs, "git status", "", Allow},
		{corpus, "git status", "out/b", Ask},
		{corpus, "git status", "src", Allow},
		{corpus, "git log", "", Allow},
	} {
		call := corpusCall(c.command, filepath.Join(ws, c.cwd), ModeAsk)
		call.Workspace = ws
		if v := c.engine.Evaluate(t.Context(), call); v.Decision != c.want {
			t.Errorf("%q in %q: got %s (%s), want %s", c.command, c.cwd, v.Decision, v.Reason, c.want)
		}
	}
}
