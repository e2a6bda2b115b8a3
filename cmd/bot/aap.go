package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/askops/askops/aap"
	"github.com/askops/askops/config"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/aapcall"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/pending"
)

// newAAP is the AAP provider when aap.enabled (nil otherwise): its
// Handler's paths are under /v1/ (serve mounts it at /aap/), and its Stop
// ends the long polls before the HTTP server drains.
func newAAP(cfg config.Config, gw *gateway.Service, asks pending.Store, client redisconn.Client, now func() time.Time, log *slog.Logger) (*aap.Server, error) {
	if !cfg.AAP.Enabled {
		return nil, nil
	}
	watchable, ok := asks.(aap.Asks)
	if !ok {
		return nil, errors.New("aap: the ask store cannot be watched (long polls need its Watch)")
	}
	var store aap.Store = aap.NewMemoryStore(now)
	if client != nil {
		store = aap.NewRedisStore(client, rediskey.Default())
	}
	provs := make([]aap.Provisioner, len(cfg.AAP.Provisioners))
	for i, p := range cfg.AAP.Provisioners {
		provs[i] = aap.Provisioner{Name: p.Name, Token: p.Token().Reveal()}
	}
	srv, err := aap.New(aap.Config{Asker: aapcall.Asker{Gateway: gw, Shells: cfg.AAP.Shells()}, Asks: watchable, Store: store, Provisioners: provs,
		Window: cfg.AAP.Window(), MaxTimeout: cfg.Approvals.Timeout.D(), Now: now, Logger: log.With("component", "aap"), AllowPrivateWebhooks: cfg.AAP.AllowPrivateWebhooks})
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// aapHandler is p's handler, nil without a provider.
func aapHandler(p *aap.Server) http.Handler {
	if p == nil {
		return nil
	}
	return p.Handler()
}

// aapServer is the console-only serve's listener on http.listen when
// aap.enabled: the AAP provider at /aap/ and the Ask API (api.tokens) at
// /v1/, beside the console's own port.
type aapServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// startAAPServer listens on addr (over TLS with t) and serves routes
// until stop.
func startAAPServer(addr string, t *tls.Config, routes map[string]http.Handler, log *slog.Logger) (*aapServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if t != nil {
		ln, scheme = tls.NewListener(ln, t), "https"
	}
	mux := http.NewServeMux()
	for p, h := range routes {
		mux.Handle(p, h)
	}
	s := &aapServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }() // per-listener work, drained by stop
	log.Info("serving the AAP provider and the Ask API", "listen", ln.Addr().String(), "scheme", scheme)
	return s, nil
}

// stop drains the listener (long polls answer first: the caller stops
// the gateway before).
func (s *aapServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// serveLocalAAP starts the console-only serve's http.listen: the AAP
// provider and the Ask API (api.tokens) on their own gateway Service
// over the serve's store and round trip. stop ends its waits (they
// answer cancelled), drains the listener and closes the Service.
func serveLocalAAP(cfg config.Config, st storeSet, bg *loops, asks gateway.Asks, approver gateway.Approver, decider gateway.Decider, now func() time.Time, log *slog.Logger) (stop func(), err error) {
	engine, err := policyEngine(cfg, st, log)
	if err != nil {
		return nil, err
	}
	gw, err := gateway.New(gateway.Config{Asks: asks, Approver: approver, Policy: engine, Decider: decider, MaxTimeout: cfg.Approvals.Timeout.D(),
		Now: now, Logger: log.With("component", "gateway")})
	if err != nil {
		return nil, err
	}
	tokens, err := gatewayTokens(cfg.API)
	if err != nil {
		gw.Close()
		return nil, err
	}
	provider, err := newAAP(cfg, gw, st.Asks, st.Redis, now, log)
	if err != nil {
		gw.Close()
		return nil, err
	}
	routes := httpRoutes{aap: aapHandler(provider), api: gateway.NewAPI(gw, tokens, log.With("component", "api")).Handler()}
	list := map[string]http.Handler{}
	for p, h := range routes.list() {
		if p == "/v1/" || p == "/aap/" || p == "/aap" {
			list[p] = h
		}
	}
	t, err := cfg.HTTP.TLS()
	if err != nil {
		gw.Close()
		return nil, err
	}
	logCertPin(log, "http.listen", t)
	srv, err := startAAPServer(cfg.HTTP.Listen, t, list, log)
	if err != nil {
		gw.Close()
		return nil, err
	}
	bg.start("aap deliveries", provider.Run) // notifications of requests that ended (async mode)
	return func() { provider.Stop(); gw.Stop(); srv.stop(); gw.Close() }, nil
}
