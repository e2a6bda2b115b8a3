package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// Shutdown bounds: how long in-flight HTTP requests get to finish, and how
// long runs get to notice their cancellation and update their messages.
const (
	httpDrainTimeout = 10 * time.Second
	runDrainTimeout  = 15 * time.Second
)

// cmdServeMain is `bot serve`: the Slack app.
func cmdServeMain(ctx context.Context, env *environment, args []string) int {
	path, code, ok := parseConfigFlag(env, cmdServe, args)
	if !ok {
		return code
	}
	if path == "" {
		// Nothing to configure: the local console alone (console.go).
		cfg, ok := localConfig(env)
		if !ok {
			return exitUsage
		}
		return serveLocal(ctx, env, cfg)
	}
	cfg, ok := loadConfig(env, path, cmdServe)
	if !ok {
		return exitUsage
	}
	if cfg.noSlack {
		return serveLocal(ctx, env, cfg)
	}
	log := newLogger(cfg.Log, env.stderr)
	metrics := NewMetrics()
	live := console.NewLive()
	a, err := newApp(ctx, cfg, log, metrics, appOptions{Notifiers: consoleNotifiers(cfg, live)})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer a.Close()
	stopConsole, err := startSlackConsole(ctx, env, a, live)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer stopConsole()
	if err := checkRedisServer(ctx, a); err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}

	// Runs outlive the request that started them but not the process: they
	// get their own context, cancelled at shutdown after intake stops.
	runsCtx, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRuns()
	ops, err := newChatOps(runsCtx, a)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer ops.Close()

	sweepCtx, stopSweep := context.WithCancel(ctx)
	var sweeper sync.WaitGroup
	sweeper.Go(func() {
		swept := &sweptCounter{next: a.notifier, metrics: metrics, log: log.With("component", "sweeper")}
		slackui.RunSweeper(sweepCtx, a.asks, swept, cfg.Approvals.SweepInterval.D(), a.now, log.With("component", "sweeper"))
	})

	log.Info("askops serving", "version", version, "mode", cfg.Slack.Mode, "store", storeName(a))
	err = a.serveSlack(ctx, slackHandlers{Interaction: ops.Interaction, SlashCommand: ops.SlashCommand, Event: ops.Event}, true, nil)
	// Shutdown: intake has stopped (HTTP drained, Socket Mode closed). Stop
	// the runs; their Asks end cancelled and their messages say so.
	ops.StopIntake()
	stopRuns()
	if !ops.Wait(runDrainTimeout) {
		log.Warn("runs still winding down at shutdown", "timeout", runDrainTimeout)
	}
	stopSweep()
	sweeper.Wait()
	if err != nil {
		log.Error("serve stopped", "err", err)
		return exitFailed
	}
	log.Info("askops stopped")
	return exitOK
}

// sweptCounter counts and logs the Asks a sweep expired before their
// messages are updated: their waiters are gone, so nobody else does.
type sweptCounter struct {
	next    slackui.ExpiredUpdater
	metrics *Metrics
	log     *slog.Logger
}

func (s *sweptCounter) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	for _, a := range asks {
		latency := a.DecidedAt.Sub(a.CreatedAt)
		s.metrics.AskEnded(pending.Expired, latency)
		s.log.Info("ask ended", "ask", a.ID, "run", a.RunID, "session", a.SessionID, "tool", a.Tool,
			"outcome", pending.Expired, "by", a.DecidedBy, "latency", latency.Round(time.Millisecond), "reason", "expired by the sweep: its waiter is gone")
	}
	s.next.UpdateExpired(ctx, asks)
}

func storeName(a *app) string {
	if a.shared() {
		return "redis " + redisAddr(a.cfg.Redis.URL)
	}
	return "memory"
}
