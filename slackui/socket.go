package slackui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// SocketHandlers are what Socket Mode dispatches to. A nil handler leaves
// that kind of envelope acknowledged and otherwise ignored.
type SocketHandlers struct {
	// Interaction handles a click or modal submission (Interactions.Handle).
	// It must be quick: its response travels in the acknowledgement.
	Interaction func(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error)
	// SlashCommand answers a slash command; a non-nil result is the
	// acknowledgement's payload (the immediate reply).
	SlashCommand func(ctx context.Context, cmd slack.SlashCommand) any
	// Event handles an Events API event; it runs after the acknowledgement.
	Event  func(ctx context.Context, ev slackevents.EventsAPIEvent)
	Logger *slog.Logger
	// Health, when set, records the connection's state for readiness.
	Health *SocketHealth
}

// SocketHealth is the Socket Mode connection's state: whether it is
// connected and, if not, how many attempts in a row failed and why. While
// it is not connected no click reaches this process, so readiness says so.
type SocketHealth struct {
	mu        sync.Mutex
	connected bool
	failures  int
	lastErr   string
}

// socketFailuresLogged is how many failed connection attempts in a row are
// WARN lines before one ERROR says what to check: slack-go retries forever
// with backoff, and an offline machine or a wrong token must not look like
// transient trouble.
const socketFailuresLogged = 3

// Err is nil while connected (or before the first attempt ended), else
// what the last failed attempt said.
func (h *SocketHealth) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.connected || h.failures == 0 {
		return nil
	}
	return fmt.Errorf("socket mode is not connected (%d failed attempts in a row; last: %s)", h.failures, h.lastErr)
}

func (h *SocketHealth) up() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.connected, h.failures, h.lastErr = true, 0, ""
}

// failed records a failed attempt and returns how many failed in a row.
func (h *SocketHealth) failed(why string) int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.connected = false
	h.failures++
	h.lastErr = why
	return h.failures
}

// socketAcker is the part of socketmode.Client that acknowledges envelopes.
type socketAcker interface {
	AckCtx(ctx context.Context, envelopeID string, payload any) error
}

// RunSocketMode connects client to Slack over Socket Mode and serves
// envelopes until ctx ends. Each envelope is acknowledged exactly once:
// events and clicks at once, before any work; modal submissions and slash
// commands with their (quick) handler's answer. Handlers run concurrently; RunSocketMode
// returns only after they all have.
func RunSocketMode(ctx context.Context, client *socketmode.Client, h SocketHandlers) error {
	h.Logger = cmp.Or(h.Logger, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var handlers sync.WaitGroup
	defer handlers.Wait()

	runErr := make(chan error, 1)
	go func() { runErr <- client.RunContext(ctx) }()

	for {
		select {
		case <-ctx.Done():
			<-runErr
			return context.Cause(ctx)
		case err := <-runErr:
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err == nil {
				err = errors.New("slackui: socket mode client stopped")
			}
			return err
		case evt := <-client.Events:
			dispatchSocketEvent(ctx, client, h, &handlers, evt)
		}
	}
}

func dispatchSocketEvent(ctx context.Context, ack socketAcker, h SocketHandlers, handlers *sync.WaitGroup, evt socketmode.Event) {
	log := h.Logger
	switch evt.Type {
	case socketmode.EventTypeConnecting, socketmode.EventTypeHello:
		log.Debug("socket mode", "event", evt.Type)
		return
	case socketmode.EventTypeConnected:
		h.Health.up()
		log.Info("socket mode connected")
		return
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		why := string(evt.Type)
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			why = ce.ErrorObj.Error()
		}
		if n := h.Health.failed(why); n == socketFailuresLogged || evt.Type == socketmode.EventTypeInvalidAuth {
			log.Error("socket mode cannot connect to Slack; no click reaches this process until it does",
				"attempts", n, "err", why,
				"check", "network access to slack.com and wss-primary.slack.com (a proxy?), and that SLACK_APP_TOKEN is the app-level token (xapp-…) with connections:write of this app")
			return
		}
		log.Warn("socket mode trouble", "event", evt.Type, "err", why)
		return
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		log.Warn("socket mode trouble", "event", evt.Type, "data", evt.Data)
		return
	case socketmode.EventTypeErrorBadMessage:
		// An envelope we cannot parse will not parse on redelivery either:
		// acknowledge it (nothing acts on it) so Slack stops resending.
		bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
		if bad == nil {
			return
		}
		var env struct {
			EnvelopeID string `json:"envelope_id"`
		}
		_ = json.Unmarshal(bad.Message, &env)
		log.Warn("socket mode: unparseable envelope acknowledged and dropped", "envelope", env.EnvelopeID, "err", bad.Cause)
		if env.EnvelopeID != "" {
			if err := ack.AckCtx(ctx, env.EnvelopeID, nil); err != nil {
				log.Warn("socket mode ack failed", "envelope", env.EnvelopeID, "err", err)
			}
		}
		return
	case socketmode.EventTypeDisconnect:
		log.Info("socket mode: Slack asked us to reconnect")
		return
	}
	if evt.Request == nil || evt.Request.EnvelopeID == "" {
		return
	}
	envelope := evt.Request.EnvelopeID
	ackOnce := func(payload any) {
		if err := ack.AckCtx(ctx, envelope, payload); err != nil {
			log.Warn("socket mode ack failed", "envelope", envelope, "err", err)
		}
	}
	switch evt.Type {
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if !ok || h.Interaction == nil {
			ackOnce(nil)
			return
		}
		if cb.Type != slack.InteractionTypeViewSubmission {
			// Only a modal submission can answer in its ack; everything
			// else is acknowledged before any work.
			ackOnce(nil)
			handlers.Go(func() {
				if _, err := h.Interaction(ctx, cb); err != nil {
					log.Warn("interaction not handled", "type", cb.Type, "user", cb.User.ID, "err", err)
				}
			})
			return
		}
		handlers.Go(func() {
			resp, err := h.Interaction(ctx, cb)
			if err != nil {
				log.Warn("interaction not handled", "type", cb.Type, "user", cb.User.ID, "err", err)
			}
			if resp != nil {
				ackOnce(resp)
				return
			}
			ackOnce(nil)
		})
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok || h.SlashCommand == nil {
			ackOnce(nil)
			return
		}
		handlers.Go(func() { ackOnce(h.SlashCommand(ctx, cmd)) })
	case socketmode.EventTypeEventsAPI:
		ackOnce(nil)
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || h.Event == nil {
			return
		}
		handlers.Go(func() { h.Event(ctx, ev) })
	default:
		ackOnce(nil)
	}
}
