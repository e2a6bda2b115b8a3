package main

import (
	"strings"
	"testing"

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
