package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
)

// `bot run` with a config that has no slack section asks the serve on this
// machine: its Asks show in the console, the terminal says where they
// wait, an approval there runs the call, "for session" there lets the
// identical next call run unasked, and a deny reaches the model with its
// reason.
func TestRunAgainstTheLocalConsole(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	serveCfg, env := localConsole(t, localConsoleYAML, "dev")
	model := fakeopenai.Start(t,
		bashCall("c1", "touch made.txt"),
		bashCall("c2", "touch made.txt"),
		bashCall("c3", "rm -rf build"),
		fakeopenai.Text("made the file, left build alone"),
	)
	ws := filepath.Join(t.TempDir(), "ws")
	runCfg := writeConfig(t, "openai:\n  base_url: "+model.BaseURL()+"\n  model: fake-model\nagent:\n  workspace: "+ws+"\n")

	if r := waitResult(t, startBot(ctx, t, env, "run", "-config", runCfg, "make the file")); r.code != exitFailed || !strings.Contains(r.stderr, "start `bot serve`") {
		t.Fatalf("no serve: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	serve := startConsoleServe(ctx, t, env, serveCfg)
	defer serve.Stop()
	base := serve.base
	browser, _ := signIn(t, serve.link)

	ran := startBot(ctx, t, env, "run", "-config", runCfg, "make the file")
	decideInConsole(ctx, t, browser, base, serve.stderr, "approve_session", "", "touch made.txt")
	decideInConsole(ctx, t, browser, base, serve.stderr, "deny", "keep the build", "rm -rf build")
	r := waitResult(t, ran)
	if r.code != exitOK || !strings.Contains(r.stdout, "made the file, left build alone") {
		t.Fatalf("bot run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	for _, want := range []string{"asking in the console: touch made.txt", "approved for session by console:carol", "denied by console:carol"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the terminal does not say %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stderr, "waiting for a decision in the console"); n != 2 {
		t.Errorf("%d Asks waited in the console, want 2 (the second touch is inside the session's grant):\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "waiting for a decision in the console at "+base) {
		t.Errorf("the terminal does not say where the Ask waits:\n%s", r.stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 4 || !strings.Contains(string(reqs[3].Raw), "keep the build") {
		t.Errorf("the model was not told the deny's reason (%d requests)", len(reqs))
	}
}
