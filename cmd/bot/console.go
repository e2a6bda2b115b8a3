package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/askops/askops/gateway/local"
	"log/slog"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/config"
	"github.com/askops/askops/console"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/webpush"
	"github.com/askops/askops/metrics"
	"github.com/askops/askops/policy"
)

// localConfig is serve's configuration without -config: every default, the
// environment's overrides, and no Slack.
func localConfig(env *environment) (config.Config, bool) {
	c, ps := config.LocalServe(env.getenv)
	for _, p := range ps {
		fmt.Fprintf(env.stderr, "config: %s\n", p)
	}
	return c, len(ps) == 0
}

// serveLocal is `bot serve` without Slack: an in-memory store (or
// redis.url's), policy mode ask, and the console on console.listen, whose
// sign-in link it prints. Runs are off: nothing here starts one, and no
// model is needed.
func serveLocal(ctx context.Context, env *environment, cfg config.Config, configPath string, rotateToken bool) int {
	log := cfg.Log.NewLogger(env.stderr)
	now := time.Now
	// No seal key: the key comes from the bot token, and a serve without
	// Slack seals no grants.
	st, err := openStores(ctx, cfg.Redis, storeOptions{SessionTTL: cfg.Approvals.SessionTTL.D(), Now: now, Logger: log, People: cfg.People(env.getenv)})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer st.Close()
	// The background loops (the sweep, the Redis settings watch), drained
	// before the stores close.
	bg := &loops{log: log}
	defer bg.stop()
	watch, err := checkRedisServer(ctx, st.Redis, cfg.Redis.Addr(), log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	startServerWatch(bg, watch)
	asks, gs := st.Asks, st.Grants
	// Without Slack the console's user is the one approver there is.
	user := console.DeciderPrefix + cfg.ConsoleUser(env.getenv)
	decider := newDecider(cfg, asks, func(by string) bool { return by == user }, nil, log)
	defer decider.Close() // before the stores close

	live := console.NewLive()
	core, err := newCore(cfg, st, []approval.Notifier{live}, 0, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	watchable, ok := asks.(gateway.Asks)
	if !ok {
		log.Error("cannot start", "err", errors.New("the ask store cannot be watched (long polls need its Watch)"))
		return exitFailed
	}
	counts := metrics.New(buildVersion())
	counted := &metrics.Approver{Next: core, Metrics: counts, Log: log}
	tokens, err := local.LoadTokens(env.getenv, rotateToken)
	if err != nil {
		log.Error("cannot start", "err", fmt.Errorf("the local API's tokens: %w", err))
		return exitFailed
	}
	if rotateToken {
		log.Info("the local API has new tokens: copies of the old ones no longer work")
	}
	// Hooks and long polls waiting for a human hold their connections,
	// not goroutines; the loop notices their agents leaving.
	held := heldhttp.New(0)
	bg.start("held requests", held.Run)
	bb, err := boundBash(cfg, configPath)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	api, err := local.New(local.Config{Asks: watchable, Approver: metrics.Starter{Counted: counted},
		Rules: cfg.Policy.Rules, Mode: policy.Mode(cfg.Policy.Mode), Grants: gs, MaxTimeout: cfg.Approvals.Timeout.D(), Tokens: tokens, Held: held, Logger: log, BoundBash: bb})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer api.Close()
	// With aap.enabled, http.listen serves the AAP provider and the Ask
	// API of api.tokens (a decide token decides its requests), judged as
	// the serve with Slack judges them.
	if cfg.AAP.Enabled {
		stopAAP, err := serveLocalAAP(cfg, st, bg, watchable, metrics.Starter{Counted: counted}, decider, now, log)
		if err != nil {
			log.Error("cannot start", "err", err)
			return exitFailed
		}
		defer stopAAP()
	}
	// The same probes as a serve with Slack: the store (and the Redis
	// server's settings) is the one dependency.
	b, err := newBound(ctx, cfg, configPath)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	routes := httpRoutes{ready: &readiness{Now: now, TTL: 10 * time.Second, Store: storeReady(st.Ping, watch), Bound: b.Describe()}, metrics: counts.Handler(), api: api.Handler}
	srv, err := startConsole(ctx, env, cfg, log, st, bg, live, decider, routes.withConsole)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	// Its own entry in the endpoint file: another local serve (on another
	// port) keeps its own, and stopping either leaves the other's.
	ep := hook.LocalEndpoint{URL: srv.Base(), Token: tokens.Script, AgentToken: tokens.Agent,
		TimeoutSeconds: int(cfg.Approvals.Timeout.D() / time.Second), CertSHA256: hook.CertPin(config.LeafCertificate(srv.TLS()))}
	if _, err := hook.WriteLocalEndpoint(env.getenv, ep); err != nil {
		log.Warn("could not write the local endpoint file; `bot ask` without a config will not find this serve", "err", err)
	} else {
		defer func() {
			if err := hook.RemoveLocalEndpoint(env.getenv, ep); err != nil {
				log.Warn("could not take this serve out of the local endpoint file", "err", err)
			}
		}()
	}
	// The sign-in link last: whoever reads it (a person, a test) finds
	// the endpoint file in place for bot ask and the hooks.
	printSignIn(env, srv)

	bg.start("sweep", approval.Sweep{Store: asks, Messages: live, Every: cfg.Approvals.SweepInterval.D(), Now: now, Logger: log.With("component", "sweeper")}.Run)
	log.Info("askops serving: the local console only (no Slack configured)", "version", buildVersion(), "listen", srv.Base(),
		"store", cfg.Redis.StoreName(),
		"policy_mode", cfg.Policy.Mode, "bound", b.Describe())
	log.Info("this serve starts no agent runs; `bot run -config FILE` with openai.model and no slack section runs one whose Asks come to this console")

	<-ctx.Done()
	api.Stop() // waiting bot asks and hooks answer (cancelled) before the listener closes
	stopConsole(ctx, srv)
	api.Close() // and the held ones have been answered before their loop stops
	bg.stop()
	log.Info("askops stopped")
	return exitOK
}

// startConsole serves routes (the console's pages among them) on
// console.listen; printSignIn then says how to sign in.
func startConsole(ctx context.Context, env *environment, cfg config.Config, log *slog.Logger,
	st storeSet, bg *loops, live *console.Live, decider console.Decider, routes console.Routes) (*console.Server, error) {
	tlsCfg, err := cfg.Console.TLS()
	if err != nil {
		return nil, err
	}
	push, err := consolePush(ctx, cfg, st.Redis, log)
	if err != nil {
		return nil, err
	}
	if push != nil {
		bg.start("web push", push.Run)
	}
	logCertPin(log, "console.listen", tlsCfg)
	srv, err := console.Listen(console.Config{
		TLS: tlsCfg, Push: push,
		Asks: st.Asks, Grants: st.Grants, Live: live, Decider: decider,
		ScopeText:      approval.ScopeText(approval.DefaultScopeFor),
		GrantDurations: cfg.Approvals.Durations(),
		User:           cfg.ConsoleUser(env.getenv),
		Logger:         log.With("component", "console"),
	}, cfg.Console.Listen, routes)
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// printSignIn prints srv's one-time sign-in link to stdout, and how a
// second device signs in.
func printSignIn(env *environment, srv *console.Server) {
	fmt.Fprintf(env.stdout, "askops console: sign in at %s\n", srv.SignInLink())
	fmt.Fprintln(env.stdout, "askops console: the link works once; for a phone or a second browser, use \"Sign in on another device\" in the signed-in console (a link and a QR code)")
}

// stopConsole stops srv, draining its requests within httpDrainTimeout.
func stopConsole(ctx context.Context, srv *console.Server) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpDrainTimeout)
	defer cancel()
	srv.Stop(sctx)
}

// consoleNotifiers is the console's notifier for the approval core when it
// runs beside Slack (console.enabled), else none.
func consoleNotifiers(cfg config.Config, live *console.Live) []approval.Notifier {
	if !cfg.Console.Enabled {
		return nil
	}
	return []approval.Notifier{live}
}

// startSlackConsole serves the console beside Slack when console.enabled: a
// decision in either place is the store's one decision, and one taken in
// the console updates the Slack message too.
func startSlackConsole(ctx context.Context, env *environment, a *app, live *console.Live) (stop func(), err error) {
	if !a.cfg.Console.Enabled {
		return func() {}, nil
	}
	// Beside Slack the console has its own port and only its pages: the
	// probes, Slack's endpoints and the API are on http.listen.
	srv, err := startConsole(ctx, env, a.cfg, a.log, a.storeSet, &a.loops, live, a.decider, console.Pages)
	if err != nil {
		return nil, err
	}
	printSignIn(env, srv)
	return func() { stopConsole(ctx, srv) }, nil
}

// consoleExpired is the console's ExpiredUpdater when it runs beside Slack,
// else nil.
func consoleExpired(cfg config.Config, live *console.Live) approval.ExpiredUpdater {
	if !cfg.Console.Enabled {
		return nil
	}
	return live
}

// logCertPin says, when t serves HTTPS on what (console.listen,
// http.listen), the certificate's pin: a client given the URL pins it
// with hook.CertPinEnv, whatever name the certificate carries.
func logCertPin(log *slog.Logger, what string, t *tls.Config) {
	if pin := hook.CertPin(config.LeafCertificate(t)); pin != "" {
		log.Info(what+" serves HTTPS", "cert_sha256", pin, "pin_with", hook.CertPinEnv+"="+pin)
	}
}

// consolePush is the console's Web Push sender when console.web_push is
// on (nil otherwise): it signs with console.vapid_private_key, else with
// the key kept in the store (made by the first serve that needs one; on
// Redis every replica then signs with it, in memory it dies with the
// serve, and so do the subscriptions).
func consolePush(ctx context.Context, cfg config.Config, rdb redisconn.Client, log *slog.Logger) (*console.Pusher, error) {
	if !cfg.Console.WebPush {
		return nil, nil
	}
	var store webpush.Store = webpush.NewMemoryStore()
	if rdb != nil {
		store = webpush.NewRedisStore(rdb, rediskey.Default(), time.Now)
	}
	key, err := cfg.Console.VAPIDKey()
	if err != nil {
		return nil, fmt.Errorf("console.vapid_private_key: %w", err)
	}
	if key == nil {
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		raw, err := store.VAPIDKey(kctx, webpush.NewVAPIDKey)
		if err != nil {
			return nil, fmt.Errorf("web push: the VAPID key: %w", err)
		}
		if key, err = webpush.ParseVAPIDKey(raw); err != nil {
			return nil, fmt.Errorf("web push: the kept VAPID key: %w", err)
		}
	}
	if cfg.Console.PushAllowPrivate {
		log.Warn("console.push_allow_private: push endpoints on plain http or private addresses are accepted (tests only)")
	}
	return console.NewPusher(console.PushConfig{Store: store, VAPID: webpush.VAPID{Key: key, Subject: cfg.Console.Subject()},
		AllowPrivate: cfg.Console.PushAllowPrivate, Logger: log.With("component", "webpush")})
}
