package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// validYAML is a complete, valid config (socket mode), testdata/valid.yaml
// (cmd/bot's tests read the same file). Tests break one key at a time by
// appending or replacing lines.
var validYAML = mustReadFile("testdata/valid.yaml")

func mustReadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func noEnv(string) string { return "" }

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := Parse([]byte(validYAML), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if ps := c.Validate(Serve); len(ps) > 0 {
		t.Fatalf("valid config has problems:\n%v", ps)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"slack.command", c.Slack.Command, "/askops"},
		{"approvals.timeout", c.Approvals.Timeout.D(), 10 * time.Minute},
		{"approvals.session_ttl", c.Approvals.SessionTTL.D(), 12 * time.Hour},
		{"agent.workspace", c.Agent.Workspace, "./workspace"},
		{"agent.max_iterations", c.Agent.MaxIterations, 30},
		{"policy.mode", c.Policy.Mode, "ask"},
		{"log.format", c.Log.Format, "text"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	empty, err := Parse(nil, noEnv)
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	if empty.Slack.Mode != "socket" || empty.HTTP.Listen != ":8080" {
		t.Errorf("empty file defaults: mode %q listen %q", empty.Slack.Mode, empty.HTTP.Listen)
	}
}

// TestConfigProblems breaks one thing at a time and checks that the problem
// is reported under the right key with a useful message — and that every
// problem of a file is reported, not only the first.
func TestConfigProblems(t *testing.T) {
	tests := []struct {
		name string
		yaml string // appended to (or replacing) validYAML
		cmd  Command
		env  map[string]string
		want []string // "key: substring of message"
	}{
		{name: "unknown top-level key", yaml: validYAML + "slackk: {}\n",
			want: []string{"slackk: unknown key"}},
		{name: "unknown nested key", yaml: strings.Replace(validYAML, "  mode: socket", "  mode: socket\n  bot_tokn: x", 1),
			want: []string{"slack.bot_tokn: unknown key"}},
		{name: "unknown key in a rule", yaml: validYAML + "policy:\n  rules:\n    - tool: bash\n      comand: ls\n      decision: allow\n",
			want: []string{"policy.rules[0].comand: unknown key"}},
		{name: "wrong type", yaml: validYAML + "agent:\n  max_iterations: many\n",
			want: []string{"agent.max_iterations: want a whole number, got a string (many)"}},
		{name: "wrong type in a flow mapping", yaml: validYAML + "  run_starters: {users: [], usergroups: 5}\n",
			want: []string{"approvals.run_starters.usergroups: want a list"}},
		{name: "bool expected", yaml: validYAML + "  anyone_in_channel: maybe\n",
			want: []string{"approvals.anyone_in_channel: want true or false"}},
		{name: "bad duration", yaml: validYAML + "  timeout: 10 minutes\n",
			want: []string{`approvals.timeout: bad duration "10 minutes"`}},
		{name: "several decode problems at once", yaml: validYAML + "  timeout: soon\n  session_ttl: later\nagent:\n  max_iterations: x\n  workspce: /w\n",
			want: []string{"approvals.timeout: bad duration", "approvals.session_ttl: bad duration", "agent.max_iterations: want a whole number", "agent.workspce: unknown key"}},
		{name: "zero timeout", yaml: validYAML + "  timeout: 0s\n",
			want: []string{"approvals.timeout: must be > 0"}},
		{name: "negative session ttl", yaml: validYAML + "  session_ttl: -1h\n",
			want: []string{"approvals.session_ttl: must be > 0"}},
		{name: "unknown slack mode", yaml: strings.Replace(validYAML, "mode: socket", "mode: webhook", 1),
			want: []string{`slack.mode: unknown mode "webhook" (want socket or http)`}},
		{name: "socket without app token", yaml: strings.Replace(validYAML, "  app_token: xapp-file-token-5678\n", "", 1),
			want: []string{"slack.app_token: required when slack.mode is socket (or set SLACK_APP_TOKEN)"}},
		{name: "http without signing secret", yaml: strings.Replace(validYAML, "mode: socket", "mode: http", 1),
			want: []string{"slack.signing_secret: required when slack.mode is http"}},
		{name: "no bot token", yaml: strings.Replace(validYAML, "  bot_token: xoxb-file-token-1234\n", "", 1),
			want: []string{"slack.bot_token: required (or set SLACK_BOT_TOKEN)"}},
		{name: "no approvers", yaml: strings.Replace(validYAML, "    users: [U0123ABCD]\n", "", 1),
			want: []string{"approvals.approvers: no approvers; set approvals.approvers.users/usergroups or approvals.anyone_in_channel: true"}},
		{name: "approver not an id", yaml: strings.Replace(validYAML, "[U0123ABCD]", "[U0123ABCD, \"@alice\"]", 1),
			want: []string{`approvals.approvers.users[1]: want a Slack user id`}},
		{name: "channel name instead of id", yaml: strings.Replace(validYAML, "approval_channel: C0123ABCD", `approval_channel: "#ops"`, 1),
			want: []string{`slack.approval_channel: want a channel id such as C0123ABCD, got "#ops"`}},
		{name: "bad policy mode", yaml: validYAML + "policy:\n  mode: yolo\n",
			want: []string{`policy.mode: unknown mode "yolo"`}},
		{name: "bad rule decision", yaml: validYAML + "policy:\n  rules:\n    - {tool: bash, command: ls, decision: allow}\n    - {tool: bash, command: git, decision: allow}\n    - {tool: bash, command: rm, decision: nope}\n",
			want: []string{`policy.rules[2].decision: unknown decision "nope"`}},
		{name: "every bad rule reported", yaml: validYAML + "policy:\n  rules:\n    - {tool: bash, command: ls, decision: maybe}\n    - {tool: bash, command: ls, decision: allow}\n    - {tool: '', command: ls, decision: deny}\n",
			want: []string{`policy.rules[0].decision: unknown decision "maybe"`, "policy.rules[2].tool:"}},
		{name: "rule without tool", yaml: validYAML + "policy:\n  rules:\n    - {command: ls, decision: allow}\n",
			want: []string{"policy.rules[0].tool: empty tool name"}},
		{name: "bad listen", yaml: strings.Replace(validYAML, `"127.0.0.1:0"`, "8080", 1),
			want: []string{`http.listen: want host:port`}},
		{name: "model required for serve", yaml: strings.Replace(validYAML, "  model: fake-model\n", "", 1), cmd: Serve,
			want: []string{"openai.model: required"}},
		{name: "no openai section: serve approves agents' calls with runs off", yaml: strings.Replace(validYAML, "openai:\n  base_url: http://127.0.0.1:1/v1\n  model: fake-model\n", "", 1), cmd: Serve},
		{name: "no openai section: check-config agrees with serve", yaml: strings.Replace(validYAML, "openai:\n  base_url: http://127.0.0.1:1/v1\n  model: fake-model\n", "", 1), cmd: CheckConfig},
		{name: "no openai section: bot run needs the model", yaml: strings.Replace(validYAML, "openai:\n  base_url: http://127.0.0.1:1/v1\n  model: fake-model\n", "", 1), cmd: Run,
			want: []string{"openai.model: required"}},
		{name: "an api key without a model is half a section, not runs off", yaml: strings.Replace(validYAML, "  model: fake-model\n", "  api_key: sk-x\n", 1), cmd: Serve,
			want: []string{"openai.model: required"}},
		{name: "openai key required for api.openai.com", yaml: strings.Replace(validYAML, "  base_url: http://127.0.0.1:1/v1\n", "", 1), cmd: Run,
			want: []string{"openai.api_key: required for https://api.openai.com/v1"}},
		{name: "approval channel required for ask", yaml: strings.Replace(validYAML, "  approval_channel: C0123ABCD\n", "", 1), cmd: Ask,
			want: []string{"slack.approval_channel: required"}},
		{name: "bad redis url", yaml: validYAML + "redis:\n  url: http://user:hunter2@host\n",
			want: []string{"redis.url: redis url"}},
		{name: "bad redis timeouts and replica acks", yaml: validYAML + "redis:\n  dial_timeout: -1s\n  pool_timeout: 2h\n  replica_acks: most\n",
			want: []string{"redis.dial_timeout: want a duration between 0", "redis.pool_timeout: want a duration between 0", `redis.replica_acks: want auto, none or a number of replicas (1-16), got "most"`}},
		{name: "bad log format", yaml: validYAML + "log:\n  format: xml\n  level: loud\n",
			want: []string{`log.format: unknown format "xml"`, `log.level: unknown level "loud"`}},
		{name: "bad slash command", yaml: strings.Replace(validYAML, "  approval_channel", "  command: askops\n  approval_channel", 1),
			want: []string{`slack.command: want a slash command`}},
		{name: "env supplies the missing app token", yaml: strings.Replace(validYAML, "  app_token: xapp-file-token-5678\n", "", 1),
			env: map[string]string{"SLACK_APP_TOKEN": "xapp-env"}, want: nil},
		{name: "decode and validation problems together", yaml: strings.Replace(validYAML, "mode: socket", "mode: sockett\n  bot_tokn: x", 1) + "  timeout: soon\n",
			want: []string{"slack.bot_tokn: unknown key", `approvals.timeout: bad duration "soon"`, `slack.mode: unknown mode "sockett"`}},
		{name: "syntax error", yaml: "slack:\n  mode: [socket\n",
			want: []string{"yaml: line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.cmd
			if cmd == "" {
				cmd = Serve
			}
			got := problemsOf(t, tt.yaml, envOf(tt.env), cmd)
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("want no problems, got:\n%s", got)
			}
			for _, w := range tt.want {
				if !containsLine(got, w) {
					t.Errorf("want a problem line starting %q, got:\n%s", w, got)
				}
			}
			for _, secret := range []string{"xoxb-file-token-1234", "xapp-file-token-5678", "hunter2"} {
				if strings.Contains(got, secret) {
					t.Errorf("problems reveal a secret %q:\n%s", secret, got)
				}
			}
		})
	}
}

func problemsOf(t *testing.T, y string, getenv func(string) string, cmd Command) string {
	t.Helper()
	_, ps := Check([]byte(y), getenv, cmd)
	return ps.Error()
}

func containsLine(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestEnvOverridesWinOverFile(t *testing.T) {
	env := map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-env",
		"SLACK_APP_TOKEN":      "xapp-env",
		"SLACK_SIGNING_SECRET": "sign-env",
		"REDIS_URL":            "redis://127.0.0.1:6390/2",
		"OPENAI_BASE_URL":      "http://env.example/v1",
		"OPENAI_API_KEY":       "sk-env",
	}
	c, err := Parse([]byte(validYAML), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"SLACK_BOT_TOKEN":      c.Slack.BotToken.Reveal(),
		"SLACK_APP_TOKEN":      c.Slack.AppToken.Reveal(),
		"SLACK_SIGNING_SECRET": c.Slack.SigningSecret.Reveal(),
		"REDIS_URL":            c.Redis.URL.Reveal(),
		"OPENAI_BASE_URL":      c.OpenAI.BaseURL,
		"OPENAI_API_KEY":       c.OpenAI.APIKey.Reveal(),
	}
	for k, want := range env {
		if got[k] != want {
			t.Errorf("%s: config has %q, want the environment's %q", k, got[k], want)
		}
	}
	// Unset (empty) variables leave the file's values.
	c, err = Parse([]byte(validYAML), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Slack.BotToken.Reveal() != "xoxb-file-token-1234" {
		t.Errorf("bot token from file = %q", c.Slack.BotToken.Reveal())
	}
}

// TestSecretsNeverPrinted prints a loaded config every way a careless log
// line might and checks no secret value comes out.
func TestSecretsNeverPrinted(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-live-abcdef", "SLACK_SIGNING_SECRET": "signing-hush", "REDIS_URL": "redis://:redispass@127.0.0.1:6379/0"}
	c, err := Parse([]byte(validYAML), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%v\n%+v\n%#v\n%s\n", c, c, c, c.Slack.BotToken)
	j, _ := json.Marshal(c)
	out.Write(j)
	y, _ := yaml.Marshal(c)
	out.Write(y)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("config", "cfg", c, "token", c.Slack.BotToken)
	slog.New(slog.NewTextHandler(&out, nil)).Info("config", "cfg", c, "key", c.OpenAI.APIKey)
	out.WriteString(c.Redis.Addr())
	for _, secret := range []string{"xoxb-file-token-1234", "xapp-file-token-5678", "sk-live-abcdef", "signing-hush", "redispass"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("secret %q printed:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), redacted) {
		t.Errorf("want %q in the output", redacted)
	}
}

func TestConfigExampleIsValid(t *testing.T) {
	b, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b, envOf(map[string]string{"SLACK_BOT_TOKEN": "xoxb-x", "SLACK_APP_TOKEN": "xapp-x", "OPENAI_API_KEY": "sk-x"}))
	if err != nil {
		t.Fatalf("config.example.yaml does not parse:\n%v", err)
	}
	if ps := c.Validate(Run); len(ps) > 0 {
		t.Fatalf("config.example.yaml (with secrets from the environment) has problems:\n%v", ps)
	}
}
