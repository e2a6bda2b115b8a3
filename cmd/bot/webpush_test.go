package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakepush"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/webpush"
)

// console.web_push on a serve with Redis: the serve makes a VAPID key on
// its first start and keeps it in Redis, so the next start (or another
// replica) serves the same key, and a device's subscription, posted by the
// signed-in person, outlives the serve. check-config refuses a contact
// that is neither mailto: nor https:.
func TestWebPushKeyKeptInRedis(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	rds := redistest.Start(t)
	cfgPath, env := localConsole(t, "console:\n  listen: 127.0.0.1:0\n  web_push: true\n  vapid_subject: ops@example.com\n", "dev")
	env["REDIS_URL"] = rds.URL()
	if r := waitResult(t, startBot(ctx, t, env, "check-config", "-config", cfgPath)); r.code == exitOK || !strings.Contains(r.stdout+r.stderr, "console.vapid_subject") {
		t.Fatalf("check-config with a bare address as the contact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writeFile(t, cfgPath, localConsoleYAML+"  web_push: true\n  vapid_subject: mailto:ops@example.com\n")

	svc := fakepush.New(t, nil)
	var sub webpush.Subscription
	serveKey := func(subscribe bool) string {
		t.Helper()
		serve := startConsoleServe(ctx, t, env, cfgPath)
		base := serve.base
		browser, page := signIn(t, serve.link)
		get := func(target string) *http.Response {
			t.Helper()
			resp, err := browser.Get(target)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		resp := get(base + "/push/key")
		var k struct {
			PublicKey string `json:"public_key"`
		}
		if err := json.Unmarshal([]byte(readBody(t, resp)), &k); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /push/key: %d %v\n%s", resp.StatusCode, err, serve.stderr.String())
		}
		if subscribe {
			sub = svc.Subscribe(t, k.PublicKey)
			sub.Endpoint = "https://push.example/carols-phone" // a public push service's: never reached here
			csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)[1]
			r := postForm(ctx, t, browser, base+"/push/subscribe", base, url.Values{"csrf": {csrf},
				"endpoint": {sub.Endpoint}, "p256dh": {sub.Keys.P256dh}, "auth": {sub.Keys.Auth}})
			if body := readBody(t, r); r.StatusCode != http.StatusNoContent {
				t.Fatalf("POST /push/subscribe: %d %s", r.StatusCode, body)
			}
		}
		serve.Stop()
		return k.PublicKey
	}
	first := serveKey(true)
	if again := serveKey(false); again != first || len(first) != 87 {
		t.Errorf("the VAPID key after a restart is %q, want the first one %q", again, first)
	}
	rdb, err := redisconn.Open(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	kept, err := webpush.NewRedisStore(rdb, rediskey.Default(), nil).List(ctx, "console:carol")
	if err != nil || len(kept) != 1 || kept[0] != sub {
		t.Errorf("carol's subscriptions in Redis: %v %v, want %v", kept, err, sub)
	}
}
