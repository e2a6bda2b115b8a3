package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/gateway/toolcall"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/parentwatch"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/pending"
)

// cmdHookMain is `bot hook claude|codex`: one Claude Code or Codex hook
// event on stdin, the decision on stdout. It always exits 0 with an answer
// (a deny when anything fails: both agents let a call through on other exit
// codes), except 2 for input it cannot read (which blocks the call too).
//
//	bot hook claude -url http://askops:8080 -token-env ASKOPS_TOKEN
//	bot hook codex -config askops.yaml
func cmdHookMain(ctx context.Context, env *environment, args []string) int {
	start := time.Now() // the agent's hook timeout runs from about now
	if len(args) == 0 || (args[0] != "claude" && args[0] != "codex") {
		fmt.Fprintln(env.stderr, "usage: bot hook claude|codex [-url URL -token-env NAME | -config FILE] [-timeout D] [-print-settings]")
		return hook.ExitUnreadable
	}
	agent := hook.AgentClaude
	if args[0] == "codex" {
		agent = hook.AgentCodex
	}
	fs := cliflag.New("hook "+args[0], env.stderr, "[-url URL -token-env NAME | -config FILE] [-timeout D] < EVENT.json")
	gf := gatewayFlags(fs)
	printSettings := fs.Bool("print-settings", false, "print the agent's settings block that runs this hook, and exit")
	if code, ok := cliflag.Parse(fs, args[1:]); !ok {
		return code
	}
	if *printSettings {
		return printHookSettings(env, args[0], agent, gf)
	}
	t, err := gf.target(env)
	h := hook.Run{Agent: agent, By: t.by, Workspace: sessionWorkspace(env, agent), In: env.stdin, Out: env.stdout, Err: env.stderr,
		Start: start, Timeout: t.timeout(*gf.timeout), Judged: toolcall.JudgedInput}
	if err != nil {
		// Still read the event, so the answer names the right event.
		h.Open = hook.Open(hook.Unavailable{Reason: err.Error()})
	} else {
		h.Open = func(ctx context.Context) (hook.Settler, func(), error) { return t.connect(ctx, env) }
	}
	// The Ask dies with its asker: the agent killed (SIGTERM, SIGKILL)
	// leaves this hook running otherwise, its Ask approvable for its whole
	// life. Its parent leaving, or the reader of its answer, ends the wait
	// as the agent's own stop would: the Ask ends cancelled, "the agent
	// stopped waiting".
	ctx, leave := context.WithCancelCause(ctx)
	defer leave(nil)
	out, _ := env.stdout.(*os.File)
	watch := &loops{log: slog.New(slog.NewTextHandler(env.stderr, nil))}
	defer watch.stop()
	watch.start("agent watch", parentwatch.New(out, 0, func(string) {
		// Nobody reads the answer or the log any more: writing them must
		// not kill the hook (SIGPIPE) before its Ask is cancelled.
		signal.Ignore(syscall.SIGPIPE)
		leave(pending.ErrAskerGone)
	}).Run)
	return h.Answer(ctx)
}

// sessionWorkspace is the session's root as the agent that started this
// hook gives it (hook.Call.Workspace), "" when it gives none. Neither
// comes from the model: Claude Code sets $CLAUDE_PROJECT_DIR to the
// directory it was started in, and Codex (0.171.0, checked with the real
// CLI) starts its hooks in the session's directory (its -C), while the
// event's cwd is the workdir the model chose for the command.
func sessionWorkspace(env *environment, agent string) string {
	if agent == hook.AgentClaude {
		return env.getenv("CLAUDE_PROJECT_DIR")
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return dir
}

// gatewayCLI is the flags bot hook and bot mcp share: where askops is,
// and how long a human has.
type gatewayCLI struct {
	url, tokenEnv, config *string
	timeout               *time.Duration
}

func gatewayFlags(fs *flag.FlagSet) gatewayCLI {
	return gatewayCLI{
		url:      fs.String("url", "", "a bot serve's URL (default $ASKOPS_URL)"),
		tokenEnv: fs.String("token-env", "ASKOPS_TOKEN", "the environment variable holding the API token (scope ask)"),
		config:   fs.String("config", "", "use the config's store and Slack directly instead of a serve"),
		timeout:  fs.Duration("timeout", 0, "how long a human has to decide (default and maximum approvals.timeout); the hook answers\nat the latest 2s after it (counted from its start), whatever happens: keep it at least 10s below the agent's hook timeout"),
	}
}

// settler is the Settler the flags name, for bot mcp: a serve's API
// (-url), or this process on the config's stores (-config), setting
// -timeout on each call and answering each within its timeout plus
// hook.DefaultGrace (with -url and no -timeout, the Client bounds each
// call by the Ask's deadline). by is who asks.
func (g gatewayCLI) settler(ctx context.Context, env *environment) (s hook.Settler, by string, closeFn func(), err error) {
	t, err := g.target(env)
	if err != nil {
		return nil, t.by, nil, err
	}
	s, closeFn, err = t.connect(ctx, env)
	if err != nil {
		return nil, t.by, nil, err
	}
	var bound time.Duration
	if timeout := t.timeout(*g.timeout); timeout > 0 {
		bound = timeout + hook.DefaultGrace
	}
	return hook.Bounded{Next: hook.WithTimeout{Next: s, Timeout: *g.timeout}, Bound: bound}, t.by, closeFn, nil
}

// gatewayTarget is what the flags name, read but not connected to: the
// config of -config, or the Client of a serve (-url, or the local serve).
type gatewayTarget struct {
	by     string         // who asks: $USER@host
	cfg    *config.Config // -config
	client *hook.Client   // else
	// maxTimeout is approvals.timeout when it is known here: -config's,
	// or the local serve's (its endpoint file names it).
	maxTimeout time.Duration
}

// target reads what the flags name; nothing is connected yet.
func (g gatewayCLI) target(env *environment) (gatewayTarget, error) {
	t := gatewayTarget{by: env.getenv("USER")}
	if host, _ := os.Hostname(); host != "" && t.by != "" {
		t.by += "@" + host
	}
	if *g.config != "" {
		cfg, ok := loadConfig(env, *g.config, config.Ask)
		if !ok {
			return t, fmt.Errorf("the askops config %s is invalid", *g.config)
		}
		t.cfg, t.maxTimeout = &cfg, cfg.Approvals.Timeout.D()
		return t, nil
	}
	c, err := hook.ClientFromEnv(*g.url, *g.tokenEnv, env.getenv)
	if err != nil {
		return t, err
	}
	t.client, t.maxTimeout = c, c.MaxTimeout
	return t, nil
}

// timeout is how long a human has for each call: flag (-timeout), at most
// approvals.timeout; 0 when neither is known here.
func (t gatewayTarget) timeout(flag time.Duration) time.Duration {
	if t.maxTimeout > 0 && (flag <= 0 || flag > t.maxTimeout) {
		return t.maxTimeout
	}
	return flag
}

// connect opens what t names: the serve's Client as it is, or with
// -config this process's stores, Slack and gateway.
func (t gatewayTarget) connect(ctx context.Context, env *environment) (s hook.Settler, closeFn func(), err error) {
	if t.cfg == nil {
		return t.client, func() {}, nil
	}
	cfg := *t.cfg
	log := cfg.Log.NewLogger(env.stderr)
	a, err := newApp(ctx, cfg, log, metrics.New(buildVersion()), appOptions{})
	if err != nil {
		return nil, nil, err
	}
	stop, err := a.takeClicks(ctx)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	gw, err := a.newGateway()
	if err != nil {
		stop()
		a.Close()
		return nil, nil, err
	}
	return gw.Settler(), func() { gw.Close(); stop(); a.Close() }, nil
}
