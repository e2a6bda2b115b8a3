package main

import (
	"context"
	"fmt"
	"github.com/askops/askops/gateway/local"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/approval/foragent"
	"github.com/askops/askops/bound"
	"github.com/askops/askops/chatops"
	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// newRunner builds the agent runner: the model endpoint, the policy engine
// (rules, default mode, the grant store) and this app's Approver.
func newRunner(a *app) (*agent.Runner, error) {
	b, err := a.agentBound(context.Background())
	if err != nil {
		return nil, fmt.Errorf("agent.bound: %w", err)
	}
	return buildRunner(a.cfg, a.log, a.Grants, b, a.approver, a.now)
}

// buildRunner is the agent runner of cfg: the model endpoint, the policy
// engine (rules, default mode, grants) and next, the round trip its Asks
// take.
func buildRunner(cfg config.Config, log *slog.Logger, gs grants.Store, b *bound.Bound, next foragentNext, now func() time.Time) (*agent.Runner, error) {
	engine, err := policy.New(policy.Config{Rules: cfg.Policy.Rules, Mode: policy.Mode(cfg.Policy.Mode), Grants: gs, Logger: log.With("component", "policy")})
	if err != nil {
		return nil, err
	}
	ws, created, err := agent.CreateWorkspace(cfg.Agent.Workspace)
	if err != nil {
		return nil, fmt.Errorf("agent.workspace: %w", err)
	}
	if created {
		log.Info("created the agent workspace", "dir", ws, "configured", cfg.Agent.Workspace)
	}
	model := agent.NewModel(cfg.OpenAI.BaseURL, cfg.OpenAI.APIKey.Reveal(), &http.Client{Timeout: 5 * time.Minute, Transport: agent.ModelTransport()}, agent.RetryOptions{})
	return agent.NewRunner(agent.Config{
		Model:         model,
		ModelName:     cfg.OpenAI.Model,
		Workspace:     ws,
		MaxIterations: cfg.Agent.MaxIterations,
		Policy:        engine,
		Approver:      foragent.Approver{Next: next},
		Logger:        log.With("component", "agent"),
		Now:           now,
		Bound:         b,
	})
}

// foragentNext is the round trip a run's Asks take (foragent.Approver's
// Next), counted: the approval core here, or a serve's Ask API.
type foragentNext interface {
	Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(ctx context.Context, done func(pending.Ask)))
}

// cmdRunMain is `bot run "TASK"`: one agent run from a terminal or a cron
// job. Its Asks go to the approval channel; progress and the final answer
// are printed; Ctrl-C stops the run and its Asks end cancelled.
func cmdRunMain(ctx context.Context, env *environment, args []string) int {
	fs := cliflag.New("run", env.stderr, `-config FILE [-mode ask|never|full] [-cwd DIR] "TASK"`)
	path := fs.String("config", "", "config file (YAML)")
	mode := fs.String("mode", "", "policy mode for this run: ask, never (unattended: asks become denials) or full (default policy.mode)")
	cwd := fs.String("cwd", "", "working directory inside agent.workspace (default the workspace)")
	label := fs.String("label", "", "what approvers see as the run's name (default: bot run on HOST)")
	positional, code, ok := cliflag.ParseInterleaved(fs, args)
	if !ok {
		return code
	}
	task := strings.TrimSpace(strings.Join(positional, " "))
	if task == "" {
		return badUsage(env, fs, "bot run: no task given")
	}
	if m := policy.Mode(*mode); m != "" && !m.Valid() {
		fmt.Fprintf(env.stderr, "bot run: -mode: unknown mode %q (want ask, never or full)\n", *mode)
		return exitUsage
	}
	cfg, ok := loadConfig(env, *path, config.Run)
	if !ok {
		return exitUsage
	}
	host, _ := os.Hostname()
	spec := chatops.TerminalRun(task, *label, env.getenv("USER"), host, policy.Mode(*mode), *cwd)
	if cfg.NoSlack() {
		return runLocal(ctx, env, cfg, *path, spec)
	}
	log := cfg.Log.NewLogger(env.stderr)
	counts := metrics.New(buildVersion())
	a, err := newApp(ctx, cfg, log, counts, appOptions{})
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	defer a.Close()
	a.configPath = *path // kept from bounded commands (bound.Config.Keep)
	runner, err := newRunner(a)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	stopListening, err := a.takeClicks(ctx)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: cannot take Slack interactions, so nobody could answer an Ask: %v\n", err)
		return exitFailed
	}
	defer stopListening()
	// With Redis, /askops stop on any serve replica reaches this run too.
	releaseStops, err := a.Sessions.HandleStops(ctx, chatops.StopperFor(runner, log.With("component", "run")))
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: redis.url: %v\n", err)
		return exitFailed
	}
	defer releaseStops()

	return runToEnd(ctx, runner, spec, chatops.NewProgress(env.stdout), counts)
}

// runToEnd runs spec on runner, printing its progress and answer; exit 0
// when it finished.
func runToEnd(ctx context.Context, runner *agent.Runner, spec agent.RunSpec, progress *chatops.Progress, counts *metrics.Set) int {
	run := runner.Start(ctx, spec, progress.Event)
	res := run.Wait()
	counts.RunEnded(string(res.Status))
	if !progress.Result(res) {
		return exitFailed
	}
	return exitOK
}

// runLocal is `bot run` with a config that has no slack section: its Asks
// go to the `bot serve` on this machine (its console) through the Ask API
// the serve announces in the local endpoint file, as bot ask's and the
// hooks' do; the terminal says where each waits. Its grants are the
// serve's: it judges each call again. Ctrl-C stops the run and its
// waiting Ask is cancelled.
func runLocal(ctx context.Context, env *environment, cfg config.Config, configPath string, spec agent.RunSpec) int {
	log := cfg.Log.NewLogger(env.stderr)
	client, err := hook.ClientFromEnv("", "", env.getenv)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: no slack section in the config, and %v\n", err)
		return exitFailed
	}
	client.Created = func(a hook.Ask) {
		fmt.Fprintf(env.stderr, "bot run: waiting for a decision in the console at %s until %s (%s)\n",
			client.BaseURL, a.Due().Local().Format("15:04:05"), time.Until(a.Due()).Round(time.Second))
	}
	counts := metrics.New(buildVersion())
	b, err := newBound(ctx, cfg, configPath)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: agent.bound: %v\n", err)
		return exitFailed
	}
	defer b.Close()
	// The run's own grants stay empty: a grant given in the console lives
	// in the serve's store, which judges the run's later calls with it.
	runner, err := buildRunner(cfg, log, grants.NewMemoryStore(grants.Options{}), b,
		&metrics.Approver{Next: local.RunApprover{Client: client}, Metrics: counts, Log: log}, time.Now)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	return runToEnd(ctx, runner, spec, chatops.NewConsoleProgress(env.stdout), counts)
}
