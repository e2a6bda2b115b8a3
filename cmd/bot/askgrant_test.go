package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
)

// A grant never lets bot ask skip the human for a command the policy
// denies or finds dangerous, as it never does for the agent: the policy
// checks those before grants. A standing "git push" grant approves a plain
// push, not a force push to main or a push a deny rule forbids.
func TestAskGrantDoesNotCoverDeniedOrDangerousCommands(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, _, env := httpModeConfigOnRedis(t, fake, `policy:
  rules:
    - {tool: bash, command: "git push origin prod", decision: deny}
`)
	// bot ask runs in its working directory: a repository whose config
	// names origin, the only remote a push grant reaches.
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/acme/app.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", cwd}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	t.Chdir(cwd)
	scope, err := grants.PrefixScope("git push", cwd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grantStore(t, env["REDIS_URL"]).RecordStanding(ctx, scope, "admin"); err != nil {
		t.Fatal(err)
	}

	r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "--", "git", "push", "origin", "feature"))
	if r.code != 0 || !strings.Contains(r.stdout, "approved by standing grant") {
		t.Fatalf("plain push: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "300ms", "--", "git", "push", "--force", "origin", "main"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") {
		t.Errorf("force push: exit %d stdout %q (want asked, then expired)", r.code, r.stdout)
	}
	// A deny rule denies without asking, as at every front door.
	r = waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "300ms", "--", "git", "push", "origin", "prod"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "denied by askops policy") {
		t.Errorf("denied push: exit %d stdout %q (want denied by the policy)", r.code, r.stdout)
	}
}
