package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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
	mux.Handle("POST /slack/commands", signed(handleSlashCommand(h.SlashCommand, a.log)))
	mux.Handle("POST /slack/events", signed(handleEvents(h.Event)))
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

// handleSlashCommand serves POST /slack/commands (already verified): the
// handler's answer is the immediate (ephemeral or in-channel) reply.
func handleSlashCommand(fn func(context.Context, slack.SlashCommand) any, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fn == nil {
			http.Error(w, "slash commands are served by bot serve", http.StatusNotFound)
			return
		}
		cmd, err := slack.SlashCommandParse(r)
		if err != nil {
			http.Error(w, "malformed slash command", http.StatusBadRequest)
			return
		}
		// The reply must leave within Slack's 3 s; the handler is quick and
		// starts anything long (a run) in the background.
		resp := fn(context.WithoutCancel(r.Context()), cmd)
		if resp == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(resp); err != nil {
			log.Warn("slash command reply not sent", "err", err)
		}
	})
}

// eventDedup lets each Events API event through once: Slack redelivers an
// event it thinks failed (X-Slack-Retry-Num), possibly to another replica,
// and a redelivered app_mention must not start a second run. With Redis the
// ids are shared by every replica (SET NX with a TTL); without, they are
// remembered in memory.
type eventDedup struct {
	redis redis.UniversalClient // nil: memory only
	now   func() time.Time
	ttl   time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time
}

func newEventDedup(a *app) *eventDedup {
	return &eventDedup{redis: a.redis, now: a.now, ttl: time.Hour, log: a.log, seen: map[string]time.Time{}}
}

// first reports whether the event id is seen for the first time (within the
// TTL). If Redis cannot say, the event is handled: a lost mention is worse
// than a rare duplicate run, which still asks before anything risky.
func (d *eventDedup) first(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	if d.redis != nil {
		ok, err := d.redis.SetNX(ctx, "askops:event:{"+id+"}", 1, d.ttl).Result()
		if err == nil {
			return ok
		}
		d.log.Warn("event dedup: redis unavailable, using this replica's memory", "event", id, "err", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for k, at := range d.seen {
		if now.Sub(at) > d.ttl {
			delete(d.seen, k)
		}
	}
	if _, dup := d.seen[id]; dup {
		return false
	}
	d.seen[id] = now
	return true
}

// once wraps an event handler so each event id is handled once, whichever
// transport (HTTP or Socket Mode) delivered it.
func (d *eventDedup) once(fn func(context.Context, slackevents.EventsAPIEvent)) func(context.Context, slackevents.EventsAPIEvent) {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, ev slackevents.EventsAPIEvent) {
		var id string
		if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok {
			id = cb.EventID
		}
		if !d.first(ctx, id) {
			d.log.Info("duplicate event delivery ignored", "event", id)
			return
		}
		fn(ctx, ev)
	}
}

// onceCommand wraps a slash command handler so each invocation is handled
// once. A signed request stays valid for five minutes, so a captured
// `/askops run` could be delivered again (to any replica); its trigger_id,
// unique per invocation, makes the second delivery start nothing.
func (d *eventDedup) onceCommand(fn func(context.Context, slack.SlashCommand) any) func(context.Context, slack.SlashCommand) any {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, cmd slack.SlashCommand) any {
		if cmd.TriggerID != "" && !d.first(ctx, "command:"+cmd.TriggerID) {
			d.log.Warn("duplicate slash command delivery ignored", "user", cmd.UserID, "command", cmd.Command)
			return nil
		}
		return fn(ctx, cmd)
	}
}

// handleEvents serves POST /slack/events (already verified): answers the
// URL verification challenge, acknowledges events at once and handles each
// event id once, in the background.
func handleEvents(fn func(context.Context, slackevents.EventsAPIEvent)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		if err != nil {
			http.Error(w, "malformed event", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case slackevents.URLVerification:
			var ch slackevents.ChallengeResponse
			if err := json.Unmarshal(body, &ch); err != nil {
				http.Error(w, "malformed challenge", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, ch.Challenge)
			return
		case slackevents.CallbackEvent:
		default:
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
		if fn != nil {
			go fn(context.WithoutCancel(r.Context()), ev)
		}
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
	dedup := newEventDedup(a)
	h.Event = dedup.once(h.Event)
	h.SlashCommand = dedup.onceCommand(h.SlashCommand)
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
