package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Console on its own listener, serving the routes its caller
// lists (the process's one list, cmd/bot's routes.go), the console's own
// pages among them.
type Server struct {
	console *Console
	http    *http.Server
	base    string
	served  chan struct{}
}

// Routes lists what a Server serves, pattern to handler, given the
// console's own pages (one handler: mount it at "/").
type Routes func(pages http.Handler) map[string]http.Handler

// Pages alone: a console with nothing beside it.
func Pages(pages http.Handler) map[string]http.Handler { return map[string]http.Handler{"/": pages} }

// Listen makes a Console of cfg and serves routes on addr
// (console.listen) until Stop.
func Listen(cfg Config, addr string, routes Routes) (*Server, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("console.listen: %w", err)
	}
	return serve(c, ln, routes), nil
}

// serve serves routes on ln until Stop; it owns ln from here.
func serve(c *Console, ln net.Listener, routes Routes) *Server {
	mux := http.NewServeMux()
	for pattern, h := range routes(c.Handler()) {
		mux.Handle(pattern, h)
	}
	scheme := "http"
	if c.cfg.TLS != nil {
		ln, scheme = tls.NewListener(ln, c.cfg.TLS), "https"
	}
	s := &Server{
		console: c,
		http:    &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		base:    scheme + "://" + ln.Addr().String(),
		served:  make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("console server stopped", "err", err)
		}
	}()
	return s
}

// Base is the server's URL as bound: http://host:port, or https:// with
// Config.TLS.
func (s *Server) Base() string { return s.base }

// TLS is the TLS configuration the server presents, nil over plain
// HTTP: its certificate is what local clients pin (gateway.LocalEndpoint).
func (s *Server) TLS() *tls.Config { return s.console.cfg.TLS }

// SignInLink is the one-time link that signs a browser in.
func (s *Server) SignInLink() string { return s.console.SignInLink(s.base) }

// Stop closes the console, then drains in-flight requests until ctx ends,
// and returns once the server has stopped.
func (s *Server) Stop(ctx context.Context) {
	_ = s.console.Close() // ends the event streams first: Shutdown waits for them
	_ = s.http.Shutdown(ctx)
	<-s.served
}
