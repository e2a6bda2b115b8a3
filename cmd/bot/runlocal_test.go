package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
)

// decideInConsole waits for the Ask whose card shows shows in the signed-in
// console at base and decides it with action (approve, deny) and reason.
func decideInConsole(ctx context.Context, t *testing.T, browser *http.Client, base, shows, action, reason string) {
	t.Helper()
	askRe := regexp.MustCompile(`action="/asks/([a-z2-7]{26})"`)
	csrfRe := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	for {
		resp, err := browser.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		page := readBody(t, resp)
		if m := askRe.FindStringSubmatch(page); m != nil && strings.Contains(page, shows) {
			form := url.Values{"csrf": {csrfRe.FindStringSubmatch(page)[1]}, "action": {action}}
			if reason != "" {
				form.Set("reason", reason)
			}
			readBody(t, postForm(ctx, t, browser, base+"/asks/"+m[1], base, form))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no Ask showing %q in the console:\n%s", shows, page)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// `bot run` with a config that has no slack section asks the serve on this
// machine: its Asks show in the console, the terminal says where they
// wait, an approval there runs the call, "for session" there lets the
// identical next call run unasked, and a deny reaches the model with its
// reason.
func TestRunAgainstTheLocalConsole(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serveCfg, env := localConsole(t, localConsoleYAML, "dev")
	model := fakeopenai.Start(t,
		fakeopenai.Call(fakeopenai.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"touch made.txt"}`}),
		fakeopenai.Call(fakeopenai.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command":"touch made.txt"}`}),
		fakeopenai.Call(fakeopenai.ToolCall{ID: "c3", Name: "bash", Arguments: `{"command":"rm -rf build"}`}),
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
	decideInConsole(ctx, t, browser, base, "touch made.txt", "approve_session", "")
	decideInConsole(ctx, t, browser, base, "rm -rf build", "deny", "keep the build")
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
