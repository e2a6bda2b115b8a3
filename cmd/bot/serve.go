package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/askops/askops/chatops"
	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
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
	// At shutdown the API's waits answer (hooks: deny) before the HTTP
	// drain closes their connections.
	context.AfterFunc(ctx, gw.Stop)

	sweepCtx, stopSweep := context.WithCancel(ctx)
	var sweeper sync.WaitGroup
	sweeper.Go(func() {
		swept := &sweptCounter{next: expiredUpdaters{a.asksUI, consoleExpired(cfg, live)}, metrics: metrics, log: log.With("component", "sweeper")}
		slackui.RunSweeper(sweepCtx, a.asks, swept, cfg.Approvals.SweepInterval.D(), a.now, log.With("component", "sweeper"))
	})

	log.Info("askops serving", "version", version, "mode", cfg.Slack.Mode, "store", storeName(a))
	err = a.serveSlack(ctx, slackHandlers{Interaction: ops.Interaction, SlashCommand: ops.SlashCommand, Event: a.home.Events(ops.Event), API: api}, true, nil)
	// Shutdown: intake has stopped (HTTP drained, Socket Mode closed). Stop
	// the runs; their Asks end cancelled and their messages say so.
	dctx, cancelDrain := context.WithTimeout(context.WithoutCancel(ctx), runDrainTimeout)
	if ops.Shutdown(dctx) != nil {
		log.Warn("runs still winding down at shutdown", "timeout", runDrainTimeout)
	}
	cancelDrain()
	gw.Close() // Asks the API still waits on end cancelled
	stopSweep()
	sweeper.Wait()
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
	runner, err := newRunner(a)
	if err != nil {
		return nil, err
	}
	starters := a.approvers
	if !a.cfg.Approvals.RunStarters.Empty() {
		starters, err = slackui.NewApprovers(slackui.ApproversConfig{
			Users:  a.cfg.Approvals.RunStarters.Users,
			Groups: a.cfg.Approvals.RunStarters.Usergroups,
			API:    a.slack,
			Logger: a.log.With("component", "run_starters"),
			Now:    a.now,
		})
		if err != nil {
			return nil, fmt.Errorf("approvals.run_starters: %w", err)
		}
	}
	return chatops.New(ctx, chatops.Config{
		Command: a.cfg.Slack.Command, Mode: policy.Mode(a.cfg.Policy.Mode), SessionTTL: a.cfg.Approvals.SessionTTL.D(),
		Runner: runner, Approvers: a.approvers, Starters: starters,
		Sessions: a.sessions, Asks: a.asks, Grants: a.grants,
		Slack: a.notifier, Clicks: a.interactions, Runs: a.metrics,
		Redis: a.redis, Logger: a.log.With("component", "chatops"), Now: a.now,
	})
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
