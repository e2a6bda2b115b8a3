package slackui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// startSocketMode runs RunSocketMode against w's fake Slack until the test
// ends, and returns once the connection is up.
func startSocketMode(t *testing.T, w *world, h SocketHandlers) {
	t.Helper()
	api := slack.New(w.fake.BotToken(), slack.OptionAPIURL(w.fake.APIURL()), slack.OptionAppLevelToken(w.fake.AppToken()))
	client := socketmode.New(api, socketmode.OptionLog(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunSocketMode(ctx, client, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("RunSocketMode returned %v, want context.Canceled", err)
		}
	})
	if err := w.fake.WaitForSocket(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestSocketModeClickEndToEnd(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		startSocketMode(t, w, SocketHandlers{Interaction: w.inter.Handle})
		wa := w.ask(bashRequest("run-socket", "sess-1", "make deploy"))
		env, err := w.fake.SendInteractive(t.Context(), w.fake.BlockActionsPayload(fakeslack.BlockActions{
			User: approverA, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id,
		}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.fake.WaitForAck(t.Context(), env); err != nil {
			t.Fatal(err)
		}
		got := wa.result(t)
		if got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverA {
			t.Fatalf("got %s by %q", got.Status, got.DecidedBy)
		}
		w.messageEnded(wa)
		if n := w.fake.AcksFor(env); n != 1 {
			t.Fatalf("envelope acked %d times, want exactly once", n)
		}
	})
}

// A modal submission's ack carries its answer: an empty reason is refused
// in the modal, a real one denies.
func TestSocketModeDenyReasonSubmission(t *testing.T) {
	w := newWorld(t, worldOptions{})
	startSocketMode(t, w, SocketHandlers{Interaction: w.inter.Handle})
	wa := w.ask(bashRequest("run-socket-reason", "sess-1", "make deploy"))
	submit := func(reason string) fakeslack.Ack {
		env, err := w.fake.SendInteractive(t.Context(), w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
			User: approverA, CallbackID: CallbackDenyReason, PrivateMetadata: wa.reasonForm(),
			Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: reason}},
		}))
		if err != nil {
			t.Fatal(err)
		}
		ack, err := w.fake.WaitForAck(t.Context(), env)
		if err != nil {
			t.Fatal(err)
		}
		return ack
	}
	var refused slack.ViewSubmissionResponse
	if err := json.Unmarshal(submit("").Payload, &refused); err != nil || refused.ResponseAction != slack.RAErrors {
		t.Fatalf("empty reason acked with %+v (%v), want response_action errors", refused, err)
	}
	if ack := submit("wrong cluster"); len(ack.Payload) != 0 && string(ack.Payload) != "null" {
		t.Fatalf("accepted submission acked with payload %s, want none (modal closes)", ack.Payload)
	}
	if got := wa.result(t); got.Status != pending.Status(pending.Denied) || got.DecisionReason != "wrong cluster" {
		t.Fatalf("got %s %q", got.Status, got.DecisionReason)
	}
}

func TestSocketModeSlashCommandsAndEvents(t *testing.T) {
	w := newWorld(t, worldOptions{})
	var events atomic.Int32
	startSocketMode(t, w, SocketHandlers{
		SlashCommand: func(ctx context.Context, cmd slack.SlashCommand) any {
			return map[string]string{"text": "pending: 0 (" + cmd.Text + ")"}
		},
		Event: func(ctx context.Context, ev slackevents.EventsAPIEvent) {
			if ev.InnerEvent.Type == "app_mention" {
				events.Add(1)
			}
		},
	})
	env, err := w.fake.SendSlashCommand(t.Context(), slack.SlashCommand{Command: "/askops", Text: "list", UserID: approverA, ChannelID: approvals})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := w.fake.WaitForAck(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack.Payload), "pending: 0 (list)") {
		t.Fatalf("slash command acked with %s", ack.Payload)
	}
	inner, _ := json.Marshal(w.fake.AppMention(approverA, approvals, "<@UBOTASKOPS> hi", "", ""))
	evEnv, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": w.fake.TeamID(), "event_id": "Ev1", "event": json.RawMessage(inner),
	})
	evID, err := w.fake.SendEvent(t.Context(), evEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.fake.WaitForAck(t.Context(), evID); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the event handler", func() bool { return events.Load() == 1 })
	for _, id := range []string{env, evID} {
		if n := w.fake.AcksFor(id); n != 1 {
			t.Fatalf("envelope %s acked %d times", id, n)
		}
	}
}

// Inside the full-text modal, a page button pages the same modal
// (views.update) instead of opening another.
func TestShowFullPagesInsideModal(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-pages", "sess-1", "echo "+strings.Repeat("y ", 40000)))
	w.openFullText(t, wa)
	views := w.fake.Views()
	if len(views) != 1 {
		t.Fatalf("%d views", len(views))
	}
	cb := slack.InteractionCallback{
		Type: slack.InteractionTypeBlockActions,
		User: slack.User{ID: approverA, TeamID: w.fake.TeamID()},
		View: slack.View{ID: views[0].ID, CallbackID: views[0].Request.CallbackID, PrivateMetadata: views[0].Request.PrivateMetadata},
		ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{
			{ActionID: ActionShowFull, Value: ShowFullValue(wa.id, 1)},
		}},
	}
	if _, err := w.inter.Handle(t.Context(), cb); err != nil {
		t.Fatal(err)
	}
	upd, err := w.fake.WaitForCall(t.Context(), "views.update", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !upd.OK() || upd.View == nil || upd.View.CallbackID != CallbackShowFull {
		t.Fatalf("views.update answered %q with view %+v", upd.Error, upd.View)
	}
	if n := len(w.fake.Views()); n != 1 {
		t.Fatalf("paging opened %d more modals", n-1)
	}
	w.click(wa, approverA, ActionApprove)
	wa.result(t)
}

// An envelope slack-go cannot parse is acknowledged once (so Slack stops
// redelivering it) and acted on by nobody.
func TestSocketModeUnparseableEnvelopeAckedOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	var events atomic.Int32
	startSocketMode(t, w, SocketHandlers{Event: func(context.Context, slackevents.EventsAPIEvent) { events.Add(1) }})
	env, err := w.fake.SendSocketEnvelope(t.Context(), fakeslack.EnvelopeEventsAPI, json.RawMessage(`{"type":"event_callback","event":"not an object"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.fake.WaitForAck(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	if n := w.fake.AcksFor(env); n != 1 || events.Load() != 0 {
		t.Fatalf("acks %d, events handled %d", n, events.Load())
	}
}

// Offline (Slack unreachable), Socket Mode keeps retrying; after a few
// failed attempts in a row one ERROR line says what to check, and Health
// reports the connection down for readiness.
func TestSocketModeOfflineSaysWhatToCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/api/"
	ln.Close() // nothing listens: every attempt fails to connect

	api := slack.New("xoxb-offline", slack.OptionAPIURL(closed), slack.OptionAppLevelToken("xapp-offline"))
	client := socketmode.New(api, socketmode.OptionLog(log.New(io.Discard, "", 0)))
	var logs lockedLog
	health := &SocketHealth{}
	if health.Err() != nil {
		t.Fatal("a fresh health reports an error before any attempt")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- RunSocketMode(ctx, client, SocketHandlers{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Health: health})
	}()
	for !strings.Contains(logs.String(), "level=ERROR") {
		select {
		case <-ctx.Done():
			t.Fatalf("no ERROR after 30 s offline:\n%s", logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	<-done
	out := logs.String()
	if n := strings.Count(out, "level=ERROR"); n != 1 || !strings.Contains(out, "SLACK_APP_TOKEN") || !strings.Contains(out, "slack.com") {
		t.Errorf("want one ERROR naming what to check, got %d:\n%s", n, out)
	}
	if err := health.Err(); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("Health.Err() = %v, want the connection reported down", err)
	}
}

// lockedLog is a log sink the handler goroutines share.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
