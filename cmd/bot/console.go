package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/config"
	"github.com/askops/askops/console"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/preflight"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
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

// localDeps is what the routes mounted beside the console use: the
// approval round trip (the console is its only notifier), the grants the
// policy consults, the rules, and the local token written to the endpoint
// file.
type localDeps struct {
	approver *meteredApprover
	asks     pending.Store
	grants   grants.Store
	cfg      config.Config
	token    string
	log      *slog.Logger
}

// localAPI is the gateway's Ask API on the console's listener, for
// `bot ask` with no config: it reads this serve's URL and token from the
// endpoint file (see writeLocalEndpoint) and asks through POST /v1/asks.
// Only the local token is accepted, with scope ask. The caller closes the
// returned service.
func localAPI(d localDeps) (map[string]http.Handler, *gateway.Service, error) {
	engine, err := policy.New(policy.Config{Rules: d.cfg.Policy.Rules, Mode: policy.ModeAsk, Grants: d.grants, Logger: d.log.With("component", "policy")})
	if err != nil {
		return nil, nil, err
	}
	asks, ok := d.asks.(gateway.Asks)
	if !ok {
		return nil, nil, errors.New("the ask store cannot be watched (long polls need its Watch)")
	}
	svc, err := gateway.New(gateway.Config{
		Asks:       asks,
		Approver:   meteredStarter{core: d.approver.next, metered: d.approver},
		Policy:     grantsOnly{engine},
		MaxTimeout: d.cfg.Approvals.Timeout.D(),
		Logger:     d.log.With("component", "gateway"),
	})
	if err != nil {
		return nil, nil, err
	}
	tokens, err := gateway.NewTokens([]gateway.TokenConfig{{Name: "local", Value: d.token, Scopes: []string{string(gateway.ScopeAsk)}}})
	if err != nil {
		svc.Close()
		return nil, nil, err
	}
	return map[string]http.Handler{"/v1/": gateway.NewAPI(svc, tokens, d.log.With("component", "api")).Handler()}, svc, nil
}

// grantsOnly is the policy of `bot ask`: a script asks because it wants a
// human, so only a grant (or a deny rule) answers without one; what the
// rules or the tool's class would allow is asked all the same, as
// `bot ask -config` does.
type grantsOnly struct{ engine *policy.Engine }

func (g grantsOnly) Evaluate(ctx context.Context, c policy.Call) policy.Verdict {
	v := g.engine.Evaluate(ctx, c)
	if v.Decision == policy.Allow && v.Grant == "" {
		v.Decision, v.Reason = policy.Ask, "a script asked for a human (bot ask)"
	}
	return v
}

// serveLocal is `bot serve` without Slack: an in-memory store (or
// redis.url's), policy mode ask, and the console on console.listen, whose
// sign-in link it prints. Runs are off: nothing here starts one, and no
// model is needed.
func serveLocal(ctx context.Context, env *environment, cfg config.Config) int {
	log := newLogger(cfg.Log, env.stderr)
	now := time.Now
	var (
		asks pending.Store
		gs   grants.Store
	)
	if cfg.Redis.URL == "" {
		asks = pending.NewMemoryStore(pending.Options{Now: now, Logger: log.With("component", "pending")})
		gs = grants.NewMemoryStore(grants.Options{Now: now, Logger: log.With("component", "grants")})
	} else {
		client, err := openRedis(cfg.Redis)
		if err != nil {
			log.Error("cannot start", "err", fmt.Errorf("redis.url: %w", err))
			return exitFailed
		}
		defer client.Close()
		acks, _ := cfg.Redis.ReplicaAcksOption() // validated
		rs, err := pending.NewRedisStore(ctx, client, pending.Options{Now: now, Logger: log.With("component", "pending"),
			ReplicaAcks: acks, ReplicaTimeout: cfg.Redis.ReplicaTimeout.D()})
		if err != nil {
			log.Error("cannot start", "err", fmt.Errorf("redis.url: open the ask store at %s: %w", cfg.Redis.Addr(), err))
			return exitFailed
		}
		asks, gs = rs, grants.NewRedisStore(client, grants.Options{Now: now, Logger: log.With("component", "grants")})
	}
	defer asks.Close()
	defer gs.Close()

	live := console.NewLive()
	scopeFor := approval.DefaultScopeFor
	core, err := approval.New(approval.Config{
		Asks: asks, Grants: gs, Notifiers: []approval.Notifier{live},
		Timeout: cfg.Approvals.Timeout.D(), SessionTTL: cfg.Approvals.SessionTTL.D(), ScopeFor: scopeFor,
		Logger: log.With("component", "approver"),
	})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	token := randomToken()
	routes, api, err := localAPI(localDeps{approver: &meteredApprover{next: core, metrics: NewMetrics(), log: log},
		asks: asks, grants: gs, cfg: cfg, token: token, log: log})
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	defer api.Close()
	srv, err := startConsole(ctx, env, cfg, log, asks, gs, live, nil, routes)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	endpoint, err := writeLocalEndpoint(env.getenv, srv.base, token)
	if err != nil {
		log.Warn("could not write the local endpoint file; `bot ask` without a config will not find this serve", "err", err)
	} else {
		defer os.Remove(endpoint)
	}

	sweepCtx, stopSweep := context.WithCancel(ctx)
	var sweeper sync.WaitGroup
	sweeper.Go(func() {
		slackui.RunSweeper(sweepCtx, asks, live, cfg.Approvals.SweepInterval.D(), now, log.With("component", "sweeper"))
	})
	log.Info("askops serving: the local console only (no Slack configured)", "version", version, "listen", srv.base,
		"store", map[bool]string{true: "memory", false: "redis " + cfg.Redis.Addr()}[cfg.Redis.URL == ""],
		"policy_mode", cfg.Policy.Mode)
	log.Info("agent runs are off without Slack; `bot run` needs openai.model (and openai.api_key for OpenAI) in a config")

	<-ctx.Done()
	api.Stop() // waiting bot asks answer (cancelled) before the listener closes
	srv.stop()
	stopSweep()
	sweeper.Wait()
	log.Info("askops stopped")
	return exitOK
}

// consoleServer is the console's HTTP server.
type consoleServer struct {
	base string // http://host:port, as bound
	stop func()
}

// startConsole serves the console (and extra routes) on console.listen and
// prints its sign-in link to stdout.
func startConsole(ctx context.Context, env *environment, cfg config.Config, log *slog.Logger,
	asks pending.Store, gs grants.Store, live *console.Live, messages []console.MessageUpdater, extra map[string]http.Handler) (*consoleServer, error) {
	c, err := console.New(console.Config{
		Asks: asks, Grants: gs, Live: live, Messages: messages,
		ScopeText: approval.ScopeText(approval.DefaultScopeFor),
		User:      cfg.ConsoleUser(env.getenv),
		Logger:    log.With("component", "console"),
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Console.Listen)
	if err != nil {
		return nil, fmt.Errorf("console.listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", c.Handler())
	for pattern, h := range extra {
		mux.Handle(pattern, h)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("console server stopped", "err", err)
		}
	}()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.stdout, "askops console: sign in at %s\n", c.SignInLink(base))
	return &consoleServer{base: base, stop: func() {
		_ = c.Close() // ends the event streams first: Shutdown waits for them
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpDrainTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}}, nil
}

// randomToken is 256 bits from crypto/rand, hex.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return hex.EncodeToString(b[:])
}

// localEndpoint is the file a local serve writes so `bot ask` with no
// config can reach it: its URL and the bearer token its Ask API takes.
type localEndpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// localEndpointPath is $ASKOPS_LOCAL_ENDPOINT, else
// $XDG_RUNTIME_DIR/askops/local.json, else ~/.cache/askops/local.json.
func localEndpointPath(getenv func(string) string) (string, error) {
	if p := getenv("ASKOPS_LOCAL_ENDPOINT"); p != "" {
		return p, nil
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "askops", "local.json"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "askops", "local.json"), nil
	}
	return "", errors.New("neither ASKOPS_LOCAL_ENDPOINT, XDG_RUNTIME_DIR nor HOME is set")
}

// writeLocalEndpoint writes the endpoint file, readable by its owner only.
func writeLocalEndpoint(getenv func(string) string, url, token string) (string, error) {
	p, err := localEndpointPath(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	b, _ := json.Marshal(localEndpoint{URL: url, Token: token})
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an existing file's mode
		return "", err
	}
	return p, os.Rename(tmp, p)
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
	srv, err := startConsole(ctx, env, a.cfg, a.log, a.asks, a.grants, live, []console.MessageUpdater{a.notifier}, nil)
	if err != nil {
		return nil, err
	}
	return srv.stop, nil
}

// localChecks replace check-config's Slack and model checks when there is
// no slack section: serve then needs neither.
func localChecks(cfg config.Config) []func(context.Context) preflight.Result {
	return []func(context.Context) preflight.Result{
		func(context.Context) preflight.Result {
			return preflight.Result{Name: "slack", Key: "slack", Detail: "not configured: serve runs the local console alone on " + cfg.Console.Listen}
		},
		func(context.Context) preflight.Result {
			return preflight.Result{Name: "model", Key: "openai.model", Detail: "not checked: without Slack serve starts no runs (bot run needs openai.model)"}
		},
	}
}

// expiredUpdaters brings every channel in step with the Asks a sweep
// expired (their waiters are gone, so nobody else does).
type expiredUpdaters []slackui.ExpiredUpdater

func (us expiredUpdaters) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	for _, u := range us {
		if u != nil {
			u.UpdateExpired(ctx, asks)
		}
	}
}

// consoleExpired is the console's ExpiredUpdater when it runs beside Slack,
// else nil.
func consoleExpired(cfg config.Config, live *console.Live) slackui.ExpiredUpdater {
	if !cfg.Console.Enabled {
		return nil
	}
	return live
}
