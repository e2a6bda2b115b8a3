package console

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server is a Console on its own listener, with other routes mounted beside
// it (the local Ask API of a serve without Slack).
type Server struct {
	console *Console
	http    *http.Server
	base    string
	served  chan struct{}
}

// Serve serves c, and extra (pattern -> handler) beside it, on ln until
// Stop. Serve owns ln from here.
func Serve(c *Console, ln net.Listener, extra map[string]http.Handler, log *slog.Logger) *Server {
	mux := http.NewServeMux()
	mux.Handle("/", c.Handler())
	for pattern, h := range extra {
		mux.Handle(pattern, h)
	}
	s := &Server{
		console: c,
		http:    &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		base:    "http://" + ln.Addr().String(),
		served:  make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("console server stopped", "err", err)
		}
	}()
	return s
}

// Base is the server's URL as bound: http://host:port.
func (s *Server) Base() string { return s.base }

// SignInLink is the one-time link that signs a browser in.
func (s *Server) SignInLink() string { return s.console.SignInLink(s.base) }

// Stop closes the console, then drains in-flight requests until ctx ends,
// and returns once the server has stopped.
func (s *Server) Stop(ctx context.Context) {
	_ = s.console.Close() // ends the event streams first: Shutdown waits for them
	_ = s.http.Shutdown(ctx)
	<-s.served
}
