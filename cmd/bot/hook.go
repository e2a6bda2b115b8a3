package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/metrics"
)

// cmdHookMain is `bot hook claude|codex`: one Claude Code or Codex hook
// event on stdin, the decision on stdout. It always exits 0 with an answer
// (a deny when anything fails: both agents let a call through on other exit
// codes), except 2 for input it cannot read (which blocks the call too).
//
//	bot hook claude -url http://askops:8080 -token-env ASKOPS_TOKEN
//	bot hook codex -config askops.yaml
func cmdHookMain(ctx context.Context, env *environment, args []string) int {
	if len(args) == 0 || (args[0] != "claude" && args[0] != "codex") {
		fmt.Fprintln(env.stderr, "usage: bot hook claude|codex [-url URL -token-env NAME | -config FILE] [-timeout D] [-print-settings]")
		return gateway.HookExitUnreadable
	}
	agent := gateway.AgentClaude
	if args[0] == "codex" {
		agent = gateway.AgentCodex
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
	settler, by, closeFn, err := gf.settler(ctx, env, agent)
	if err != nil {
		// Still read the event, so the answer names the right event.
		return gateway.RunHook(ctx, agent, by, env.stdin, env.stdout, env.stderr, gateway.Unavailable{Reason: err.Error()})
	}
	defer closeFn()
	return gateway.RunHook(ctx, agent, by, env.stdin, env.stdout, env.stderr, settler)
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
		timeout:  fs.Duration("timeout", 0, "how long a human has to decide (default and maximum approvals.timeout); the hook answers\nat the latest 5s after it, whatever happens: keep it at least 10s below the agent's hook timeout"),
	}
}

// settler is the Settler the flags name: a serve's API (-url), or this
// process on the config's stores (-config), setting -timeout on each call
// and answering each within its timeout plus gateway.DefaultGrace (with -url
// and no -timeout, the Client bounds each call by the Ask's deadline). by
// is who asks.
func (g gatewayCLI) settler(ctx context.Context, env *environment, agent string) (s gateway.Settler, by string, closeFn func(), err error) {
	s, by, closeFn, maxTimeout, err := g.open(ctx, env, agent)
	if err != nil {
		return nil, by, nil, err
	}
	timeout := *g.timeout
	if maxTimeout > 0 && (timeout <= 0 || timeout > maxTimeout) {
		timeout = maxTimeout
	}
	var bound time.Duration
	if timeout > 0 {
		bound = timeout + gateway.DefaultGrace
	}
	return gateway.Bounded{Next: gateway.WithTimeout{Next: s, Timeout: *g.timeout}, Bound: bound}, by, closeFn, nil
}

// open connects to what the flags name; maxTimeout is approvals.timeout
// when it is known here (-config).
func (g gatewayCLI) open(ctx context.Context, env *environment, agent string) (s gateway.Settler, by string, closeFn func(), maxTimeout time.Duration, err error) {
	by = env.getenv("USER")
	if host, _ := os.Hostname(); host != "" && by != "" {
		by += "@" + host
	}
	if *g.config != "" {
		cfg, ok := loadConfig(env, *g.config, config.Ask)
		if !ok {
			return nil, by, nil, 0, fmt.Errorf("the askops config %s is invalid", *g.config)
		}
		log := cfg.Log.NewLogger(env.stderr)
		a, err := newApp(ctx, cfg, log, metrics.New(buildVersion()), appOptions{})
		if err != nil {
			return nil, by, nil, 0, err
		}
		stop, err := a.takeClicks(ctx)
		if err != nil {
			a.Close()
			return nil, by, nil, 0, err
		}
		gw, err := a.newGateway()
		if err != nil {
			stop()
			a.Close()
			return nil, by, nil, 0, err
		}
		return gw, by, func() { gw.Close(); stop(); a.Close() }, cfg.Approvals.Timeout.D(), nil
	}
	c, err := gateway.ClientFromEnv(*g.url, *g.tokenEnv, env.getenv)
	if err != nil {
		return nil, by, nil, 0, err
	}
	return c, by, func() {}, 0, nil
}
