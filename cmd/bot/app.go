package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/approval"
	"github.com/askops/askops/chatops"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

// app is the wiring serve, run and ask share: the stores, the Slack client,
// the slackui pieces built on them, and the approval round trip with Slack
// as its notifier. Business rules live in the packages; this only connects
// them.
type app struct {
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	now     func() time.Time

	slack    *slack.Client
	redis    redis.UniversalClient // nil with the in-memory store
	asks     pending.Store
	grants   grants.Store
	sessions sessionState

	notifier     *slackui.Notifier
	approvers    *slackui.Approvers
	interactions *slackui.Interactions
	approver     *meteredApprover
	// home keeps App Home tabs current; asksUI is the notifier that also
	// refreshes them when an Ask changes here (slackui/home.go).
	home   *slackui.Home
	asksUI slackui.HomeNotifier

	// ready answers /readyz: store and Slack reachable.
	ready *readiness
}

// sessionState is the chat-ops state every process shares: a channel's
// sessions, its /askops mode, and stop requests for runs wherever they run
// (package sessions; in memory without Redis).
type sessionState interface {
	chatops.SessionState
	Close() error
}

// appOptions are what differ between subcommands.
type appOptions struct {
	// AskTimeout overrides approvals.timeout (bot ask -timeout).
	AskTimeout time.Duration
	// Notifiers are shown every Ask besides Slack (the console's, when
	// console.enabled).
	Notifiers []approval.Notifier
	// Posted, when set, is told each time the core shows an Ask (bot ask
	// says where it waits).
	Posted func(a pending.Ask, channel, ts string)
}

// reportingNotifier tells posted where its notifier showed an Ask.
type reportingNotifier struct {
	approval.Notifier
	posted func(a pending.Ask, channel, ts string)
}

func (n reportingNotifier) Post(ctx context.Context, a pending.Ask) (string, string, error) {
	channel, ts, err := n.Notifier.Post(ctx, a)
	if err == nil {
		n.posted(a, channel, ts)
	}
	return channel, ts, err
}

// newApp opens the stores and builds the Slack side. With redis.url empty
// the stores are in memory: Asks then live and die with this process.
func newApp(ctx context.Context, cfg Config, log *slog.Logger, m *Metrics, o appOptions) (_ *app, err error) {
	a := &app{cfg: cfg, log: log, metrics: m, now: time.Now}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	hc := &http.Client{Transport: &slackErrorCounter{next: http.DefaultTransport, metrics: m}, Timeout: 30 * time.Second}
	a.slack = newSlackClient(cfg.Slack, hc)

	popts := pending.Options{Now: a.now, Logger: log.With("component", "pending")}
	gopts := grants.Options{Now: a.now, Logger: log.With("component", "grants"), SealKey: grants.SealKeyFrom(cfg.Slack.BotToken.Reveal())}
	sopts := sessions.Options{TTL: cfg.Approvals.SessionTTL.D(), Now: a.now, Logger: log.With("component", "sessions")}
	if cfg.Redis.URL == "" {
		a.asks = pending.NewMemoryStore(popts)
		a.grants = grants.NewMemoryStore(gopts)
		a.sessions = sessions.NewMemoryStore(sopts)
	} else {
		popts.ReplicaAcks, _ = cfg.Redis.replicaAcks() // validated
		popts.ReplicaTimeout = cfg.Redis.ReplicaTimeout.D()
		if a.redis, err = openRedis(cfg.Redis); err != nil {
			return nil, fmt.Errorf("redis.url: %w", err)
		}
		rs, err := pending.NewRedisStore(ctx, a.redis, popts)
		if err != nil {
			return nil, fmt.Errorf("redis.url: open the ask store at %s: %w", redisAddr(cfg.Redis.URL), err)
		}
		a.asks = rs
		a.grants = grants.NewRedisStore(a.redis, gopts)
		a.sessions = sessions.NewRedisStore(a.redis, sopts)
	}

	// The confirm dialog states the scope the round trip records: one function.
	scopeFor := approval.DefaultScopeFor
	a.notifier = slackui.NewNotifier(a.slack, slackui.NotifierConfig{
		ApprovalChannel: cfg.Slack.ApprovalChannel,
		Mention:         cfg.Slack.Mention,
		ScopeText:       approval.ScopeText(scopeFor),
		Logger:          log.With("component", "notifier"),
		Now:             a.now,
	})
	a.approvers, err = slackui.NewApprovers(slackui.ApproversConfig{
		Users:           cfg.Approvals.Approvers.Users,
		Groups:          cfg.Approvals.Approvers.Usergroups,
		AnyoneInChannel: cfg.Approvals.AnyoneInChannel,
		API:             a.slack,
		Logger:          log.With("component", "approvers"),
		Now:             a.now,
	})
	if err != nil {
		return nil, fmt.Errorf("approvals.approvers: %w", err)
	}
	a.home = slackui.NewHome(slackui.HomeConfig{
		Asks: a.asks, API: a.slack, Notifier: a.notifier, Approvers: a.approvers,
		Logger: log.With("component", "home"), Now: a.now,
	})
	a.asksUI = slackui.HomeNotifier{Notifier: a.notifier, Home: a.home}
	a.interactions = slackui.NewInteractions(slackui.InteractionsConfig{
		Asks:      a.asks,
		Notifier:  a.asksUI,
		Home:      a.home,
		Approvers: a.approvers,
		API:       a.slack,
		Logger:    log.With("component", "interactions"),
		Now:       a.now,
	})
	timeout := cfg.Approvals.Timeout.D()
	if o.AskTimeout > 0 {
		timeout = o.AskTimeout
	}
	var notifier approval.Notifier = a.asksUI
	if o.Posted != nil {
		notifier = reportingNotifier{Notifier: notifier, posted: o.Posted}
	}
	core, err := approval.New(approval.Config{
		Asks:       a.asks,
		Grants:     a.grants,
		Notifiers:  append([]approval.Notifier{notifier}, o.Notifiers...),
		Timeout:    timeout,
		SessionTTL: cfg.Approvals.SessionTTL.D(),
		ScopeFor:   scopeFor,
		Logger:     log.With("component", "approver"),
	})
	if err != nil {
		return nil, err
	}
	a.approver = &meteredApprover{next: core, metrics: m, log: log}
	a.ready = &readiness{now: a.now, ttl: 10 * time.Second, store: a.pingStore, slack: a.authTest}
	return a, nil
}

// Close stops background work and closes the stores. Interactions first: its
// in-flight message updates still need the store.
func (a *app) Close() {
	if a.interactions != nil {
		_ = a.interactions.Close()
	}
	if a.home != nil {
		_ = a.home.Close()
	}
	if a.asks != nil {
		_ = a.asks.Close()
	}
	if a.grants != nil {
		_ = a.grants.Close()
	}
	if a.sessions != nil {
		_ = a.sessions.Close()
	}
	if a.redis != nil {
		_ = a.redis.Close()
	}
}

// shared reports whether the stores are shared with other processes (Redis),
// in which case any serve replica takes the clicks and run/ask need not
// listen.
func (a *app) shared() bool { return a.redis != nil }

func (a *app) pingStore(ctx context.Context) error {
	if a.redis == nil {
		return nil // in memory: up while the process is
	}
	if rs, ok := a.asks.(interface{ Ping(context.Context) error }); ok {
		// On a Cluster, PING reaches any node; this reaches the master
		// of askops' slot, the one that must be up.
		return rs.Ping(ctx)
	}
	return a.redis.Ping(ctx).Err()
}

func (a *app) authTest(ctx context.Context) error {
	_, err := a.slack.AuthTestContext(ctx)
	return err
}

// meteredApprover counts and logs every Ask this process waits on: one log
// line per outcome with the ids and the decision latency.
type meteredApprover struct {
	next    *approval.Core
	metrics *Metrics
	log     *slog.Logger
}

func (m *meteredApprover) Approve(ctx context.Context, req pending.Request) pending.Ask {
	m.metrics.AskWaiting(1)
	start := time.Now()
	a := m.next.Approve(ctx, req)
	m.metrics.AskWaiting(-1)
	outcome, ok := a.Outcome()
	if !ok {
		outcome = pending.Unavailable // Approve always returns a terminal Ask; be sure anyway
	}
	latency := time.Since(start)
	if !a.CreatedAt.IsZero() && !a.DecidedAt.IsZero() {
		latency = a.DecidedAt.Sub(a.CreatedAt)
	}
	m.metrics.AskEnded(outcome, latency)
	m.log.Info("ask ended", "ask", a.ID, "run", req.RunID, "session", req.SessionID, "tool", req.Tool,
		"outcome", outcome, "by", a.DecidedBy, "latency", latency.Round(time.Millisecond), "reason", a.DecisionReason)
	return a
}

// agentApprover is the agent's Approver: it turns the agent's request into
// the store's, takes it through the round trip, and hands back the agent's
// decision. The two outcome vocabularies are the same words, so the status
// passes as is; one the agent does not know (a non-terminal Ask) it refuses
// as unavailable.
type agentApprover struct {
	next interface {
		Approve(ctx context.Context, req pending.Request) pending.Ask
	}
}

var _ agent.Approver = agentApprover{}

func (a agentApprover) Approve(ctx context.Context, r agent.Request) agent.Decision {
	ask := a.next.Approve(ctx, pending.Request{
		RunID: r.RunID, SessionID: r.SessionID, Label: r.Label, StartedBy: r.StartedBy,
		Tool: r.Tool, Args: r.Args, Summary: r.Summary, Path: r.Path,
		Reason: r.Reason, Rule: r.Rule, Workspace: r.Workspace, Cwd: r.Cwd,
		ReplyChannel: r.ReplyChannel, ReplyThreadTS: r.ReplyThreadTS,
	})
	return agent.Decision{
		AskID: ask.ID, Outcome: agent.Outcome(ask.Status), By: ask.DecidedBy,
		Reason: ask.DecisionReason, Deadline: ask.Deadline,
	}
}

// readiness answers /readyz. Slack's auth.test is cached briefly so a tight
// probe interval does not spend Slack's rate limit.
type readiness struct {
	now   func() time.Time
	ttl   time.Duration
	store func(context.Context) error
	slack func(context.Context) error
	// socket is the Socket Mode connection's state (nil in HTTP mode). Set
	// before /readyz is served.
	socket func() error

	mu       sync.Mutex
	slackAt  time.Time
	slackErr error
}

// check returns a problem per failing dependency (none when ready).
func (r *readiness) check(ctx context.Context) []string {
	var problems []string
	if err := r.store(ctx); err != nil {
		problems = append(problems, "store: "+err.Error())
	}
	r.mu.Lock()
	if r.slackAt.IsZero() || r.now().Sub(r.slackAt) >= r.ttl {
		r.slackErr = r.slack(ctx)
		r.slackAt = r.now()
	}
	err := r.slackErr
	r.mu.Unlock()
	if err != nil {
		problems = append(problems, "slack: "+err.Error())
	}
	if r.socket != nil {
		if err := r.socket(); err != nil {
			problems = append(problems, "slack: "+err.Error())
		}
	}
	return problems
}

// slackErrorCounter counts failed Slack Web API calls by method: HTTP
// errors, non-200 answers and {"ok": false} bodies alike.
type slackErrorCounter struct {
	next    http.RoundTripper
	metrics *Metrics
}

func (c *slackErrorCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		c.metrics.SlackAPIError(method)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		c.metrics.SlackAPIError(method)
		return resp, nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, nil
	}
	// Web API answers are small; read one to see "ok" and hand it back whole.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var ok struct {
		OK *bool `json:"ok"`
	}
	if rerr != nil || (json.Unmarshal(body, &ok) == nil && ok.OK != nil && !*ok.OK) {
		c.metrics.SlackAPIError(method)
	}
	if rerr != nil {
		return nil, rerr
	}
	return resp, nil
}
