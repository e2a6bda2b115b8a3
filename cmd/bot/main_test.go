package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/redistest"
)

// runBot runs the whole program as a test would from a shell.
func runBot(ctx context.Context, t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
	code = run(ctx, args, envOf(env), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// syncBuffer is an output stream several goroutines write, as os.Stderr is
// for the real program (the logger and bot ask's progress lines share it).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunCommandLine(t *testing.T) {
	cfg := writeConfig(t, strings.Replace(validYAML, "mode: socket", "mode: sockett", 1))
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"version"}, 0, "askops dev", ""},
		{"version flag", []string{"--version"}, 0, "askops dev", ""},
		{"help", []string{"help"}, 0, "usage:", ""},
		{"no command", nil, 2, "", "usage:"},
		{"unknown command", []string{"deploy"}, 2, "", `unknown command "deploy"`},
		{"unknown flag", []string{"check-config", "-frobnicate"}, 2, "", "flag provided but not defined: -frobnicate"},
		{"flag without value", []string{"check-config", "-config"}, 2, "", "flag needs an argument"},
		{"subcommand help", []string{"check-config", "-h"}, 0, "", "usage: bot check-config"},
		{"missing config flag", []string{"check-config"}, 2, "", "config: -config: required"},
		{"missing config file", []string{"check-config", "-config", "/nonexistent/askops.yaml"}, 2, "", "no such file"},
		{"bad config, one dash", []string{"check-config", "-config", cfg}, 2, "", `config: slack.mode: unknown mode "sockett"`},
		{"bad config, two dashes", []string{"check-config", "--config", cfg}, 2, "", `config: slack.mode: unknown mode "sockett"`},
		{"bad config, flag=value", []string{"check-config", "--config=" + cfg}, 2, "", `config: slack.mode: unknown mode "sockett"`},
		{"stray argument", []string{"check-config", "-config", cfg, "extra"}, 2, "", `bot check-config: unexpected argument "extra"`},
		{"serve: stray argument", []string{"serve", "-config", cfg, "extra"}, 2, "", `bot serve: unexpected argument "extra"`},
		{"serve: help", []string{"serve", "-h"}, 0, "", "usage: bot serve [-config FILE] [-rotate-local-token]"},
		{"serve: bad config", []string{"serve", "-config", cfg}, 2, "", `config: slack.mode: unknown mode "sockett"`},
		{"ask: negative timeout", []string{"ask", "-timeout", "-1s", "--", "true"}, 2, "", "bot ask: -timeout must be > 0 (or 0 for approvals.timeout), got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBot(t.Context(), t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, tt.wantStdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
		})
	}
}

// stubAt is a test server that answers h at path, 404 anywhere else, and
// closes when the test ends: the fake of one remote endpoint.
func stubAt(t *testing.T, path string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// slackStub answers auth.test like Slack: ok for the good token, invalid_auth
// otherwise.
func slackStub(t *testing.T, goodToken string) *httptest.Server {
	t.Helper()
	return stubAt(t, "/api/auth.test", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		tok := r.PostForm.Get("token")
		if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			tok = strings.TrimPrefix(h, "Bearer ")
		}
		w.Header().Set("Content-Type", "application/json")
		if tok != goodToken {
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "team_id": "T0TEST", "user": "askops", "user_id": "U0BOT"})
	})
}

// modelStub is an OpenAI-compatible /models that wants a key.
func modelStub(t *testing.T, key string) *httptest.Server {
	t.Helper()
	return stubAt(t, "/models", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"fake-model"}]}`))
	})
}

// closedPort returns a loopback address where nothing listens now, for a
// serve the test starts there (or for a refused connection). The port is
// below the kernel's ephemeral range (ip_local_port_range), which every
// listen on port 0 and every outgoing connection draws from: a parallel
// test process cannot take it between this probe and the serve's listen,
// as it could a probed ephemeral port. This package never hands out one
// port twice.
func closedPort(t *testing.T) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	low := ephemeralLow()
	for range 1000 {
		p := low - 1 - rand.IntN(min(low-1024, 12000))
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // in use
		}
		l.Close()
		portsGiven[p] = true
		return l.Addr().String()
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 2048 {
		return 32768
	}
	return n
}

func TestCheckConfigReachability(t *testing.T) {
	rds := redistest.Start(t)
	slackSrv := slackStub(t, "xoxb-good")
	model := fakeopenai.Start(t)
	keyedModel := modelStub(t, "sk-good")

	base := func(mod func(map[string]string)) map[string]string {
		env := map[string]string{
			"SLACK_BOT_TOKEN": "xoxb-good",
			"REDIS_URL":       rds.URL(),
			"OPENAI_BASE_URL": model.BaseURL(),
		}
		if mod != nil {
			mod(env)
		}
		return env
	}
	file := writeConfig(t, strings.Replace(validYAML, "  approval_channel:", "  api_url: "+slackSrv.URL+"/api\n  approval_channel:", 1))

	noModel := writeConfig(t, strings.Replace(strings.Replace(validYAML, "openai:\n  base_url: http://127.0.0.1:1/v1\n  model: fake-model\n", "", 1), "  approval_channel:", "  api_url: "+slackSrv.URL+"/api\n  approval_channel:", 1))

	otherModel := writeConfig(t, strings.Replace(strings.Replace(validYAML, "model: fake-model", "model: other-model", 1), "  approval_channel:", "  api_url: "+slackSrv.URL+"/api\n  approval_channel:", 1))

	tests := []struct {
		name     string
		file     string
		env      map[string]string
		wantCode int
		want     []string
		notWant  []string
	}{
		{name: "all reachable", env: base(nil), wantCode: 0,
			want: []string{"ok config", "ok redis redis://" + rds.Addr(), "ok slack auth.test team=T0TEST", "ok model GET " + model.BaseURL() + "/models: fake-model offered"}},
		{name: "no redis means the memory store", env: base(func(e map[string]string) { delete(e, "REDIS_URL") }), wantCode: 0,
			want: []string{"ok redis not configured: in-memory store"}},
		{name: "bad slack token", env: base(func(e map[string]string) { e["SLACK_BOT_TOKEN"] = "xoxb-revoked-secret" }), wantCode: 1,
			want: []string{"FAIL slack.bot_token: auth.test: invalid_auth", "ok redis", "ok model"}, notWant: []string{"xoxb-revoked-secret"}},
		{name: "redis down", env: base(func(e map[string]string) { e["REDIS_URL"] = "redis://:topsecret@" + closedPort(t) + "/0" }), wantCode: 1,
			want: []string{"FAIL redis.url: PING redis://127.0.0.1:"}, notWant: []string{"topsecret"}},
		{name: "model key refused", env: base(func(e map[string]string) {
			e["OPENAI_BASE_URL"] = keyedModel.URL
			e["OPENAI_API_KEY"] = "sk-wrong-secret"
		}), wantCode: 1,
			want: []string{"FAIL openai.api_key: GET " + keyedModel.URL + "/models: 401 Unauthorized"}, notWant: []string{"sk-wrong-secret"}},
		{name: "model key accepted", env: base(func(e map[string]string) {
			e["OPENAI_BASE_URL"] = keyedModel.URL
			e["OPENAI_API_KEY"] = "sk-good"
		}), wantCode: 0, want: []string{"ok model"}},
		{name: "model not offered", env: base(func(e map[string]string) {
			e["OPENAI_BASE_URL"] = keyedModel.URL + "/nothing-here"
		}), wantCode: 1, want: []string{"FAIL openai.base_url: GET " + keyedModel.URL + "/nothing-here/models: 404 Not Found"}},
		{name: "no openai section: runs are off, as serve says", file: noModel, env: base(func(e map[string]string) { delete(e, "OPENAI_BASE_URL") }), wantCode: 0,
			want: []string{"ok model not configured: runs are off; no model is configured (openai.model)"}},
		{name: "model name not listed", file: otherModel, env: base(nil), wantCode: 1,
			want: []string{`FAIL openai.model: model "other-model" is not offered by ` + model.BaseURL()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := file
			if tt.file != "" {
				f = tt.file
			}
			code, stdout, stderr := runBot(t.Context(), t, tt.env, "check-config", "-config", f)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.want {
				if !containsLine(stdout, w) {
					t.Errorf("want a line starting %q in:\n%s", w, stdout)
				}
			}
			for _, nw := range tt.notWant {
				if strings.Contains(stdout+stderr, nw) {
					t.Errorf("output contains %q:\n%s%s", nw, stdout, stderr)
				}
			}
		})
	}
}

// validYAML is a complete, valid config (socket mode): config's own test
// fixture. Tests break one key at a time by appending or replacing lines.
var validYAML = func() string {
	b, err := os.ReadFile("../../config/testdata/valid.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func noEnv(string) string { return "" }

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeConfig writes body as askops.yaml in a fresh directory and returns
// its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	return writeFile(t, filepath.Join(t.TempDir(), "askops.yaml"), body)
}

func containsLine(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
