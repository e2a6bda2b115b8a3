package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/chatops"
	"github.com/askops/askops/config"
	"github.com/askops/askops/console"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/memlimit"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/policy"
)

// Shutdown bounds: how long in-flight HTTP requests get to finish, and how
// long runs get to notice their cancellation and update their messages.
const (
	httpDrainTimeout = 10 * time.Second
	runDrainTimeout  = 15 * time.Second
)

// cmdServeMain is `bot serve`: the Slack app.
func cmdServeMain(ctx context.Context, env *environment, args []string) int {
	fs := cliflag.New(string(config.Serve), env.stderr, "[-config FILE] [-rotate-local-token]")
	configPath := fs.String("config", "", "config file (YAML)")
	rotate := fs.Bool("rotate-local-token", false, "without Slack: give the local API new tokens (copies of the old ones stop working)")
	if code, ok := cliflag.Parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return badUsage(env, fs, "bot serve: unexpected argument %q", fs.Arg(0))
	}
	defer tuneCollector(ctx, env.getenv)()
	path := *configPath
	if path == "" {
		// Nothing to configure: the local console alone (console.go).
		cfg, ok := localConfig(env)
		if !ok {
			return exitUsage
		}
		return serveLocal(ctx, env, cfg, "", *rotate)
	}
	cfg, ok := loadConfig(env, path, config.Serve)
	if !ok {
		return exitUsage
	}
	if cfg.NoSlack() {
		return serveLocal(ctx, env, cfg, path, *rotate)
	}
	log := cfg.Log.NewLogger(env.stderr)
	counts := metrics.New(buildVersion())
	live := console.NewLive()
	a, err := newApp(ctx, cfg, log, counts, appOptions{Notifiers: consoleNotifiers(cfg, live), People: cfg.People(env.getenv)})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer a.Close()
	a.configPath = path
	logCertPin(log, "http.listen", a.httpTLS)
	stopConsole, err := startSlackConsole(ctx, env, a, live)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer stopConsole()
	watch, err := checkRedisServer(ctx, a.Redis, a.cfg.Redis.Addr(), log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	a.ready.Store = storeReady(a.Ping, watch)
	startServerWatch(&a.loops, watch)

	ops, err := newChatOps(ctx, a)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	gw, api, err := a.newAPI()
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	provider, err := newAAP(cfg, gw, a.Asks, a.Redis, a.now, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	if provider != nil {
		context.AfterFunc(ctx, provider.Stop)         // its long polls answer before the drain
		a.loops.start("aap deliveries", provider.Run) // notifications of requests that ended (async mode)
	}
	// At shutdown the API's waits answer (hooks: deny) before the HTTP
	// drain closes their connections.
	context.AfterFunc(ctx, gw.Stop)

	// Every approvals.sweep_interval, expire the Asks whose waiter is gone
	// and bring their messages in step.
	swept := &metrics.Swept{Next: approval.ExpiredUpdaters{a.asksUI, consoleExpired(cfg, live)}, Metrics: counts, Log: log.With("component", "sweeper")}
	a.loops.start("sweep", approval.Sweep{Store: a.Asks, Messages: swept, Every: cfg.Approvals.SweepInterval.D(), Now: a.now, Logger: log.With("component", "sweeper")}.Run)
	a.startFollowups() // reminders and escalations due on any Ask, beside the sweep

	b, err := a.agentBound(ctx)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	a.ready.Bound = b.Describe()
	a.checkSlack(ctx)
	log.Info("askops serving", "version", buildVersion(), "mode", cfg.Slack.Mode, "store", cfg.Redis.StoreName(), "bound", b.Describe())
	front := a.front()
	front.Interaction, front.SlashCommand, front.Event = ops.Interaction, ops.SlashCommand, a.home.Events(ops.Event)
	front = a.withRoutes(front, api.Handler(), aapHandler(provider))
	err = front.Serve(ctx, true, nil)
	// Shutdown: intake has stopped (HTTP drained, Socket Mode closed). Stop
	// the runs; their Asks end cancelled and their messages say so.
	dctx, cancelDrain := context.WithTimeout(context.WithoutCancel(ctx), runDrainTimeout)
	if ops.Shutdown(dctx) != nil {
		log.Warn("runs still winding down at shutdown", "timeout", runDrainTimeout)
	}
	cancelDrain()
	gw.Close() // Asks the API still waits on end cancelled; a.Close drains the loops
	if err != nil {
		log.Error("serve stopped", "err", err)
		return exitFailed
	}
	log.Info("askops stopped")
	return exitOK
}

// newChatOps wires chat-ops: its own runner, and run_starters (the
// approvers when empty).
func newChatOps(ctx context.Context, a *app) (*chatops.Ops, error) {
	var runner chatops.Runner
	runsOff := a.cfg.OpenAI.RunsOffReason()
	if runsOff == "" {
		r, err := newRunner(a)
		if err != nil {
			return nil, err
		}
		runner = r
	} else {
		a.log.Warn("runs are off: " + runsOff)
	}
	var err error
	starters := a.approvers
	if !a.cfg.Approvals.RunStarters.Empty() {
		starters, err = a.people(a.cfg.Approvals.RunStarters, false, "run_starters")
		if err != nil {
			return nil, fmt.Errorf("approvals.run_starters: %w", err)
		}
	}
	return chatops.New(ctx, chatops.Config{
		Command: a.cfg.Slack.Command, Mode: policy.Mode(a.cfg.Policy.Mode), SessionTTL: a.cfg.Approvals.SessionTTL.D(),
		Runner: runner, RunsOff: runsOff, Approvers: a.approvers, Starters: starters,
		Sessions: a.Sessions, Asks: a.Asks, Grants: a.Grants,
		Slack: a.notifier, Clicks: a.interactions, Workspace: a.workspace, Runs: a.metrics, RunsChanged: a.home.Changed,
		Shared: a.Shared(), Logger: a.log.With("component", "chatops"), Now: a.now,
	})
}

// serveGCPercent is a serve's garbage-collector target (GOGC), unless the
// environment sets GOGC. A serve's waiting Asks are long-lived and small,
// and a burst of them is judged and recorded with short-lived garbage
// many times their size; at Go's default (100: the heap may grow to twice
// what is live before a collection) that garbage stayed as RSS. With
// 10,000 held Claude Code hooks (bench/waiting -hooks) RSS was 178 MB
// just after the burst and 147 MB 40 s later; at 50, 139 and 125 MB, for
// about twice the collections while Asks arrive and none while they wait.
const serveGCPercent = 50

// tuneCollector sets the serve's collector target and, unless the
// environment sets GOMEMLIMIT (or turns the collector's target off), keeps
// its soft memory limit just above what it holds (internal/memlimit): with
// 10,000 held hooks and Slack, RSS was 174 MB just after the burst and 142
// MB 40 s later without it. stop ends that and lifts the limit.
func tuneCollector(ctx context.Context, getenv func(string) string) (stop func()) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if getenv("GOMEMLIMIT") != "" || strings.EqualFold(getenv("GOGC"), "off") {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		memlimit.Follow(ctx)
	}()
	return func() { cancel(); <-done }
}
