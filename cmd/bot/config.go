package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// Config is the whole configuration file. Keys and their meaning are
// documented in config.example.yaml; the names are part of the contract.
type Config struct {
	Slack     SlackConfig     `yaml:"slack"`
	HTTP      HTTPConfig      `yaml:"http"`
	Redis     RedisConfig     `yaml:"redis"`
	OpenAI    OpenAIConfig    `yaml:"openai"`
	Approvals ApprovalsConfig `yaml:"approvals"`
	Agent     AgentConfig     `yaml:"agent"`
	Policy    PolicyConfig    `yaml:"policy"`
	Log       LogConfig       `yaml:"log"`
	API       APIConfig       `yaml:"api"`
	Console   ConsoleConfig   `yaml:"console"`

	// noSlack: the file has no slack section, so serve runs the local
	// console alone (see console.go). The zero value is Slack configured.
	noSlack bool
}

// SlackConfig is how the bot reaches Slack and where Asks go.
type SlackConfig struct {
	Mode            string `yaml:"mode"`
	BotToken        Secret `yaml:"bot_token"`
	AppToken        Secret `yaml:"app_token"`
	SigningSecret   Secret `yaml:"signing_secret"`
	APIURL          string `yaml:"api_url"`
	ApprovalChannel string `yaml:"approval_channel"`
	Mention         string `yaml:"mention"`
	Command         string `yaml:"command"`
}

// HTTPConfig is the bot's own HTTP server (Slack endpoints, health, metrics).
type HTTPConfig struct {
	Listen string `yaml:"listen"`
}

// RedisConfig names the shared store; an empty URL means the in-memory store.
type RedisConfig struct {
	// URL may carry a password, so it is a Secret too.
	URL Secret `yaml:"url"`

	// Client timeouts; zero keeps the URL's option or the default
	// (pending.RedisTuning). Short ones let a client give up on a dead
	// node quickly and follow a failover.
	DialTimeout  Duration `yaml:"dial_timeout"`
	ReadTimeout  Duration `yaml:"read_timeout"`
	WriteTimeout Duration `yaml:"write_timeout"`
	PoolTimeout  Duration `yaml:"pool_timeout"`

	// ReplicaAcks is how many replicas must hold a decision before it
	// counts: "auto" (default: every replica the master has), a number,
	// or "none" (pending.Options.ReplicaAcks).
	ReplicaAcks string `yaml:"replica_acks"`
	// ReplicaTimeout bounds the wait for them (default 1s).
	ReplicaTimeout Duration `yaml:"replica_timeout"`
}

// tuning is the client timeouts the keys set.
func (c RedisConfig) tuning() pending.RedisTuning {
	return pending.RedisTuning{DialTimeout: c.DialTimeout.D(), ReadTimeout: c.ReadTimeout.D(),
		WriteTimeout: c.WriteTimeout.D(), PoolTimeout: c.PoolTimeout.D()}
}

// replicaAcks maps redis.replica_acks onto pending.Options.ReplicaAcks
// (0 auto, -1 none); ok is false for anything else.
func (c RedisConfig) replicaAcks() (int, bool) {
	switch c.ReplicaAcks {
	case "", "auto":
		return 0, true
	case "none", "0":
		return -1, true
	}
	n, err := strconv.Atoi(c.ReplicaAcks)
	return n, err == nil && n > 0 && n <= 16
}

// OpenAIConfig is the OpenAI-compatible model endpoint.
type OpenAIConfig struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
}

// ApprovalsConfig is who decides, and how long Asks and sessions live.
type ApprovalsConfig struct {
	Timeout         Duration `yaml:"timeout"`
	SessionTTL      Duration `yaml:"session_ttl"`
	Approvers       People   `yaml:"approvers"`
	AnyoneInChannel bool     `yaml:"anyone_in_channel"`
	RunStarters     People   `yaml:"run_starters"`
	// SweepInterval is how often serve looks for Asks whose waiter is gone
	// (a process killed with SIGKILL) and expires them (an extension).
	SweepInterval Duration `yaml:"sweep_interval"`
	// RemindAfter and Escalate are the follow-ups of an Ask nobody
	// answers (escalate.go).
	RemindAfter Duration          `yaml:"remind_after"`
	Escalate    []EscalationLevel `yaml:"escalate"`
	// FollowupLease (an extension) is how long a replica holds a claimed
	// step before another may take it over; 0 means 2m.
	FollowupLease Duration `yaml:"followup_lease"`
}

// People is a set of Slack users and user groups, by id.
type People struct {
	Users      []string `yaml:"users"`
	Usergroups []string `yaml:"usergroups"`
}

// Empty reports whether p names nobody.
func (p People) Empty() bool { return len(p.Users) == 0 && len(p.Usergroups) == 0 }

// AgentConfig bounds an agent run.
type AgentConfig struct {
	Workspace     string `yaml:"workspace"`
	MaxIterations int    `yaml:"max_iterations"`
}

// PolicyConfig is the default mode and the configured rules.
type PolicyConfig struct {
	Mode  string        `yaml:"mode"`
	Rules []policy.Rule `yaml:"rules"`
}

// LogConfig shapes the bot's own logs (not part of the contract; an
// extension documented in config.example.yaml).
type LogConfig struct {
	Format string `yaml:"format"` // text | json
	Level  string `yaml:"level"`  // debug | info | warn | error
}

// OpenAI's public endpoint, used when openai.base_url is empty.
const defaultOpenAIBaseURL = "https://api.openai.com/v1"

// defaultConfig is what a key left out of the file means.
func defaultConfig() Config {
	return Config{
		Slack:     SlackConfig{Mode: "socket", Command: "/askops"},
		HTTP:      HTTPConfig{Listen: ":8080"},
		OpenAI:    OpenAIConfig{BaseURL: defaultOpenAIBaseURL},
		Approvals: ApprovalsConfig{Timeout: Duration(10 * time.Minute), SessionTTL: Duration(12 * time.Hour), SweepInterval: Duration(15 * time.Second)},
		Agent:     AgentConfig{Workspace: "./workspace", MaxIterations: 30},
		Policy:    PolicyConfig{Mode: string(policy.ModeAsk)},
		Log:       LogConfig{Format: "text", Level: "info"},
		Console:   ConsoleConfig{Listen: defaultConsoleListen},
	}
}

// Secret is a string that must never reach a log line, an error or stdout.
// Every way of printing it gives "[redacted]"; Reveal gives the value to the
// one place that needs it (an HTTP header, a client constructor).
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps JSON and YAML encoders from printing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Duration is a time.Duration written as "10m" or "12h" in the file.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a Go duration. A bad one is reported as a *yaml.TypeError
// so decoding goes on and every problem in the file is reported at once.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a duration such as 10m or 12h", n.Line)}}
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: bad duration %q (want e.g. 90s, 10m or 12h)", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as text.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// Problem is one thing wrong with the configuration, named by its key
// (e.g. "policy.rules[2].decision").
type Problem struct {
	Key string
	Msg string
}

func (p Problem) String() string {
	if p.Key == "" {
		return p.Msg
	}
	return p.Key + ": " + p.Msg
}

// Problems is every problem found; as an error it prints one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// envOverrides maps environment variables to the secret (and URL) keys they
// override. The environment wins over the file when set, so a file can be
// committed without secrets.
func envOverrides(c *Config) []struct {
	env string
	set func(string)
} {
	return []struct {
		env string
		set func(string)
	}{
		{"SLACK_BOT_TOKEN", func(v string) { c.Slack.BotToken = Secret(v) }},
		{"SLACK_APP_TOKEN", func(v string) { c.Slack.AppToken = Secret(v) }},
		{"SLACK_SIGNING_SECRET", func(v string) { c.Slack.SigningSecret = Secret(v) }},
		{"REDIS_URL", func(v string) { c.Redis.URL = Secret(v) }},
		{"OPENAI_BASE_URL", func(v string) { c.OpenAI.BaseURL = v }},
		{"OPENAI_API_KEY", func(v string) { c.OpenAI.APIKey = Secret(v) }},
	}
}

// loadConfigFile reads path, applies the environment and validates for
// cmd; see checkConfig.
func loadConfigFile(path string, getenv func(string) string, cmd command) (Config, Problems) {
	if path == "" {
		return Config{}, Problems{{Key: "-config", Msg: "required: the path of the config file"}}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, Problems{{Key: "-config", Msg: err.Error()}}
	}
	return checkConfig(b, getenv, cmd)
}

// parseConfig decodes a config file strictly (unknown keys and wrong types
// are refused, each named by its key) over the defaults, then applies the
// environment overrides. It does not validate; see Config.Validate.
func parseConfig(b []byte, getenv func(string) string) (Config, error) {
	c := defaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(&c)
	switch {
	case errors.Is(err, io.EOF):
		// An empty file is every default; Validate says what is missing.
	case err != nil:
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			// A syntax error: yaml says where ("yaml: line 3: ...").
			return Config{}, Problems{{Msg: err.Error()}}
		}
		var root yaml.Node
		_ = yaml.Unmarshal(b, &root) // it parsed above, so this succeeds
		keys := keysByLine(&root)
		var ps Problems
		for _, e := range te.Errors {
			ps = append(ps, typeProblem(e, keys))
		}
		// yaml decoded everything else; return it too so the caller can
		// report the file's other problems in the same pass.
		applyEnv(&c, getenv)
		c.noSlack = !hasTopKey(b, "slack")
		return c, ps
	}
	applyEnv(&c, getenv)
	c.noSlack = !hasTopKey(b, "slack")
	return c, nil
}

func applyEnv(c *Config, getenv func(string) string) {
	for _, o := range envOverrides(c) {
		if v := getenv(o.env); v != "" {
			o.set(v)
		}
	}
	c.API.resolveEnv(getenv)
}

// checkConfig parses b and validates it for cmd, returning every problem:
// decode problems (unknown keys, wrong types, bad durations) and then the
// validation problems of keys not already reported.
func checkConfig(b []byte, getenv func(string) string, cmd command) (Config, Problems) {
	c, err := parseConfig(b, getenv)
	var ps Problems
	if err != nil {
		if !errors.As(err, &ps) || (len(ps) == 1 && ps[0].Key == "") {
			return Config{}, Problems{{Msg: err.Error()}} // a syntax error: nothing else is known
		}
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Key] = true
	}
	for _, p := range c.Validate(cmd) {
		if !seen[p.Key] {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return Config{}, ps
	}
	return c, nil
}

// keyAt is one mapping key in the file: its dotted path and its own name.
type keyAt struct {
	path, name string
	value      *yaml.Node
}

// keysByLine indexes every mapping key by the line it is on, so yaml's
// line-numbered errors can be reported by key.
func keysByLine(root *yaml.Node) map[int][]keyAt {
	m := map[int][]keyAt{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				m[k.Line] = append(m[k.Line], keyAt{path: p, name: k.Value, value: v})
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if c.Kind != yaml.MappingNode && c.Kind != yaml.SequenceNode {
					m[c.Line] = append(m[c.Line], keyAt{path: p, value: c})
				}
				walk(c, p)
			}
		}
	}
	walk(root, "")
	return m
}

// yaml's error texts, parsed to name the key and say what is wrong.
var (
	yamlLineRe   = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownKeyRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	wrongTypeRe  = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
)

// wantedType says in words what a Go field type wants.
func wantedType(goType string) string {
	switch {
	case goType == "int":
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "a mapping"
	}
	return goType
}

// givenType says in words what a YAML tag holds.
func givenType(tag string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "nothing"
	}
	return tag
}

// typeProblem turns one of yaml's "line N: ..." messages into a Problem
// named by the key on that line.
func typeProblem(e string, keys map[int][]keyAt) Problem {
	m := yamlLineRe.FindStringSubmatch(e)
	if m == nil {
		return Problem{Msg: e}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	cands := keys[line]
	pick := func(match func(keyAt) bool) string {
		for _, k := range cands {
			if match(k) {
				return k.path
			}
		}
		if len(cands) > 0 {
			return cands[0].path
		}
		return fmt.Sprintf("line %d", line)
	}
	if u := unknownKeyRe.FindStringSubmatch(msg); u != nil {
		return Problem{Key: pick(func(k keyAt) bool { return k.name == u[1] }), Msg: "unknown key"}
	}
	if w := wrongTypeRe.FindStringSubmatch(msg); w != nil {
		tag, val, goType := w[1], w[2], w[3]
		want, got := wantedType(goType), givenType(tag)
		if val != "" {
			got += fmt.Sprintf(" (%s)", val)
		}
		key := pick(func(k keyAt) bool {
			return k.value != nil && k.value.Line == line && k.value.ShortTag() == tag && (val == "" || strings.HasPrefix(k.value.Value, strings.TrimSuffix(val, "...")))
		})
		return Problem{Key: key, Msg: fmt.Sprintf("want %s, got %s", want, got)}
	}
	// Our own messages (Duration) and anything else: name the key, keep the text.
	return Problem{Key: pick(func(k keyAt) bool { return k.value != nil && k.value.Line == line && k.value.Kind == yaml.ScalarNode }), Msg: msg}
}

// command is the subcommand a config is validated for: what it needs
// differs (only runs need the model, only ask/run need an approval channel).
type command string

const (
	cmdServe       command = "serve"
	cmdRun         command = "run"
	cmdAsk         command = "ask"
	cmdCheckConfig command = "check-config"
	// cmdGrants talks only to the store: it needs neither the model nor
	// Slack's secrets, so an admin box need not hold them.
	cmdGrants command = "grants"
)

// notAnID reports whether s is plainly a name or a mention rather than a
// Slack id (U…, S…, C…). The check is loose on purpose: Slack's id formats
// are not promised, and a wrong id fails visibly at the first use.
func notAnID(s string) bool {
	return s == "" || strings.ContainsAny(s, " \t\n@<>#|")
}

// Validate returns every problem with c for cmd, or nil. Messages never
// contain a secret's value.
func (c Config) Validate(cmd command) Problems {
	var ps Problems
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	ps = append(ps, c.consoleProblems(cmd)...)
	// With no slack section serve runs the local console alone: it needs
	// neither Slack, Slack approvers, nor the model (nothing starts a run).
	local := c.local(cmd)

	// slack
	s := c.Slack
	needSlack := cmd != cmdGrants && !local
	if s.BotToken == "" && needSlack {
		add("slack.bot_token", "required (or set SLACK_BOT_TOKEN)")
	}
	switch s.Mode {
	case "socket":
		if s.AppToken == "" && needSlack {
			add("slack.app_token", "required when slack.mode is socket (or set SLACK_APP_TOKEN)")
		}
	case "http":
		if s.SigningSecret == "" && needSlack {
			add("slack.signing_secret", "required when slack.mode is http (or set SLACK_SIGNING_SECRET)")
		}
	default:
		add("slack.mode", "unknown mode %q (want socket or http)", s.Mode)
	}
	if s.APIURL != "" {
		if msg := checkHTTPURL(s.APIURL); msg != "" {
			add("slack.api_url", "%s", msg)
		}
	}
	switch {
	case s.ApprovalChannel == "" && (cmd == cmdAsk || cmd == cmdRun):
		add("slack.approval_channel", "required: the channel id (e.g. C0123ABCD) where Asks of runs not started in Slack are posted")
	case s.ApprovalChannel != "" && notAnID(s.ApprovalChannel):
		add("slack.approval_channel", "want a channel id such as C0123ABCD, got %q", s.ApprovalChannel)
	}
	if !strings.HasPrefix(s.Command, "/") || len(s.Command) < 2 || strings.ContainsAny(s.Command, " \t") {
		add("slack.command", "want a slash command such as /askops, got %q", s.Command)
	}

	// http
	if _, port, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
		add("http.listen", "want host:port or :port, got %q", c.HTTP.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		add("http.listen", "bad port %q", port)
	}

	// redis
	if u := c.Redis.URL.Reveal(); u != "" {
		// OpenRedis only parses (it does not connect) and redacts any
		// password in its errors.
		if client, err := pending.OpenRedis(u); err != nil {
			add("redis.url", "%v", err)
		} else {
			client.Close()
		}
	}
	for _, d := range []struct {
		key string
		v   Duration
	}{
		{"redis.dial_timeout", c.Redis.DialTimeout}, {"redis.read_timeout", c.Redis.ReadTimeout},
		{"redis.write_timeout", c.Redis.WriteTimeout}, {"redis.pool_timeout", c.Redis.PoolTimeout},
		{"redis.replica_timeout", c.Redis.ReplicaTimeout},
	} {
		if d.v < 0 || d.v.D() > time.Minute {
			add(d.key, "want a duration between 0 (the default) and 1m, got %s", d.v)
		}
	}
	if _, ok := c.Redis.replicaAcks(); !ok {
		add("redis.replica_acks", "want auto, none or a number of replicas (1-16), got %q", c.Redis.ReplicaAcks)
	}

	// openai: only runs talk to the model.
	if (cmd == cmdServe || cmd == cmdRun || cmd == cmdCheckConfig) && !local {
		o := c.OpenAI
		if msg := checkHTTPURL(o.BaseURL); msg != "" {
			add("openai.base_url", "%s (or set OPENAI_BASE_URL)", msg)
		}
		if o.Model == "" {
			add("openai.model", "required: the model name, e.g. gpt-4.1")
		}
		if o.APIKey == "" && strings.HasPrefix(strings.TrimRight(o.BaseURL, "/"), defaultOpenAIBaseURL) {
			add("openai.api_key", "required for %s (or set OPENAI_API_KEY)", defaultOpenAIBaseURL)
		}
	}

	// approvals
	a := c.Approvals
	if a.Timeout <= 0 {
		add("approvals.timeout", "must be > 0")
	}
	if a.SessionTTL <= 0 {
		add("approvals.session_ttl", "must be > 0")
	}
	if a.SweepInterval <= 0 {
		add("approvals.sweep_interval", "must be > 0")
	}
	if a.Approvers.Empty() && !a.AnyoneInChannel && !local {
		add("approvals.approvers", "no approvers; set approvals.approvers.users/usergroups or approvals.anyone_in_channel: true")
	}
	checkPeople := func(key string, p People) {
		for i, u := range p.Users {
			if notAnID(u) {
				add(fmt.Sprintf("%s.users[%d]", key, i), "want a Slack user id such as U0123ABCD, got %q", u)
			}
		}
		for i, g := range p.Usergroups {
			if notAnID(g) {
				add(fmt.Sprintf("%s.usergroups[%d]", key, i), "want a Slack user group id such as S0123ABCD, got %q", g)
			}
		}
	}
	checkPeople("approvals.approvers", a.Approvers)
	checkPeople("approvals.run_starters", a.RunStarters)
	ps = append(ps, a.followupProblems()...)

	// agent
	if c.Agent.Workspace == "" {
		add("agent.workspace", "required: the directory the agent works in")
	}
	if c.Agent.MaxIterations <= 0 {
		add("agent.max_iterations", "must be > 0")
	}

	// policy
	if !policy.Mode(c.Policy.Mode).Valid() {
		add("policy.mode", "unknown mode %q (want ask, never or full)", c.Policy.Mode)
	}
	ps = append(ps, ruleProblems(c.Policy.Rules)...)

	ps = append(ps, c.API.problems(cmd)...)

	// log
	switch c.Log.Format {
	case "text", "json":
	default:
		add("log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	if _, ok := parseLevel(c.Log.Level); !ok {
		add("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	return ps
}

// ruleProblems checks each policy rule with the policy engine itself, one
// rule at a time so every bad rule is reported (the engine stops at the
// first), each as policy.rules[N].FIELD.
func ruleProblems(rules []policy.Rule) Problems {
	var ps Problems
	for i, r := range rules {
		_, err := policy.New(policy.Config{Rules: []policy.Rule{r}})
		if err == nil {
			continue
		}
		key := fmt.Sprintf("policy.rules[%d]", i)
		var re *policy.RuleError
		if errors.As(err, &re) {
			if re.Field != "" {
				key += "." + re.Field
			}
			ps = append(ps, Problem{Key: key, Msg: re.Msg})
			continue
		}
		ps = append(ps, Problem{Key: key, Msg: err.Error()})
	}
	return ps
}

func checkHTTPURL(s string) string {
	if s == "" {
		return "required"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("want an http(s) URL, got %q", s)
	}
	return ""
}

func parseLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, true
	case "info", "":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}
