package main

import (
	"context"
	"errors"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// newGateway wires the gateway's Service on a's stores, policy, approval
// round trip and Slack notifier: Asks of one agent session share a Slack
// thread, remembered in Redis when there is one. The caller closes it.
func (a *app) newGateway() (*gateway.Service, error) {
	engine, err := policy.New(policy.Config{
		Rules:  a.cfg.Policy.Rules,
		Mode:   policy.Mode(a.cfg.Policy.Mode),
		Grants: a.grants,
		Logger: a.log.With("component", "policy"),
	})
	if err != nil {
		return nil, err
	}
	var store gateway.ThreadStore = gateway.NewMemoryThreadStore(a.now)
	if a.redis != nil {
		store = gateway.NewRedisThreadStore(a.redis)
	}
	asks, ok := a.asks.(gateway.Asks)
	if !ok {
		return nil, errors.New("gateway: the ask store cannot be watched (long polls need its Watch)")
	}
	return gateway.New(gateway.Config{
		Asks:       asks,
		Approver:   meteredStarter{core: a.approver.next, metered: a.approver},
		Policy:     engine,
		Messages:   a.notifier,
		Threads:    gateway.NewThreads(a.notifier, store, a.cfg.Approvals.SessionTTL.D(), a.log.With("component", "threads")),
		MaxTimeout: a.cfg.Approvals.Timeout.D(),
		Logger:     a.log.With("component", "gateway"),
	})
}

// meteredStarter counts and logs the gateway's Asks as meteredApprover
// does the agent's: askops_asks_total, the latency, one line per outcome.
type meteredStarter struct {
	core    *approval.Core
	metered *meteredApprover
}

func (m meteredStarter) Start(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context) pending.Ask) {
	a, rest := m.core.Start(ctx, req, ttl)
	return a, func(ctx context.Context) pending.Ask {
		m.metered.metrics.AskWaiting(1)
		start := time.Now()
		final := rest(ctx)
		m.metered.metrics.AskWaiting(-1)
		outcome, ok := final.Outcome()
		if !ok {
			outcome = pending.Unavailable
		}
		latency := time.Since(start)
		if !final.CreatedAt.IsZero() && !final.DecidedAt.IsZero() {
			latency = final.DecidedAt.Sub(final.CreatedAt)
		}
		m.metered.metrics.AskEnded(outcome, latency)
		m.metered.log.Info("ask ended", "ask", final.ID, "session", req.SessionID, "tool", req.Tool, "agent", req.Label,
			"outcome", outcome, "by", final.DecidedBy, "latency", latency.Round(time.Millisecond), "reason", final.DecisionReason)
		return final
	}
}

// newAPI is serve's gateway and its HTTP API (api.tokens). With no tokens
// configured every API call is refused (401) and the hook endpoint answers
// deny: mounted anyway, since a 404 would let Claude Code's call through.
func (a *app) newAPI() (*gateway.Service, *gateway.API, error) {
	tokens, err := a.cfg.API.GatewayTokens()
	if err != nil {
		return nil, nil, err
	}
	gw, err := a.newGateway()
	if err != nil {
		return nil, nil, err
	}
	return gw, gateway.NewAPI(gw, tokens, a.log.With("component", "api")), nil
}
