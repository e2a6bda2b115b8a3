package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askops/askops/bound"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/policy"
)

// Command is the subcommand a config is validated for: what it needs
// differs (only runs need the model, only ask/run need an approval channel).
type Command string

// The commands, by their names on the command line.
const (
	Serve       Command = "serve"
	Run         Command = "run"
	Ask         Command = "ask"
	CheckConfig Command = "check-config"
	// Grants talks only to the store: it needs neither the model nor
	// Slack's secrets, so an admin box need not hold them.
	Grants Command = "grants"
	// Sandbox runs one command inside the agent's OS bound: it reads
	// agent.bound and the policy's rules, nothing else.
	Sandbox Command = "sandbox"
)

// notAnID reports whether s is plainly a name or a mention rather than a
// Slack id (U…, S…, C…). The check is loose on purpose: Slack's id formats
// are not promised, and a wrong id fails visibly at the first use.
func notAnID(s string) bool {
	return s == "" || strings.ContainsAny(s, " \t\n@<>#|")
}

// Validate returns every problem with c for cmd, or nil. Messages never
// contain a secret's value.
func (c Config) Validate(cmd Command) Problems {
	var ps Problems
	if cmd == Sandbox {
		ps = append(ps, c.Agent.Bound.problems()...)
		return append(ps, ruleProblems(c.Policy.Rules)...)
	}

	ps = append(ps, c.consoleProblems(cmd)...)
	// With no slack section serve runs the local console alone: it needs
	// neither Slack, Slack approvers, nor the model (nothing starts a run);
	// run asks that console: it needs the model, not Slack.
	local := c.local(cmd)
	runLocal := c.runLocal(cmd)

	// slack
	s := c.Slack
	needSlack := cmd != Grants && !local && !runLocal
	if s.BotToken == "" && needSlack {
		ps.add("slack.bot_token", "required (or set SLACK_BOT_TOKEN)")
	}
	switch s.Mode {
	case "socket":
		if s.AppToken == "" && needSlack {
			ps.add("slack.app_token", "required when slack.mode is socket (or set SLACK_APP_TOKEN)")
		}
	case "http":
		if s.SigningSecret == "" && needSlack {
			ps.add("slack.signing_secret", "required when slack.mode is http (or set SLACK_SIGNING_SECRET)")
		}
	default:
		ps.add("slack.mode", "unknown mode %q (want socket or http)", s.Mode)
	}
	if s.APIURL != "" {
		if msg := checkHTTPURL(s.APIURL); msg != "" {
			ps.add("slack.api_url", "%s", msg)
		}
	}
	switch {
	case s.ApprovalChannel == "" && (cmd == Ask || cmd == Run) && !runLocal:
		ps.add("slack.approval_channel", "required: the channel id (e.g. C0123ABCD) where Asks of runs not started in Slack are posted")
	case s.ApprovalChannel != "" && notAnID(s.ApprovalChannel):
		ps.add("slack.approval_channel", "want a channel id such as C0123ABCD, got %q", s.ApprovalChannel)
	}
	if !strings.HasPrefix(s.Command, "/") || len(s.Command) < 2 || strings.ContainsAny(s.Command, " \t") {
		ps.add("slack.command", "want a slash command such as /askops, got %q", s.Command)
	}

	// http
	if _, port, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
		ps.add("http.listen", "want host:port or :port, got %q", c.HTTP.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps.add("http.listen", "bad port %q", port)
	}
	if cmd != Grants { // only the commands that listen read the files
		ps = append(ps, c.HTTP.TLSFiles.problems("http")...)
	}

	// redis
	if u := c.Redis.URL.Reveal(); u != "" {
		// redisconn.Open only parses (it does not connect) and redacts any
		// password in its errors.
		if client, err := redisconn.Open(u); err != nil {
			ps.add("redis.url", "%v", err)
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
			ps.add(d.key, "want a duration between 0 (the default) and 1m, got %s", d.v)
		}
	}
	if _, ok := c.Redis.ReplicaAcksOption(); !ok {
		ps.add("redis.replica_acks", "want auto, none or a number of replicas (1-16), got %q", c.Redis.ReplicaAcks)
	}

	// openai: only runs talk to the model. serve and check-config without
	// any openai setting run with runs off (OpenAIConfig.RunsOffReason).
	needModel := cmd == Run || ((cmd == Serve || cmd == CheckConfig) && c.OpenAI.ModelConfigured())
	if needModel && !local {
		o := c.OpenAI
		if msg := checkHTTPURL(o.BaseURL); msg != "" {
			ps.add("openai.base_url", "%s (or set OPENAI_BASE_URL)", msg)
		}
		if o.Model == "" {
			ps.add("openai.model", "required: the model name, e.g. gpt-4.1")
		}
		if o.APIKey == "" && strings.HasPrefix(strings.TrimRight(o.BaseURL, "/"), DefaultOpenAIBaseURL) {
			ps.add("openai.api_key", "required for %s (or set OPENAI_API_KEY)", DefaultOpenAIBaseURL)
		}
	}

	// approvals
	a := c.Approvals
	if a.Timeout <= 0 {
		ps.add("approvals.timeout", "must be > 0")
	}
	if a.SessionTTL <= 0 {
		ps.add("approvals.session_ttl", "must be > 0")
	}
	if a.SweepInterval <= 0 {
		ps.add("approvals.sweep_interval", "must be > 0")
	}
	if a.Approvers.Empty() && !a.AnyoneInChannel && !local && !runLocal {
		ps.add("approvals.approvers", "no approvers; set approvals.approvers.users/usergroups or approvals.anyone_in_channel: true")
	}
	checkPeople := func(key string, p People) {
		for i, u := range p.Users {
			if notAnID(u) {
				ps.add(fmt.Sprintf("%s.users[%d]", key, i), "want a Slack user id such as U0123ABCD, got %q", u)
			}
		}
		for i, g := range p.Usergroups {
			if notAnID(g) {
				ps.add(fmt.Sprintf("%s.usergroups[%d]", key, i), "want a Slack user group id such as S0123ABCD, got %q", g)
			}
		}
	}
	checkPeople("approvals.approvers", a.Approvers)
	checkPeople("approvals.run_starters", a.RunStarters)
	ps = append(ps, a.followupProblems()...)

	// agent
	if c.Agent.Workspace == "" {
		ps.add("agent.workspace", "required: the directory the agent works in")
	}
	if c.Agent.MaxIterations <= 0 {
		ps.add("agent.max_iterations", "must be > 0")
	}
	ps = append(ps, c.Agent.Bound.problems()...)

	// policy
	if !policy.Mode(c.Policy.Mode).Valid() {
		ps.add("policy.mode", "unknown mode %q (want ask, never or full)", c.Policy.Mode)
	}
	ps = append(ps, ruleProblems(c.Policy.Rules)...)
	ps = append(ps, c.quorumProblems()...)

	ps = append(ps, c.API.problems(cmd)...)
	ps = append(ps, c.AAP.problems(cmd, c.API)...)
	if c.AAP.Enabled && c.local(cmd) {
		// The console-only serve listens on both: one port cannot be both.
		_, hp, err1 := net.SplitHostPort(c.HTTP.Listen)
		_, cp, err2 := net.SplitHostPort(c.Console.Listen)
		if err1 == nil && err2 == nil && hp == cp && hp != "0" {
			ps.add("http.listen", "the console-only serve listens on console.listen (%s) and, with aap.enabled, on http.listen (%s) for the AAP provider: give them different ports", c.Console.Listen, c.HTTP.Listen)
		}
	}

	// log
	switch c.Log.Format {
	case "text", "json":
	default:
		ps.add("log.format", "unknown format %q (want text or json)", c.Log.Format)
	}
	if _, ok := ParseLevel(c.Log.Level); !ok {
		ps.add("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
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

// ParseLevel reads log.level (case-insensitive; empty is info).
func ParseLevel(s string) (slog.Level, bool) {
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

// NewLogger builds the process logger the log section describes: text or
// JSON on w (stderr, so stdout stays the command's answer).
func (c LogConfig) NewLogger(w io.Writer) *slog.Logger {
	level, _ := ParseLevel(c.Level)
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(c.Format, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// problems checks agent.bound with the bound package's own rules.
func (b BoundConfig) problems() Problems {
	var ps Problems
	if !bound.Mode(b.Mode).Valid() {
		ps.add("agent.bound.mode", "unknown mode %q (want required, best-effort or off)", b.Mode)
	}
	for i, p := range b.Writable {
		if err := bound.CheckWritable(p); err != nil {
			ps = append(ps, Problem{Key: fmt.Sprintf("agent.bound.writable[%d]", i), Msg: err.Error()})
		}
	}
	for i, h := range b.Hosts {
		if err := bound.CheckHost(h); err != nil {
			ps = append(ps, Problem{Key: fmt.Sprintf("agent.bound.hosts[%d]", i), Msg: err.Error()})
		}
	}
	return ps
}
