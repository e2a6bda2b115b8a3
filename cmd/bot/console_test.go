package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/slackui"
)

var signInRe = regexp.MustCompile(`sign in at (https?://\S+)`)

// TestServeLocalConsole: serve with a config that has no slack section
// starts the console alone (no Slack, no model), prints a sign-in link that
// works once, writes the local endpoint file (0600), refuses a form without
// its CSRF token, and stops cleanly, removing the file.
func TestServeLocalConsole(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	cfgPath, env := localConsole(t, localConsoleYAML, "ignored")
	endpoint := env["ASKOPS_LOCAL_ENDPOINT"]
	serve := startConsoleServe(ctx, t, env, cfgPath)
	link, base := serve.link, serve.base

	client, body := signIn(t, link)
	if !strings.Contains(body, "console:carol") {
		t.Fatalf("sign-in page:\n%s", body)
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(link); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a spent link: %v %v, want 403", resp, err)
	}

	// The probes an orchestrator uses, as on a serve with Slack; no
	// sign-in needed.
	probe := &http.Client{Timeout: 10 * time.Second}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ok", "/metrics": "askops_"} {
		resp, err := probe.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		if body := readBody(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s on the console-only serve: %d %.200s", path, resp.StatusCode, body)
		}
	}

	fi, err := os.Stat(endpoint)
	if err != nil {
		t.Fatalf("endpoint file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("endpoint file mode %v, want 0600", fi.Mode().Perm())
	}
	var ep hook.LocalEndpoint
	if b, err := os.ReadFile(endpoint); err != nil || json.Unmarshal(b, &ep) != nil || ep.URL != base || !recordid.ValidSecret(ep.Token) {
		t.Errorf("endpoint file holds %+v (%v), want url %s and a 256-bit token", ep, err, base)
	}

	resp := postForm(ctx, t, client, base+"/asks/aaaaaaaaaaaaaaaaaaaaaaaaaa", base, url.Values{"action": {"approve"}})
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Form refused") {
		t.Errorf("a form without its CSRF token: %d\n%s", resp.StatusCode, body)
	}
	// Another site's page posting with the victim's cookie is refused by
	// the cross-origin check, token or not.
	resp = postForm(ctx, t, client, base+"/asks/aaaaaaaaaaaaaaaaaaaaaaaaaa", "http://evil.example", url.Values{"action": {"approve"}})
	if readBody(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin form: %d, want 403", resp.StatusCode)
	}

	r := serve.Stop()
	if _, err := os.Stat(endpoint); !os.IsNotExist(err) {
		t.Errorf("endpoint file left behind: %v", err)
	}
	if !strings.Contains(r.stderr, "bot run") {
		t.Errorf("serve did not say that runs need a model; stderr:\n%s", r.stderr)
	}
}

// startServeWithLink runs the program (a serve with the console) in the
// background and returns the sign-in link it prints; its exit code arrives
// on done.
func startServeWithLink(ctx context.Context, t *testing.T, env map[string]string, args ...string) (link string, done <-chan int, stdout, stderr *syncBuffer) {
	t.Helper()
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), stdout, stderr)
	}()
	for {
		if m := signInRe.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], exited, stdout, stderr
		}
		select {
		case code := <-exited:
			t.Fatalf("serve exited %d before printing a sign-in link; stderr:\n%s", code, stderr.String())
		case <-ctx.Done():
			t.Fatalf("no sign-in link printed; stderr:\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestConsoleBesideSlackServe: serve with Slack and console.enabled, and a
// separate `bot ask` process on the same Redis. The Ask is in Slack and in
// the console; approving it in the console lets `bot ask` exit 0 approved
// by console:NAME, and the Slack message is updated to say so.
func TestConsoleBesideSlackServe(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	// `bot ask` runs as USER=tester and the console's user is tester too:
	// approving it there is a self-approval, which this test allows
	// (console/quorum.go says why it would be refused otherwise).
	cfg, base, env := httpModeConfigOnRedis(t, fake, "  self_approval: true\nconsole:\n  enabled: true\n  listen: 127.0.0.1:0\n")

	serve := startConsoleServe(ctx, t, env, cfg)
	waitHTTP(ctx, t, base+"/healthz")

	asked := startBot(ctx, t, env, "ask", "-config", cfg, "--", "make", "deploy")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")

	client, page := signIn(t, serve.link)
	id := buttonValue(m.Blocks, slackui.ActionApprove)
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if !strings.Contains(page, `id="ask-`+id+`"`) || csrf == nil {
		t.Fatalf("the console does not list the Ask %s:\n%s", id, page)
	}
	consoleBase := serve.base
	resp := postForm(ctx, t, client, consoleBase+"/asks/"+id, consoleBase, url.Values{"action": {"approve"}, "csrf": {csrf[1]}})
	if body := readBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("approve in the console: %d\n%s", resp.StatusCode, body)
	}

	r := waitResult(t, asked)
	if r.code != 0 || !strings.Contains(r.stdout, "approved by console:tester") {
		t.Fatalf("bot ask: exit %d stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := fake.WaitForCall(ctx, "chat.update", func(c fakeslack.Call) bool {
		return c.TS == m.TS && strings.Contains(c.Text, "console:tester")
	}); err != nil {
		t.Errorf("the Slack message was not updated with the console's decision: %v", err)
	}
	serve.Stop()
}

// The first hour: `bot serve` with nothing configured, and in a second
// terminal `bot ask -- rm -rf build` with no config reaches it through the
// local Ask API; approved in the console, bot ask exits 0. A `bot ask`
// with no local serve says what to do and exits 2.
func TestAskWithoutConfigReachesTheLocalServe(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	cfgPath, env := localConsole(t, localConsoleYAML, "dev")

	if r := waitResult(t, startBot(ctx, t, env, "ask", "--", "true")); r.code != exitUsage || !strings.Contains(r.stdout, "start `bot serve`") {
		t.Fatalf("no serve: exit %d stdout %q", r.code, r.stdout)
	}

	serve := startConsoleServe(ctx, t, env, cfgPath)
	defer serve.Stop()
	base := serve.base
	browser, _ := signIn(t, serve.link)

	asked := startBot(ctx, t, env, "ask", "-reason", "clean before the release", "--", "rm", "-rf", "build")
	decideInConsole(ctx, t, browser, base, serve.stderr, "approve", "", "rm -rf build", "clean before the release")
	r := waitResult(t, asked)
	if r.code != exitOK || !strings.Contains(r.stdout, "approved by console:carol") || !strings.Contains(r.stderr, "waiting for a decision in the console at "+base+" until ") {
		t.Fatalf("bot ask: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// waitConsoleAsk waits until the console page at base lists a pending Ask
// and shows every one of texts, and returns the first Ask listed and the
// page's CSRF token: the callers have one Ask pending at a time.
func waitConsoleAsk(ctx context.Context, t *testing.T, browser *http.Client, base string, serveErr *syncBuffer, texts ...string) (id, csrf string) {
	t.Helper()
	askRe := regexp.MustCompile(`action="/asks/([a-z2-7]{26})"`)
	csrfRe := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	for {
		resp, err := browser.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		page := readBody(t, resp)
		all := true
		for _, x := range texts {
			all = all && strings.Contains(page, x)
		}
		if m := askRe.FindStringSubmatch(page); m != nil && all {
			return m[1], csrfRe.FindStringSubmatch(page)[1]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Ask never showed in the console:\n%s\nserve stderr:\n%s", page, serveErr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// decideInConsole waits until the signed-in console at base lists a pending
// Ask and shows every one of shows (waitConsoleAsk), then decides the first
// Ask listed with action (approve, approve_session, deny) and, unless
// empty, reason.
func decideInConsole(ctx context.Context, t *testing.T, browser *http.Client, base string, serveErr *syncBuffer, action, reason string, shows ...string) {
	t.Helper()
	id, csrf := waitConsoleAsk(ctx, t, browser, base, serveErr, shows...)
	form := url.Values{"csrf": {csrf}, "action": {action}}
	if reason != "" {
		form.Set("reason", reason)
	}
	readBody(t, postForm(ctx, t, browser, base+"/asks/"+id, base, form))
}

// postForm posts a console form as a browser on origin would.
func postForm(ctx context.Context, t *testing.T, client *http.Client, target, origin string, form url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// The first hour for agents, with no Slack: `bot hook claude` with no -url
// finds the serve on this machine and is judged as the gateway judges
// agents' tools (a read inside the project runs at once, where bot ask
// would have waited for a human); -print-settings prints the block to paste;
// the local tokens survive a restart of serve.
func TestFirstHourLocalHook(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	cfgPath, env := localConsole(t, localConsoleYAML, "carol")
	endpoint := env["ASKOPS_LOCAL_ENDPOINT"]
	readEndpoint := func() hook.LocalEndpoint {
		t.Helper()
		var ep hook.LocalEndpoint
		if b, err := os.ReadFile(endpoint); err != nil || json.Unmarshal(b, &ep) != nil {
			t.Fatalf("endpoint file: %v", err)
		}
		return ep
	}
	hook := func(stdin string, args ...string) (int, string, string) {
		var out, errOut syncBuffer
		code := run(ctx, append([]string{"hook", "claude"}, args...), envOf(env), strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	serve := startConsoleServe(ctx, t, env, cfgPath)
	first := readEndpoint()
	if first.AgentToken == "" || first.AgentToken == first.Token {
		t.Fatalf("endpoint file %+v: want a token for agents apart from bot ask's", first)
	}

	code, out, errOut := hook("", "-print-settings")
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command, OnFailure string
				Timeout                  int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &settings) != nil || len(settings.Hooks["PreToolUse"]) != 1 {
		t.Fatalf("-print-settings: exit %d\n%s\n%s", code, out, errOut)
	}
	h := settings.Hooks["PreToolUse"][0].Hooks[0]
	if !strings.HasSuffix(h.Command, " hook claude") || h.OnFailure != "block" || h.Timeout != 660 {
		t.Errorf("printed hook %+v: want this binary's `hook claude`, onFailure block, timeout approvals.timeout (10m) + 60 s", h)
	}

	project := t.TempDir()
	event := `{"session_id":"cc-1","cwd":"` + project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + filepath.Join(project, "go.mod") + `"},"tool_use_id":"t1"}`
	code, out, errOut = hook(event)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("a read inside the project through the local serve: exit %d\n%s\n%s", code, out, errOut)
	}

	serve.Stop()
	if code, out, _ := hook(event); code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "start `bot serve`") {
		t.Errorf("no serve running: exit %d %s; want a deny that says to start one", code, out)
	}
	serve = startConsoleServe(ctx, t, env, cfgPath)
	defer serve.Stop()
	if again := readEndpoint(); again.Token != first.Token || again.AgentToken != first.AgentToken {
		t.Errorf("the tokens changed across a restart: %+v then %+v", first, again)
	}
}

// -print-settings for a remote serve (-url) cannot know its
// approvals.timeout: the printed line carries -timeout, so the hook's own
// bound stays below the agent's timeout it prints.
func TestPrintSettingsForARemoteServeBoundsTheAsk(t *testing.T) {
	var out, errOut syncBuffer
	code := run(t.Context(), []string{"hook", "codex", "-url", "http://askops.example:8080", "-print-settings"}, envOf(map[string]string{}), strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string
				Timeout int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(out.String()), &settings); err != nil || len(settings.Hooks["PermissionRequest"]) != 1 {
		t.Fatalf("printed %s (%v)", out.String(), err)
	}
	h := settings.Hooks["PermissionRequest"][0].Hooks[0]
	if !strings.Contains(h.Command, " -timeout 10m0s") || h.Timeout != 660 {
		t.Errorf("printed hook %+v: want -timeout 10m0s on the line and timeout 660", h)
	}
}

// Two local serves on two ports: stopping either, in either order, leaves
// the other reachable by `bot ask` with no config (its Ask expires there,
// exit 1, rather than "no local askops is running", exit 2), and stopping
// the last leaves none.
func TestTwoLocalServes(t *testing.T) {
	ctx := timeoutCtx(t, 90*time.Second)
	cfgPath, env := localConsole(t, localConsoleYAML, "dev")
	asks := func(wantServe string) {
		t.Helper()
		r := waitResult(t, startBot(ctx, t, env, "ask", "-timeout", "1s", "--", "make", "deploy"))
		if wantServe == "" {
			if r.code != exitUsage || !strings.Contains(r.stdout, "start `bot serve`") {
				t.Errorf("no serve left: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			return
		}
		if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") || !strings.Contains(r.stderr, "in the console at "+wantServe) {
			t.Errorf("want the serve at %s: exit %d stdout %q stderr %q", wantServe, r.code, r.stdout, r.stderr)
		}
	}
	for _, stopSecondFirst := range []bool{true, false} {
		first := startConsoleServe(ctx, t, env, cfgPath)
		second := startConsoleServe(ctx, t, env, cfgPath)
		asks(second.base)
		if stopSecondFirst {
			second.Stop()
			asks(first.base)
			first.Stop()
		} else {
			first.Stop()
			asks(second.base)
			second.Stop()
		}
		asks("")
	}
}
