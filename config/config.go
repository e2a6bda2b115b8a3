// Package config is askops' configuration file: its typed shape (Config),
// strict loading (unknown keys and wrong types refused, each problem named
// by its key, every problem of a file reported at once), the environment
// variables that override secrets, validation per subcommand, and Secret,
// which never prints its value. Keys and their meaning are documented in
// config.example.yaml; the names are part of the contract.
package config

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/askops/askops/bound"
	"github.com/askops/askops/internal/redisconn"
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
	Gateway   GatewayConfig   `yaml:"gateway"`
	AAP       AAPConfig       `yaml:"aap"`

	// noSlack: the file has no slack section, so serve runs the local
	// console alone (see package console). The zero value is Slack configured.
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

// HTTPConfig is the bot's own HTTP server (Slack endpoints, health,
// metrics, the Ask API, AAP).
type HTTPConfig struct {
	Listen string `yaml:"listen"`
	// TLSFiles (tls_cert, tls_key): with both, http.listen serves HTTPS,
	// so agents on other machines reach the API without a proxy.
	TLSFiles `yaml:",inline"`
}

// TLS is http.listen's TLS configuration from tls_cert and tls_key; nil
// when neither is set (plain HTTP).
func (c HTTPConfig) TLS() (*tls.Config, error) { return c.TLSFiles.load("http") }

// RedisConfig names the shared store; an empty URL means the in-memory store.
type RedisConfig struct {
	// URL may carry a password, so it is a Secret too.
	URL Secret `yaml:"url"`

	// Client timeouts; zero keeps the URL's option or the default
	// (redisconn.Tuning). Short ones let a client give up on a dead
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

// Tuning is the client timeouts the keys set.
func (c RedisConfig) Tuning() redisconn.Tuning {
	return redisconn.Tuning{DialTimeout: c.DialTimeout.D(), ReadTimeout: c.ReadTimeout.D(),
		WriteTimeout: c.WriteTimeout.D(), PoolTimeout: c.PoolTimeout.D()}
}

// ReplicaAcksOption maps redis.replica_acks onto pending.Options.ReplicaAcks
// (0 auto, -1 none); ok is false for anything else.
func (c RedisConfig) ReplicaAcksOption() (int, bool) {
	switch c.ReplicaAcks {
	case "", "auto":
		return 0, true
	case "none", "0":
		return -1, true
	}
	n, err := strconv.Atoi(c.ReplicaAcks)
	return n, err == nil && n > 0 && n <= 16
}

// Addr is the redis URL's host:port/db without credentials, for output.
func (c RedisConfig) Addr() string {
	pu, err := url.Parse(c.URL.Reveal())
	if err != nil {
		return "redis"
	}
	pu.User = nil
	pu.RawQuery = ""
	return pu.String()
}

// StoreName says where the Asks live, for the start-up log line: "memory"
// or "redis " and Addr.
func (c RedisConfig) StoreName() string {
	if c.URL == "" {
		return "memory"
	}
	return "redis " + c.Addr()
}

// OpenAIConfig is the OpenAI-compatible model endpoint.
type OpenAIConfig struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
}

// ModelConfigured reports whether the config (or OPENAI_* variables) names
// a model: any of openai.model, openai.api_key or a base_url other than
// OpenAI's. Without one, serve approves agents' calls (hooks, the API,
// bot ask, the console) and starts no runs; a half-written openai section
// is still an error, not a silent "runs off".
func (c OpenAIConfig) ModelConfigured() bool {
	return c.Model != "" || c.APIKey != "" || (c.BaseURL != "" && c.BaseURL != DefaultOpenAIBaseURL)
}

// RunsOffReason is why serve starts no runs with this model config, or ""
// when it does.
func (c OpenAIConfig) RunsOffReason() string {
	if c.ModelConfigured() {
		return ""
	}
	return "no model is configured (openai.model), so this askops only approves Claude Code, Codex and API calls; add an openai section to start runs"
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
	// answers (followups.go).
	RemindAfter Duration          `yaml:"remind_after"`
	Escalate    []EscalationLevel `yaml:"escalate"`
	// FollowupLease (an extension) is how long a replica holds a claimed
	// step before another may take it over; 0 means 2m.
	FollowupLease Duration `yaml:"followup_lease"`

	// SelfApproval lets whoever started a run approve its Asks; default
	// false (the only approver configured may anyway). Issue 12; see
	// approvals.go.
	SelfApproval bool `yaml:"self_approval"`
	// GrantDurations are time-boxed choices offered next to "Approve for
	// session" ("for 15 min", "for 1 h"); each at most session_ttl.
	GrantDurations []Duration `yaml:"grant_durations"`
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
	Workspace     string      `yaml:"workspace"`
	MaxIterations int         `yaml:"max_iterations"`
	Bound         BoundConfig `yaml:"bound"`
}

// BoundConfig is the OS bound a call askops' own agent runs without a
// person runs inside (package bound).
type BoundConfig struct {
	// Mode: required (default), best-effort or off; what an allowed call
	// gets where the kernel offers no bound.
	Mode string `yaml:"mode"`
	// Writable paths besides the workspace; unset means the toolchains'
	// caches (bound.DefaultWritable). Absolute, or starting with ~/.
	Writable []string `yaml:"writable"`
	// Hosts a bounded call may reach; empty means no network.
	Hosts []string `yaml:"hosts"`
}

// GatewayConfig is how the gateway answers the agents askops does not run.
type GatewayConfig struct {
	// BoundBash: an allowed Claude Code Bash call is answered with an
	// updatedInput that runs the command under `bot sandbox`.
	BoundBash bool `yaml:"bound_bash"`
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

// DefaultOpenAIBaseURL is OpenAI's public endpoint, used when openai.base_url is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// Default is what a key left out of the file means.
func Default() Config {
	return Config{
		Slack:     SlackConfig{Mode: "socket", Command: "/askops"},
		HTTP:      HTTPConfig{Listen: ":8080"},
		OpenAI:    OpenAIConfig{BaseURL: DefaultOpenAIBaseURL},
		Approvals: ApprovalsConfig{Timeout: Duration(10 * time.Minute), SessionTTL: Duration(12 * time.Hour), SweepInterval: Duration(15 * time.Second)},
		Agent:     AgentConfig{Workspace: "./workspace", MaxIterations: 30, Bound: BoundConfig{Mode: string(bound.Required)}},
		Policy:    PolicyConfig{Mode: string(policy.ModeAsk)},
		Log:       LogConfig{Format: "text", Level: "info"},
		Console:   ConsoleConfig{Listen: DefaultConsoleListen},
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

// add appends the problem at key, its message formatted as by fmt.Sprintf.
func (ps *Problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
