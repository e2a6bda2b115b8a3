package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/approval/foragent"
	"github.com/askops/askops/chatops"
	"github.com/askops/askops/config"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/policy"
)

// newRunner builds the agent runner: the model endpoint, the policy engine
// (rules, default mode, the grant store) and this app's Approver.
func newRunner(a *app) (*agent.Runner, error) {
	cfg := a.cfg
	engine, err := a.policy()
	if err != nil {
		return nil, err
	}
	ws, created, err := agent.CreateWorkspace(cfg.Agent.Workspace)
	if err != nil {
		return nil, fmt.Errorf("agent.workspace: %w", err)
	}
	if created {
		a.log.Info("created the agent workspace", "dir", ws, "configured", cfg.Agent.Workspace)
	}
	b, err := a.agentBound(context.Background())
	if err != nil {
		return nil, fmt.Errorf("agent.bound: %w", err)
	}
	model := agent.NewModel(cfg.OpenAI.BaseURL, cfg.OpenAI.APIKey.Reveal(), &http.Client{Timeout: 5 * time.Minute, Transport: agent.ModelTransport()}, agent.RetryOptions{})
	return agent.NewRunner(agent.Config{
		Model:         model,
		ModelName:     cfg.OpenAI.Model,
		Workspace:     ws,
		MaxIterations: cfg.Agent.MaxIterations,
		Policy:        engine,
		Approver:      foragent.Approver{Next: a.approver},
		Logger:        a.log.With("component", "agent"),
		Now:           a.now,
		Bound:         b,
	})
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
		fmt.Fprintln(env.stderr, "bot run: no task given")
		fs.Usage()
		return exitUsage
	}
	if m := policy.Mode(*mode); m != "" && !m.Valid() {
		fmt.Fprintf(env.stderr, "bot run: -mode: unknown mode %q (want ask, never or full)\n", *mode)
		return exitUsage
	}
	cfg, ok := loadConfig(env, *path, config.Run)
	if !ok {
		return exitUsage
	}
	log := cfg.Log.NewLogger(env.stderr)
	counts := metrics.New(buildVersion())
	a, err := newApp(ctx, cfg, log, counts, appOptions{})
	if err != nil {
		fmt.Fprintf(env.stderr, "bot run: %v\n", err)
		return exitFailed
	}
	defer a.Close()
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

	host, _ := os.Hostname()
	spec := chatops.TerminalRun(task, *label, env.getenv("USER"), host, policy.Mode(*mode), *cwd)
	progress := chatops.NewProgress(env.stdout)
	run := runner.Start(ctx, spec, progress.Event)
	res := run.Wait()
	counts.RunEnded(string(res.Status))
	if !progress.Result(res) {
		return exitFailed
	}
	return exitOK
}
