package slackui

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// Front is how Slack's traffic reaches this process: on http.listen the
// process's HTTP routes (Routes, cmd/bot's one list: Slack's endpoints in
// http mode, and always health, readiness and metrics) and, in socket
// mode, a Socket Mode connection.
type Front struct {
	Mode   string // "socket" or "http"
	Listen string // host:port
	// TLS, when set, makes Listen serve HTTPS (http.tls_cert, tls_key).
	TLS           *tls.Config
	SigningSecret string
	Client        *slack.Client // Socket Mode connects with it

	// Interaction handles clicks and modal submissions; SlashCommand and
	// Event are chat-ops' (nil in run and ask, which only take clicks).
	Interaction  func(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error)
	SlashCommand func(ctx context.Context, cmd slack.SlashCommand) any
	Event        func(ctx context.Context, ev slackevents.EventsAPIEvent)

	// Routes is every HTTP route served on Listen, pattern to handler;
	// SlackRoutes are Slack's part of them.
	Routes map[string]http.Handler
	// Health is the Socket Mode connection's state; Serve keeps it, and
	// the process's readiness reports it.
	Health *SocketHealth

	// DrainTimeout bounds how long in-flight requests get at shutdown.
	DrainTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// SlackRoutes are Slack's HTTP endpoints, signed: clicks and modal
// submissions, slash commands and events, handled by f's Interaction,
// SlashCommand and Event.
func (f Front) SlackRoutes() map[string]http.Handler {
	// Each refused request is logged with its reason (never its body), so a
	// forged or stale callback leaves a trace.
	signed := func(next http.Handler) http.Handler {
		return VerifiedLogged(f.SigningSecret, f.Now, f.Logger, next)
	}
	return map[string]http.Handler{
		"POST /slack/interactions": signed(InteractionsHandler(f.Interaction, f.Logger)),
		"POST /slack/commands":     signed(SlashCommandsHandler(f.SlashCommand, f.Logger)),
		"POST /slack/events":       signed(EventsHandler(f.Event)),
	}
}

// listen serves Routes on f.Listen until ctx ends, then drains in-flight
// requests within DrainTimeout. ready (if not nil) gets the bound address
// once the port is open.
func (f Front) listen(ctx context.Context, ready func(addr string)) error {
	l, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return fmt.Errorf("http.listen: %w", err)
	}
	scheme := "http"
	if f.TLS != nil {
		l, scheme = tls.NewListener(l, f.TLS), "https"
	}
	mux := http.NewServeMux()
	for pattern, h := range f.Routes {
		mux.Handle(pattern, h)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// Slack's bodies are small (capped at 1 MiB) and Slack gives up after
		// 3 s; a client that trickles a body or idles on a keep-alive must
		// not hold a connection for ever.
		ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute,
		ErrorLog:    slog.NewLogLogger(f.Logger.Handler(), slog.LevelWarn),
	}
	f.Logger.Info("listening", "addr", l.Addr().String(), "scheme", scheme, "mode", f.Mode)
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
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.DrainTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		f.Logger.Warn("http drain cut short", "err", err)
		_ = srv.Close()
	}
	<-served
	return nil
}

// Serve takes Slack's traffic until ctx ends: the HTTP routes always
// (health, metrics, and Slack's endpoints in http mode) and, in socket mode,
// a Socket Mode connection. It returns when both have stopped.
//
// withHTTP false (run and ask in socket mode) opens no port at all: Socket
// Mode carries the clicks, and ready is called at once.
func (f Front) Serve(ctx context.Context, withHTTP bool, ready func(addr string)) error {
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
	if withHTTP || f.Mode != "socket" {
		wg.Go(func() { fail(f.listen(ctx, ready)) })
	} else if ready != nil {
		ready("")
	}
	if f.Mode == "socket" {
		client := socketmode.New(f.Client)
		wg.Go(func() {
			err := RunSocketMode(ctx, client, SocketHandlers{
				Interaction:  f.Interaction,
				SlashCommand: f.SlashCommand,
				Event:        f.Event,
				Logger:       f.Logger.With("component", "socketmode"),
				Health:       f.Health,
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

// TakeClicks serves Slack's interactions (no port in socket mode) until
// the returned stop is called: for run and ask when this process is the
// only one that can take the click (the in-memory store).
func (f Front) TakeClicks(ctx context.Context) (stop func(), err error) {
	lctx, cancel := context.WithCancel(ctx)
	bound := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- f.Serve(lctx, false, func(string) { close(bound) })
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
		if f.Mode == "socket" {
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
			f.Logger.Warn("slack listener stopped with an error", "err", err)
		}
	}, nil
}

// NewClient is the Slack Web API client for the bot token (and the app
// token Socket Mode needs), through hc; apiURL "" is Slack's own.
func NewClient(botToken, appToken, apiURL string, hc *http.Client) *slack.Client {
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if apiURL != "" {
		// slack-go wants a trailing slash.
		opts = append(opts, slack.OptionAPIURL(strings.TrimRight(apiURL, "/")+"/"))
	}
	if appToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(appToken))
	}
	return slack.New(botToken, opts...)
}
