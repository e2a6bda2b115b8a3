package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/askops/askops/internal/batchmsg"
	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/preflight"
	"github.com/askops/askops/internal/rediskey"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/bound"
	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/pending"
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
	storeSet

	notifier     *slackui.Notifier
	approvers    *slackui.Approvers
	workspace    *slackui.Workspace // askops' own Slack workspace (auth.test)
	interactions *slackui.Interactions
	// decider judges every vote: Slack's, the console's, the API's.
	decider    *approval.Decider
	core       *approval.Core
	approver   *metrics.Approver   // core, counted
	escalation *slackui.Escalation // nil without reminders or escalation levels
	// home keeps App Home tabs current; asksUI is the notifier that also
	// refreshes them when an Ask changes here (slackui/home.go).
	home   *slackui.Home
	asksUI slackui.HomeNotifier

	// ready answers /readyz: store and Slack reachable; socket is the
	// Socket Mode connection's state it reports.
	ready  *readiness
	socket *slackui.SocketHealth

	loops loops // the background loops, drained by Close

	// httpTLS is http.listen's TLS (http.tls_cert, tls_key), nil for
	// plain HTTP: read once at start, so a bad pair stops it there.
	httpTLS *tls.Config

	// bound is the OS bound of the agent's allowed commands, built (the
	// kernel probed) on first use: only serve and run need it.
	// configPath is the config file serve or run read ("" for none), for
	// gateway.bound_bash's `bot sandbox -config`, and kept from bounded
	// commands where it lies in their workspace (bound.Config.Keep).
	configPath string

	boundOnce sync.Once
	bound     *bound.Bound
	boundErr  error
}

// agentBound is the OS bound of the agent's allowed commands (agent.bound).
func (a *app) agentBound(ctx context.Context) (*bound.Bound, error) {
	a.boundOnce.Do(func() { a.bound, a.boundErr = newBound(ctx, a.cfg, a.configPath) })
	return a.bound, a.boundErr
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
	// People is who holds each API token and the console (serve: the
	// config's People), for counting a quorum as people.
	People map[string]string
}

// newApp opens the stores and builds the Slack side. With redis.url empty
// the stores are in memory: Asks then live and die with this process.
func newApp(ctx context.Context, cfg config.Config, log *slog.Logger, m *metrics.Set, o appOptions) (_ *app, err error) {
	a := &app{cfg: cfg, log: log, metrics: m, now: time.Now, loops: loops{log: log}}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	if a.httpTLS, err = cfg.HTTP.TLS(); err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &metrics.SlackErrors{Next: http.DefaultTransport, Metrics: m}, Timeout: 30 * time.Second}
	a.slack = newSlackClient(cfg.Slack, hc)

	a.storeSet, err = openStores(ctx, cfg.Redis, storeOptions{SessionTTL: cfg.Approvals.SessionTTL.D(),
		SealKey:     grants.SealKeyFrom(cfg.Slack.BotToken.Reveal()),
		AnnounceKey: pending.AnnounceKeyFrom(cfg.Slack.BotToken.Reveal()),
		Now:         a.now, Logger: log, People: o.People, ReplicaAcksChanged: m.ReplicaAcks})
	if err != nil {
		return nil, err
	}

	if a.escalation, err = newEscalation(cfg, a); err != nil {
		return nil, fmt.Errorf("approvals.escalate: %w", err)
	}
	// Slack's posting limit is the channel's, whichever replica posts:
	// with Redis every replica shares one pace and one record of batch
	// messages; alone, this process keeps its own.
	var pace channelpace.Pace
	var batches batchmsg.Store
	if a.Redis != nil {
		pace, batches = channelpace.NewRedis(a.Redis, rediskey.Default()), batchmsg.NewRedis(a.Redis, rediskey.Default(), 0)
	}
	a.notifier = slackui.NewNotifier(a.slack, slackui.NotifierConfig{
		ApprovalChannel: cfg.Slack.ApprovalChannel,
		Mention:         cfg.Slack.Mention,
		ScopeText:       approval.ScopeText(approval.DefaultScopeFor),
		GrantDurations:  cfg.Approvals.Durations(),
		Followups:       a.scheduler(),
		Logger:          log.With("component", "notifier"),
		Now:             a.now,
		Asks:            a.Asks, // batch messages when a channel backs up
		Pace:            pace,
		Batches:         batches,
	})
	a.approvers, err = a.people(cfg.Approvals.Approvers, cfg.Approvals.AnyoneInChannel, "approvers")
	if err != nil {
		return nil, fmt.Errorf("approvals.approvers: %w", err)
	}
	viewers, _ := a.Sessions.(slackui.HomeViewerStore) // every replica keeps every viewer's Home current
	a.home = slackui.NewHome(slackui.HomeConfig{
		Asks: a.Asks, Viewers: viewers, Runs: a.Sessions, API: a.slack, Notifier: a.notifier,
		Approvers: slackui.AskDeciders{Approvers: a.approvers, Escalated: a.escalated(), Rule: approval.SelfApproval{Allowed: cfg.Approvals.SelfApproval}},
		Logger:    log.With("component", "home"), Now: a.now,
	})
	a.loops.start("home", a.home.Run)
	a.asksUI = slackui.HomeNotifier{Notifier: a.notifier, Home: a.home}
	a.decider = newDecider(cfg, a.Asks, a.approvers.Only, []approval.MessageUpdater{a.asksUI}, log)
	// The workspace the bot token is installed in, learnt from auth.test
	// (at serve's start, else at the first click that needs it): only its
	// users' clicks, commands and mentions count
	// (a Slack Connect channel's other organisation is nobody here).
	a.workspace = slackui.NewWorkspace(a.slack)
	a.interactions = slackui.NewInteractions(slackui.InteractionsConfig{
		Workspace: a.workspace,
		Asks:      a.Asks,
		Notifier:  a.asksUI,
		Home:      a.home,
		Approvers: a.approvers,
		Escalated: a.escalated(),
		Decider:   a.decider,
		API:       a.slack,
		Logger:    log.With("component", "interactions"),
		Now:       a.now,
	})
	var notifier approval.Notifier = a.asksUI
	if o.Posted != nil {
		notifier = approval.Reporting{Notifier: notifier, Posted: o.Posted}
	}
	core, err := newCore(cfg, a.storeSet, append([]approval.Notifier{notifier}, o.Notifiers...), o.AskTimeout, log)
	if err != nil {
		return nil, err
	}
	a.core = core
	a.approver = &metrics.Approver{Next: core, Metrics: m, Log: log}
	a.socket = &slackui.SocketHealth{}
	a.ready = &readiness{Now: a.now, TTL: 10 * time.Second, Store: a.Ping, Slack: a.authTest}
	if cfg.Slack.Mode == "socket" {
		a.ready.Socket = a.socket.Err
	}
	if !a.Shared() {
		a.startFollowups() // nobody else holds this store
	}
	return a, nil
}

// Close stops background work and closes the stores. Interactions first: its
// in-flight message updates still need the store.
func (a *app) Close() {
	a.loops.stop()
	if a.interactions != nil {
		_ = a.interactions.Close()
	}
	if a.decider != nil {
		a.decider.Close()
	}
	a.storeSet.Close()
	if a.bound != nil {
		a.bound.Close()
	}
}

// newCore is the approval round trip on st, showing each Ask through
// notifiers; timeout 0 means approvals.timeout. The confirm dialog states
// the scope it records: one function, approval.DefaultScopeFor.
func newCore(cfg config.Config, st storeSet, notifiers []approval.Notifier, timeout time.Duration, log *slog.Logger) (*approval.Core, error) {
	if timeout <= 0 {
		timeout = cfg.Approvals.Timeout.D()
	}
	return approval.New(approval.Config{
		Asks: st.Asks, Grants: st.Grants, Notifiers: notifiers,
		Timeout: timeout, SessionTTL: cfg.Approvals.SessionTTL.D(), ScopeFor: approval.DefaultScopeFor,
		GrantDurations: cfg.Approvals.Durations(),
		Logger:         log.With("component", "approver"),
	})
}

// people is who p names in Slack (anyone in the channel with anyone),
// checked through a's client.
func (a *app) people(p config.People, anyone bool, component string) (*slackui.Approvers, error) {
	return slackui.NewApprovers(slackui.ApproversConfig{Users: p.Users, Groups: p.Usergroups, AnyoneInChannel: anyone,
		API: a.slack, Logger: a.log.With("component", component), Now: a.now})
}

// authTest is readiness' Slack check: auth.test with the bot token, its
// failure naming the key most likely at fault (preflight.Slack).
func (a *app) authTest(ctx context.Context) error {
	r := preflight.Slack(ctx, a.slack, a.cfg.Slack.APIURL != "")
	if r.Err != nil {
		return fmt.Errorf("%w (%s)", r.Err, slackHint(r))
	}
	return nil
}

// slackHint says what to look at when auth.test failed: the key at fault,
// or the way to Slack.
func slackHint(r preflight.Result) string {
	if r.Key == "slack" {
		return "Slack could not be reached from here"
	}
	return "check " + r.Key
}

// checkSlack is serve's start-up check of its bot token: when Slack
// refuses it (or cannot be reached) an ERROR names the key at fault. The
// serve goes on: the console and the API decide Asks without Slack, and
// /readyz says slack until it answers.
func (a *app) checkSlack(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	r := preflight.Slack(ctx, a.slack, a.cfg.Slack.APIURL != "")
	if r.Err != nil {
		then := "every Ask ends unavailable until it does (console.enabled: true would let the console decide them)"
		if a.cfg.Console.Enabled {
			then = "the console still shows and decides Asks"
		}
		a.log.Error("Slack's auth.test failed at start ("+slackHint(r)+"): no Ask reaches Slack until it passes; "+then+"; /readyz reports slack meanwhile",
			"key", r.Key, "err", r.Err)
		return
	}
	a.log.Info("slack answers", "detail", r.Detail)
	// Learn askops' own workspace now, not on the first click, whose
	// auth.test would spend Slack's 3 s beside the approver check and
	// the vote. A failure here is retried by that first click.
	if team, enterprise, err := a.workspace.Home(ctx); err != nil {
		a.log.Warn("could not learn askops' own Slack workspace yet; the first click will ask again", "err", err)
	} else {
		a.log.Info("decisions count only from this Slack workspace", "team", team, "enterprise", enterprise)
	}
}

// front is how Slack's traffic reaches a: the Ask buttons' clicks, and
// the probes; serve adds chat-ops' handlers and the gateway API (withRoutes).
func (a *app) front() slackui.Front {
	f := slackui.Front{
		Mode: a.cfg.Slack.Mode, Listen: a.cfg.HTTP.Listen, TLS: a.httpTLS, SigningSecret: a.cfg.Slack.SigningSecret.Reveal(), Client: a.slack,
		Interaction: a.interactions.Handle, Health: a.socket,
		DrainTimeout: httpDrainTimeout, Logger: a.log, Now: a.now,
	}
	return a.withRoutes(f, nil, nil)
}

// withRoutes is f serving the process's routes (httpRoutes) on http.listen:
// the probes, Slack's endpoints as f handles them, and api (nil: none).
func (a *app) withRoutes(f slackui.Front, api, aapAPI http.Handler) slackui.Front {
	f.Routes = httpRoutes{ready: a.ready, metrics: a.metrics.Handler(), slack: f.SlackRoutes(), api: api, aap: aapAPI}.list()
	return f
}

// takeClicks makes this process answerable when it is the only one that
// can be (the in-memory store): it serves Slack's interactions until the
// returned stop is called. With Redis any serve replica takes the clicks and
// the decision reaches this process through the store, so it does nothing.
func (a *app) takeClicks(ctx context.Context) (stop func(), err error) {
	if a.Shared() {
		return func() {}, nil
	}
	return a.front().TakeClicks(ctx)
}
