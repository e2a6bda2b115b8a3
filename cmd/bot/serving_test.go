package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// serving is one `bot serve` a test runs in the background, under a
// context of its own so that the test can stop it as SIGTERM would while
// the rest of the test goes on.
type serving struct {
	t      *testing.T
	cancel context.CancelFunc
	wait   func() botResult
	// base is where the serve answers: http.listen for a Slack serve,
	// the console (scheme://host of link) for a console serve.
	base string
	// link is the console's one-time sign-in link (startConsoleServe).
	link string
	// stderr is what the serve has logged so far (startConsoleServe).
	stderr *syncBuffer
}

// timeoutCtx is t.Context() cut off after d, the most a test waits on the
// bots and servers it starts; the timer is released when the test ends.
func timeoutCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// runServe starts `bot serve -config cfg` with env and returns at once,
// without waiting for it to be ready (a socket-mode serve has no port to
// poll; an https one needs its own client): the caller waits as fits.
func runServe(ctx context.Context, t *testing.T, env map[string]string, cfg string) *serving {
	t.Helper()
	serveCtx, cancel := context.WithCancel(ctx)
	done := startBot(serveCtx, t, env, "serve", "-config", cfg)
	return &serving{t: t, cancel: cancel, wait: func() botResult { return waitResult(t, done) }}
}

// startServe is runServe, then waits until the serve answers 200 on
// base/healthz, where a Slack serve's http.listen is (httpModeConfig's
// base).
func startServe(ctx context.Context, t *testing.T, env map[string]string, cfg, base string) *serving {
	t.Helper()
	s := runServe(ctx, t, env, cfg)
	s.base = base
	waitHTTP(ctx, t, base+"/healthz")
	return s
}

// startConsoleServe starts a serve with the console (a config with a
// console section) and waits for the sign-in link it prints; the serving
// knows the link, the console's base URL and the serve's log so far.
func startConsoleServe(ctx context.Context, t *testing.T, env map[string]string, cfg string) *serving {
	t.Helper()
	serveCtx, cancel := context.WithCancel(ctx)
	link, done, stdout, stderr := startServeWithLink(serveCtx, t, env, "serve", "-config", cfg)
	u, err := url.Parse(link)
	if err != nil {
		cancel()
		t.Fatalf("sign-in link %q: %v", link, err)
	}
	return &serving{
		t: t, cancel: cancel, link: link, base: u.Scheme + "://" + u.Host, stderr: stderr,
		wait: func() botResult {
			select {
			case code := <-done:
				return botResult{code, stdout.String(), stderr.String()}
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not exit within 30s")
				return botResult{}
			}
		},
	}
}

// Stop stops the serve as SIGTERM does (cancels its context), waits for it
// to exit and fails the test unless it exited 0; the result carries the
// serve's output for the checks a test makes on it.
func (s *serving) Stop() botResult {
	s.t.Helper()
	s.cancel()
	r := s.wait()
	if r.code != exitOK {
		s.t.Fatalf("serve exited %d\nstderr:\n%s", r.code, r.stderr)
	}
	return r
}

// localConsoleYAML is the config of a console-only serve on this machine
// (no Slack, no model), the console's user carol.
const localConsoleYAML = "console:\n  listen: 127.0.0.1:0\n  user: carol\n"

// writeFile writes body to path, 0600 as a config that may hold secrets
// is, and returns path.
func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// localEnv is the environment of a serve on this machine and of its local
// clients (bot ask, bot hook, bot run with no Slack): they find each other
// through the endpoint file ASKOPS_LOCAL_ENDPOINT, run/local.json in dir.
// USER is user.
func localEnv(dir, user string) map[string]string {
	return map[string]string{"ASKOPS_LOCAL_ENDPOINT": filepath.Join(dir, "run", "local.json"), "USER": user}
}

// localConsole writes cfg as askops.yaml in a fresh directory and returns
// its path and the localEnv of that directory, for a console serve on this
// machine and the clients that reach it.
func localConsole(t *testing.T, cfg, user string) (cfgPath string, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	return writeFile(t, filepath.Join(dir, "askops.yaml"), cfg), localEnv(dir, user)
}

// signIn opens the console's one-time sign-in link in a new browser (a
// client with a cookie jar of its own) and returns the browser, signed in,
// and the page the link led to; the test fails unless it answered 200.
func signIn(t *testing.T, link string) (browser *http.Client, page string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser = &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.Get(link)
	if err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	page = readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d, page:\n%s", resp.StatusCode, page)
	}
	return browser, page
}

// Halt stops the serve and returns its result whatever its exit code: for
// the message of a test that fails while the serve still runs.
func (s *serving) Halt() botResult {
	s.t.Helper()
	s.cancel()
	return s.wait()
}
