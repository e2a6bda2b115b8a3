package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/policy"
)

// newGateway wires the gateway's Service on a's stores, policy, approval
// round trip and Slack notifier: Asks of one agent session share a Slack
// thread, remembered by the sessions store (in Redis when there is one).
// The caller closes it.
func (a *app) newGateway() (*gateway.Service, error) {
	engine, err := a.policy()
	if err != nil {
		return nil, err
	}
	asks, ok := a.Asks.(gateway.Asks)
	if !ok {
		return nil, errors.New("gateway: the ask store cannot be watched (long polls need its Watch)")
	}
	// Hooks and long polls waiting for a human hold their connections,
	// not goroutines; the loop notices their agents leaving. It stops
	// after the gateway's Close has answered them (a.Close drains loops).
	bb, err := boundBash(a.cfg, a.configPath)
	if err != nil {
		return nil, err
	}
	held := heldhttp.New(0)
	a.loops.start("held requests", held.Run)
	return gateway.New(gateway.Config{
		BoundBash:  bb,
		Held:       held,
		Asks:       asks,
		Approver:   metrics.Starter{Counted: a.approver},
		Policy:     engine,
		Decider:    a.decider,
		Opener:     a.notifier, // each session's thread, remembered in Sessions
		MaxTimeout: a.cfg.Approvals.Timeout.D(),
		TeamURL:    a.teamURL,  // message_url, the same shape as bot ask's link
		Sessions:   a.Sessions, // each session's workspace, pinned when it is first seen, and when that was
		Now:        a.now,
		SessionTTL: a.cfg.Approvals.SessionTTL.D(),
		Logger:     a.log.With("component", "gateway"),
	})
}

// teamURL is the workspace's URL, from auth.test.
func (a *app) teamURL(ctx context.Context) (string, error) {
	r, err := a.slack.AuthTestContext(ctx)
	if err != nil {
		return "", err
	}
	return r.URL, nil
}

// newAPI is serve's gateway and its HTTP API (api.tokens). With no tokens
// configured every API call is refused (401) and the hook endpoint answers
// deny: mounted anyway, since a 404 would let Claude Code's call through.
func (a *app) newAPI() (*gateway.Service, *gateway.API, error) {
	tokens, err := gatewayTokens(a.cfg.API)
	if err != nil {
		return nil, nil, err
	}
	gw, err := a.newGateway()
	if err != nil {
		return nil, nil, err
	}
	return gw, gateway.NewAPI(gw, tokens, a.log.With("component", "api")), nil
}

// policy is the engine of the configured rules and default mode, on a's
// grant store: what the agent's runs and the gateway judge calls with.
func (a *app) policy() (*policy.Engine, error) {
	return policyEngine(a.cfg, a.storeSet, a.log)
}

// policyEngine is the engine of cfg's rules and default mode on st's
// grant store.
func policyEngine(cfg config.Config, st storeSet, log *slog.Logger) (*policy.Engine, error) {
	return policy.New(policy.Config{Rules: cfg.Policy.Rules, Mode: policy.Mode(cfg.Policy.Mode), Grants: st.Grants, Logger: log.With("component", "policy")})
}

// gatewayTokens is the gateway's view of the (validated) api.tokens
// entries.
func gatewayTokens(c config.APIConfig) (*gateway.Tokens, error) {
	cfgs := make([]gateway.TokenConfig, len(c.Tokens))
	for i, t := range c.Tokens {
		cfgs[i] = gateway.TokenConfig{Name: t.Name, Value: t.Value().Reveal(), Scopes: t.Scopes, Workspace: t.Workspace}
	}
	return gateway.NewTokens(cfgs)
}
