package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
)

// A Redis whose maxmemory-policy may evict askops keys is refused by
// check-config and by serve at start, naming the setting and the fix; a
// Redis that persists nothing is a warning only.
func TestRedisEvictionPolicyRefused(t *testing.T) {
	rds := redistest.Start(t) // persists nothing (save "", appendonly no)
	admin := redis.NewClient(&redis.Options{Addr: rds.Addr()})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.ConfigSet(t.Context(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	slackSrv := slackStub(t, "xoxb-good")
	model := fakeopenai.Start(t)
	env := map[string]string{"SLACK_BOT_TOKEN": "xoxb-good", "REDIS_URL": rds.URL(), "OPENAI_BASE_URL": model.BaseURL()}
	file := writeConfig(t, strings.Replace(validYAML, "  approval_channel:", "  api_url: "+slackSrv.URL+"/api\n  approval_channel:", 1))

	code, stdout, _ := runBot(t.Context(), t, env, "check-config", "-config", file)
	if code != exitFailed || !containsLine(stdout, "FAIL redis.url: redis://"+rds.Addr()+"/0: maxmemory-policy is allkeys-lru") ||
		!strings.Contains(stdout, "set maxmemory-policy noeviction") {
		t.Errorf("check-config with allkeys-lru: exit %d\n%s", code, stdout)
	}

	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, _, senv := httpModeConfig(t, fake, "")
	senv["REDIS_URL"] = rds.URL()
	senv["OPENAI_BASE_URL"] = model.BaseURL()
	code, _, stderr := runBot(t.Context(), t, senv, "serve", "-config", cfg)
	if code != exitFailed || !strings.Contains(stderr, "maxmemory-policy is allkeys-lru") || !strings.Contains(stderr, "maxmemory-policy noeviction") {
		t.Errorf("serve with allkeys-lru: exit %d\n%s", code, stderr)
	}

	if err := admin.ConfigSet(t.Context(), "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runBot(t.Context(), t, env, "check-config", "-config", file)
	if code != exitOK || !containsLine(stdout, "WARN redis.url: the server persists nothing") ||
		!strings.Contains(stdout, "maxmemory-policy noeviction") {
		t.Errorf("check-config with noeviction and no persistence: exit %d, want 0 with a warning\n%s", code, stdout)
	}
}

// Every serve checks the Redis it runs on: the console-only serve refuses
// an evicting policy at start as the Slack one does, and on both a policy
// changed at run time, or persistence turned off, turns /readyz red until
// it is undone.
func TestServeRechecksRedisSettings(t *testing.T) {
	rds := redistest.Start(t)
	admin := redis.NewClient(&redis.Options{Addr: rds.Addr()})
	t.Cleanup(func() { _ = admin.Close() })
	set := func(kv ...string) {
		t.Helper()
		for i := 0; i < len(kv); i += 2 {
			if err := admin.ConfigSet(t.Context(), kv[i], kv[i+1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	localConfig := writeConfig(t, localConsoleYAML)
	consoleEnv := map[string]string{"REDIS_URL": rds.URL(), "ASKOPS_LOCAL_ENDPOINT": filepath.Join(t.TempDir(), "local.json")}

	set("maxmemory-policy", "allkeys-lru")
	refusedCtx, cancelRefused := context.WithTimeout(t.Context(), 20*time.Second) // a serve that starts ends here
	code, _, stderr := runBot(refusedCtx, t, consoleEnv, "serve", "-config", localConfig)
	cancelRefused()
	if code != exitFailed || !strings.Contains(stderr, "maxmemory-policy is allkeys-lru") {
		t.Errorf("console-only serve with allkeys-lru: exit %d, want refused\n%s", code, stderr)
	}
	set("maxmemory-policy", "noeviction", "appendonly", "yes")

	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t)
	cfg, slackBase, slackEnv := httpModeConfig(t, fake, "")
	slackEnv["REDIS_URL"] = rds.URL()
	slackEnv["OPENAI_BASE_URL"] = model.BaseURL()

	for _, serve := range []struct {
		name  string
		start func(ctx context.Context) (base string)
	}{
		{"slack", func(ctx context.Context) string {
			startBot(ctx, t, slackEnv, "serve", "-config", cfg)
			waitHTTP(ctx, t, slackBase+"/healthz")
			return slackBase
		}},
		{"console-only", func(ctx context.Context) string {
			return startConsoleServe(ctx, t, consoleEnv, localConfig).base
		}},
	} {
		t.Run(serve.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			base := serve.start(ctx)
			for _, step := range []struct {
				set      []string
				wantCode int
				want     string
			}{
				{nil, 200, "ok"},
				{[]string{"maxmemory-policy", "allkeys-lru"}, 503, "maxmemory-policy is allkeys-lru"},
				{[]string{"maxmemory-policy", "noeviction"}, 200, "ok"},
				{[]string{"appendonly", "no"}, 503, "persists nothing now"},
				{[]string{"appendonly", "yes"}, 200, "ok"},
			} {
				set(step.set...)
				if code, body := get(t, base+"/readyz"); code != step.wantCode || !strings.Contains(body, step.want) {
					t.Errorf("after CONFIG SET %v: /readyz %d %q, want %d with %q", step.set, code, body, step.wantCode, step.want)
				}
			}
			cancel()
		})
	}
}
