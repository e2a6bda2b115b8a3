package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/chatops"
	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

// app is the wiring serve, run and ask share: the stores, the Slack client,
// the slackui pieces built on them, and the approval round trip with Slack
// as its notifier. Business rules live in the packages; this only connects
// them.
type app struct {
	cfg     config.Config
	log     *slog.Logger
	metrics *metrics.Set
	now     func() time.Time

	slack *slack.Client
	stores

	notifier     *slackui.Notifier
	approvers    *slackui.Approvers
	interactions *slackui.Interactions
	core         *approval.Core
	approver     *metrics.Approver   // core, counted
	escalation   *slackui.Escalation // nil without reminders or escalation levels
	followups    followups
	// home keeps App Home tabs current; asksUI is the notifier that also
	// refreshes them when an Ask changes here (slackui/home.go).
	home   *slackui.Home
	asksUI slackui.HomeNotifier

	// ready answers /readyz: store and Slack reachable; socket is the
	// Socket Mode connection's state it reports.
	ready  *slackui.Readiness
	socket *slackui.SocketHealth
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

// newApp opens the stores and builds the Slack side. With redis.url empty
// the stores are in memory: Asks then live and die with this process.
func newApp(ctx context.Context, cfg config.Config, log *slog.Logger, m *metrics.Set, o appOptions) (_ *app, err error) {
	a := &app{cfg: cfg, log: log, metrics: m, now: time.Now}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	hc := &http.Client{Transport: &metrics.SlackErrors{Next: http.DefaultTransport, Metrics: m}, Timeout: 30 * time.Second}
	a.slack = newSlackClient(cfg.Slack, hc)

	if a.stores, err = openStores(ctx, cfg, log, a.now, grants.SealKeyFrom(cfg.Slack.BotToken.Reveal())); err != nil {
		return nil, err
	}

	if a.escalation, err = newEscalation(cfg, a); err != nil {
		return nil, fmt.Errorf("approvals.escalate: %w", err)
	}
	a.notifier = slackui.NewNotifier(a.slack, slackui.NotifierConfig{
		ApprovalChannel: cfg.Slack.ApprovalChannel,
		Mention:         cfg.Slack.Mention,
		ScopeText:       approval.ScopeText(approval.DefaultScopeFor),
		Followups:       a.scheduler(),
		Logger:          log.With("component", "notifier"),
		Now:             a.now,
	})
	a.approvers, err = a.people(cfg.Approvals.Approvers, cfg.Approvals.AnyoneInChannel, "approvers")
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
		Escalated: a.escalated(),
		API:       a.slack,
		Logger:    log.With("component", "interactions"),
		Now:       a.now,
	})
	var notifier approval.Notifier = a.asksUI
	if o.Posted != nil {
		notifier = approval.Reporting{Notifier: notifier, Posted: o.Posted}
	}
	core, err := newCore(cfg, a.stores, append([]approval.Notifier{notifier}, o.Notifiers...), o.AskTimeout, log)
	if err != nil {
		return nil, err
	}
	a.core = core
	a.approver = &metrics.Approver{Next: core, Metrics: m, Log: log}
	a.socket = &slackui.SocketHealth{}
	a.ready = &slackui.Readiness{Now: a.now, TTL: 10 * time.Second, Store: a.pingStore, Slack: a.authTest}
	if cfg.Slack.Mode == "socket" {
		a.ready.Socket = a.socket.Err
	}
	if !a.shared() {
		a.startFollowups() // nobody else holds this store
	}
	return a, nil
}

// Close stops background work and closes the stores. Interactions first: its
// in-flight message updates still need the store.
func (a *app) Close() {
	a.stopFollowups()
	if a.interactions != nil {
		_ = a.interactions.Close()
	}
	if a.home != nil {
		_ = a.home.Close()
	}
	a.stores.close()
}

// stores are the state every process shares: the Asks, the grants and
// chat-ops' sessions, in Redis when redis.url is set, else in this
// process's memory (Asks then live and die with it).
type stores struct {
	redis    redis.UniversalClient // nil with the in-memory stores
	asks     pending.Store
	grants   grants.Store
	sessions sessionState
}

// openStores opens the stores cfg names; sealKey seals grants whose
// commands hold secrets (nil: none).
func openStores(ctx context.Context, cfg config.Config, log *slog.Logger, now func() time.Time, sealKey []byte) (st stores, err error) {
	popts := pending.Options{Now: now, Logger: log.With("component", "pending")}
	gopts := grants.Options{Now: now, Logger: log.With("component", "grants"), SealKey: sealKey}
	sopts := sessions.Options{TTL: cfg.Approvals.SessionTTL.D(), Now: now, Logger: log.With("component", "sessions")}
	if cfg.Redis.URL == "" {
		return stores{asks: pending.NewMemoryStore(popts), grants: grants.NewMemoryStore(gopts), sessions: sessions.NewMemoryStore(sopts)}, nil
	}
	popts.ReplicaAcks, _ = cfg.Redis.ReplicaAcksOption() // validated
	popts.ReplicaTimeout = cfg.Redis.ReplicaTimeout.D()
	if st.redis, err = openRedis(cfg.Redis); err != nil {
		return stores{}, fmt.Errorf("redis.url: %w", err)
	}
	rs, err := pending.NewRedisStore(ctx, st.redis, popts)
	if err != nil {
		st.close()
		return stores{}, fmt.Errorf("redis.url: open the ask store at %s: %w", cfg.Redis.Addr(), err)
	}
	st.asks, st.grants, st.sessions = rs, grants.NewRedisStore(st.redis, gopts), sessions.NewRedisStore(st.redis, sopts)
	return st, nil
}

// close closes every store opened, the Redis client last.
func (st stores) close() {
	for _, c := range []interface{ Close() error }{st.asks, st.grants, st.sessions} {
		if c != nil {
			_ = c.Close()
		}
	}
	if st.redis != nil {
		_ = st.redis.Close()
	}
}

// newCore is the approval round trip on st, showing each Ask through
// notifiers; timeout 0 means approvals.timeout. The confirm dialog states
// the scope it records: one function, approval.DefaultScopeFor.
func newCore(cfg config.Config, st stores, notifiers []approval.Notifier, timeout time.Duration, log *slog.Logger) (*approval.Core, error) {
	if timeout <= 0 {
		timeout = cfg.Approvals.Timeout.D()
	}
	return approval.New(approval.Config{
		Asks: st.asks, Grants: st.grants, Notifiers: notifiers,
		Timeout: timeout, SessionTTL: cfg.Approvals.SessionTTL.D(), ScopeFor: approval.DefaultScopeFor,
		Logger: log.With("component", "approver"),
	})
}

// people is who p names in Slack (anyone in the channel with anyone),
// checked through a's client.
func (a *app) people(p config.People, anyone bool, component string) (*slackui.Approvers, error) {
	return slackui.NewApprovers(slackui.ApproversConfig{Users: p.Users, Groups: p.Usergroups, AnyoneInChannel: anyone,
		API: a.slack, Logger: a.log.With("component", component), Now: a.now})
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

// front is how Slack's traffic reaches a: the Ask buttons' clicks; serve
// adds chat-ops' handlers and the gateway API.
func (a *app) front() slackui.Front {
	return slackui.Front{
		Mode: a.cfg.Slack.Mode, Listen: a.cfg.HTTP.Listen, SigningSecret: a.cfg.Slack.SigningSecret.Reveal(), Client: a.slack,
		Interaction: a.interactions.Handle, Ready: a.ready, Metrics: a.metrics.Handler(), Health: a.socket,
		DrainTimeout: httpDrainTimeout, Logger: a.log, Now: a.now,
	}
}

// takeClicks makes this process answerable when it is the only one that
// can be (the in-memory store): it serves Slack's interactions until the
// returned stop is called. With Redis any serve replica takes the clicks and
// the decision reaches this process through the store, so it does nothing.
func (a *app) takeClicks(ctx context.Context) (stop func(), err error) {
	if a.shared() {
		return func() {}, nil
	}
	return a.front().TakeClicks(ctx)
}
