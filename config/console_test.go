package config

import (
	"strings"
	"testing"
)

// TestConsoleConfig: without a slack section serve needs neither Slack,
// approvers nor the model; ask still needs Slack; the console's keys are
// checked where it runs.
func TestConsoleConfig(t *testing.T) {
	env := func(string) string { return "" }
	if _, ps := Check([]byte("console:\n  user: carol\n"), env, Serve); len(ps) != 0 {
		t.Errorf("serve without slack: %v, want no problems", ps)
	}
	if _, ps := Check([]byte(""), env, Serve); len(ps) != 0 {
		t.Errorf("serve with an empty config: %v, want no problems", ps)
	}
	if _, ps := Check([]byte("console:\n  user: carol\n"), env, Ask); !strings.Contains(ps.Error(), "slack.bot_token") {
		t.Errorf("ask without slack: %v, want slack.bot_token required", ps)
	}
	// run without slack asks the local serve: it needs the model, not
	// Slack, an approval channel or approvers.
	if _, ps := Check([]byte("openai:\n  base_url: http://127.0.0.1:1/v1\n  model: m\n"), env, Run); len(ps) != 0 {
		t.Errorf("run without slack: %v, want no problems", ps)
	}
	if _, ps := Check([]byte("console:\n  user: carol\n"), env, Run); !strings.Contains(ps.Error(), "openai.model") || strings.Contains(ps.Error(), "slack") {
		t.Errorf("run without slack or a model: %v, want openai.model required and nothing of Slack", ps)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"console:\n  listen: nope\n", "console.listen: want host:port"},
		{"console:\n  user: \"a b\"\n", "console.user:"},
		{"slack:\n  bot_token: x\n  app_token: y\n  approval_channel: C1\nopenai:\n  model: m\n  api_key: k\napprovals:\n  anyone_in_channel: true\nconsole:\n  enabled: true\n  listen: 127.0.0.1:8080\n",
			"console.listen: port 8080 is http.listen's too"},
	} {
		_, ps := Check([]byte(tc.yaml), env, Serve)
		if !strings.Contains(ps.Error(), tc.want) {
			t.Errorf("%q: problems %v, want %q", tc.yaml, ps, tc.want)
		}
	}
}

// The web push keys: a contact that is mailto: or https:, a VAPID key
// that parses (never printed), none of them without web_push, and web
// push only where the console runs.
func TestWebPushConfig(t *testing.T) {
	const key = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw" // RFC 8291's example sender key
	env := func(string) string { return "" }
	good := "console:\n  web_push: true\n  vapid_subject: mailto:ops@example.com\n  vapid_private_key: " + key + "\n"
	c, ps := Check([]byte(good), env, CheckConfig)
	if len(ps) != 0 {
		t.Fatalf("%q: %v", good, ps)
	}
	if k, err := c.Console.VAPIDKey(); err != nil || k == nil {
		t.Errorf("the key did not parse: %v", err)
	}
	fromEnv, _ := Check([]byte("console:\n  web_push: true\n"), func(v string) string {
		if v == "ASKOPS_VAPID_PRIVATE_KEY" {
			return key
		}
		return ""
	}, Serve)
	if k, err := fromEnv.Console.VAPIDKey(); err != nil || k == nil || fromEnv.Console.Subject() != DefaultVAPIDSubject {
		t.Errorf("ASKOPS_VAPID_PRIVATE_KEY: %v %v, subject %q", k, err, fromEnv.Console.Subject())
	}
	for _, tc := range []struct{ yaml, want string }{
		{"console:\n  web_push: true\n  vapid_subject: ops@example.com\n", "console.vapid_subject: want a mailto: or https: contact"},
		{"console:\n  web_push: true\n  vapid_subject: mailto:ops\n", "console.vapid_subject: want mailto:someone@example.com"},
		{"console:\n  web_push: true\n  vapid_subject: https://\n", "console.vapid_subject: want an https URL with a host"},
		{"console:\n  web_push: true\n  vapid_private_key: s3cret-not-a-key\n", "console.vapid_private_key:"},
		{"console:\n  vapid_subject: mailto:ops@example.com\n", "console.web_push: vapid_subject"},
		{"slack:\n  bot_token: x\n  app_token: y\n  approval_channel: C1\napprovals:\n  anyone_in_channel: true\nconsole:\n  web_push: true\n", "console.web_push: the console sends the pushes"},
	} {
		_, ps := Check([]byte(tc.yaml), env, CheckConfig)
		if !strings.Contains(ps.Error(), tc.want) {
			t.Errorf("%q: problems %v, want %q", tc.yaml, ps, tc.want)
		}
		if strings.Contains(ps.Error(), "s3cret") {
			t.Errorf("a problem prints the key: %v", ps)
		}
	}
}
