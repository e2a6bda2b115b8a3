package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeslack"
)

// A serve whose bot token Slack refuses says so at start, at ERROR and
// naming the key, and keeps serving: the console beside Slack decides
// Asks, and /readyz names slack as the part that is down.
func TestServeWithABadSlackToken(t *testing.T) {
	for _, mode := range []string{"http", "socket"} {
		t.Run(mode, func(t *testing.T) {
			ctx := timeoutCtx(t, 60*time.Second)
			fake := fakeslack.New(t, fakeslack.Options{})
			consoleAddr := closedPort(t)
			cfg, base, env := fakeSlackConfig(t, fake, mode, "console:\n  enabled: true\n  listen: \""+consoleAddr+"\"\n")
			env["SLACK_BOT_TOKEN"] = "xoxb-revoked-or-mistyped"

			serve := runServe(ctx, t, env, cfg)
			if !answers(ctx, base+"/healthz") || !answers(ctx, "http://"+consoleAddr+"/") {
				r := serve.Halt()
				t.Fatalf("serve does not answer on http.listen and console.listen (exit %d)\n%s\n%s", r.code, r.stdout, r.stderr)
			}

			code, body := get(t, base+"/readyz")
			if code != 503 || !strings.Contains(body, "slack: ") || !strings.Contains(body, "invalid_auth") {
				t.Errorf("/readyz answered %d:\n%s\nwant 503 naming slack and invalid_auth", code, body)
			}
			r := serve.Stop()
			var errLine string
			for line := range strings.Lines(r.stderr) {
				if strings.Contains(line, "level=ERROR") && strings.Contains(line, "slack.bot_token") {
					errLine = line
				}
			}
			t.Log(errLine)
			if errLine == "" || !strings.Contains(errLine, "invalid_auth") {
				t.Errorf("no ERROR line naming slack.bot_token and invalid_auth:\n%s", r.stderr)
			}
			if !strings.Contains(r.stdout, "askops console: sign in at") {
				t.Errorf("the console beside a broken Slack printed no sign-in link:\n%s", r.stdout)
			}
		})
	}
}

// answers waits for url to answer (any status) until ctx ends.
func answers(ctx context.Context, url string) bool {
	for {
		if _, err := httpGet(url); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A serve whose Redis does not answer stops at start with an ERROR naming
// redis.url: with or without Slack, no Ask can be kept without its store.
func TestServeWithRedisDown(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	slackCfg, _, slackEnv := fakeSlackConfig(t, fake, "http", "")
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"console only": {[]string{"serve"}, map[string]string{"HOME": t.TempDir(), "USER": "tester"}},
		"slack":        {[]string{"serve", "-config", slackCfg}, slackEnv},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"REDIS_URL": "redis://" + closedPort(t) + "/0"}
			for k, v := range c.env {
				env[k] = v
			}
			code, _, stderr := runBot(ctx, t, env, c.args...)
			if code != exitFailed {
				t.Errorf("serve exited %d, want %d", code, exitFailed)
			}
			if !strings.Contains(stderr, "level=ERROR") || !strings.Contains(stderr, "redis.url") || !strings.Contains(stderr, "connection refused") {
				t.Errorf("no ERROR naming redis.url and why:\n%s", stderr)
			}
		})
	}
}
