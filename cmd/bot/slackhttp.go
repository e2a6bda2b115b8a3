package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/slackui"
)

// slackHandlers are the chat-ops entry points beyond button clicks; nil
// fields are not served (run and ask only take clicks).
type slackHandlers struct {
	// Interaction handles clicks and modal submissions; nil means
	// slackui's Interactions (the Ask buttons) alone.
	Interaction  func(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error)
	SlashCommand func(ctx context.Context, cmd slack.SlashCommand) any
	Event        func(ctx context.Context, ev slackevents.EventsAPIEvent)
	// API is the gateway's Ask API and hook endpoint (serve only).
	API *gateway.API
}

// routes lists every HTTP route of the bot in one place.
func (a *app) routes(h slackHandlers) http.Handler {
	secret := a.cfg.Slack.SigningSecret.Reveal()
	// Each refused request is logged with its reason (never its body), so a
	// forged or stale callback leaves a trace.
	signed := func(next http.Handler) http.Handler { return slackui.VerifiedLogged(secret, a.now, a.log, next) }

	mux := http.NewServeMux()
	mux.Handle("GET /healthz", handleHealthz())
	mux.Handle("GET /readyz", handleReadyz(a.ready))
	mux.Handle("GET /metrics", a.metrics.Handler())
	mux.Handle("POST /slack/interactions", signed(slackui.InteractionsHandler(h.interaction(a), a.log)))
	mux.Handle("POST /slack/commands", signed(slackui.SlashCommandsHandler(h.SlashCommand, a.log)))
	mux.Handle("POST /slack/events", signed(slackui.EventsHandler(h.Event)))
	if h.API != nil {
		h.API.Routes(mux) // /v1/…
	}
	return mux
}

func (h slackHandlers) interaction(a *app) func(context.Context, slack.InteractionCallback) (*slack.ViewSubmissionResponse, error) {
	if h.Interaction != nil {
		return h.Interaction
	}
	return a.interactions.Handle
}

func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
}

func handleReadyz(r *readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if problems := r.check(ctx); len(problems) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, strings.Join(problems, "\n")+"\n")
			return
		}
		io.WriteString(w, "ok\n")
	})
}

// listen serves the routes on http.listen until ctx ends, then drains
// in-flight requests within httpDrainTimeout. ready (if not nil) gets the
// bound address once the port is open.
func (a *app) listen(ctx context.Context, handler http.Handler, ready func(addr string)) error {
	l, err := net.Listen("tcp", a.cfg.HTTP.Listen)
	if err != nil {
		return fmt.Errorf("http.listen: %w", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// Slack's bodies are small (capped at 1 MiB) and Slack gives up after
		// 3 s; a client that trickles a body or idles on a keep-alive must
		// not hold a connection for ever.
		ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	a.log.Info("listening", "addr", l.Addr().String(), "mode", a.cfg.Slack.Mode)
	if ready != nil {
		ready(l.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpDrainTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn("http drain cut short", "err", err)
		_ = srv.Close()
	}
	<-served
	return nil
}

// serveSlack takes Slack's traffic until ctx ends: the HTTP routes always
// (health, metrics, and Slack's endpoints in http mode) and, in socket mode,
// a Socket Mode connection. It returns when both have stopped.
//
// withHTTP false (run and ask in socket mode) opens no port at all: Socket
// Mode carries the clicks, and ready is called at once.
func (a *app) serveSlack(ctx context.Context, h slackHandlers, withHTTP bool, ready func(addr string)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	fail := func(err error) {
		if err == nil || errors.Is(err, context.Canceled) {
			return
		}
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		cancel(err)
	}
	health := &slackui.SocketHealth{}
	if a.cfg.Slack.Mode == "socket" && a.ready != nil {
		a.ready.socket = health.Err
	}
	if withHTTP || a.cfg.Slack.Mode != "socket" {
		wg.Go(func() { fail(a.listen(ctx, a.routes(h), ready)) })
	} else if ready != nil {
		ready("")
	}
	if a.cfg.Slack.Mode == "socket" {
		client := socketmode.New(a.slack)
		wg.Go(func() {
			err := slackui.RunSocketMode(ctx, client, slackui.SocketHandlers{
				Interaction:  h.interaction(a),
				SlashCommand: h.SlashCommand,
				Event:        h.Event,
				Logger:       a.log.With("component", "socketmode"),
				Health:       health,
			})
			if ctx.Err() == nil {
				fail(fmt.Errorf("socket mode: %w", err))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// socketAckGrace bounds how long run and ask keep Socket Mode open after
// their last Ask ended.
const socketAckGrace = 500 * time.Millisecond

// takeClicks makes this process answerable when it is the only one that
// can be (the in-memory store): it serves Slack's interactions until the
// returned stop is called. With Redis any serve replica takes the clicks and
// the decision reaches this process through the store, so it does nothing.
func (a *app) takeClicks(ctx context.Context) (stop func(), err error) {
	if a.shared() {
		return func() {}, nil
	}
	lctx, cancel := context.WithCancel(ctx)
	bound := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.serveSlack(lctx, slackHandlers{}, false, func(string) { close(bound) })
	}()
	select {
	case <-bound:
	case err := <-done:
		cancel()
		if err == nil {
			err = context.Cause(ctx)
		}
		return nil, err
	}
	return func() {
		if a.cfg.Slack.Mode == "socket" {
			// slack-go queues Socket Mode acknowledgements and writes them
			// from a goroutine that stops with the connection: give the
			// last click's ack a moment to leave, or Slack tells the
			// clicker the app did not respond (the decision stands).
			select {
			case <-time.After(socketAckGrace):
			case <-ctx.Done():
			}
		}
		cancel()
		if err := <-done; err != nil {
			a.log.Warn("slack listener stopped with an error", "err", err)
		}
	}, nil
}
