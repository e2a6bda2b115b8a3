package fakeslack_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/askops/askops/internal/fakeslack"
)

// socketApp runs a slack-go Socket Mode client against the fake; every
// request it receives is acked once and passed on. It stops with the test.
func socketApp(t *testing.T, fake *fakeslack.Server) <-chan socketmode.Event {
	t.Helper()
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()), slack.OptionAppLevelToken(fake.AppToken()))
	client := socketmode.New(api)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- client.RunContext(ctx) }()
	out := make(chan socketmode.Event, 10)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-client.Events:
				if evt.Request != nil && evt.Request.EnvelopeID != "" {
					if err := client.AckCtx(ctx, evt.Request.EnvelopeID, nil); err != nil {
						return
					}
				}
				switch evt.Type {
				case socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand, socketmode.EventTypeEventsAPI,
					socketmode.EventTypeErrorBadMessage:
					select {
					case out <- evt:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; !errors.Is(err, context.Canceled) {
			t.Errorf("socket mode client stopped with %v", err)
		}
		<-handled
	})
	return out
}

// nextEvent waits a bounded time for the app's next request event and
// fails on a message slack-go could not parse.
func nextEvent(t *testing.T, events <-chan socketmode.Event) socketmode.Event {
	t.Helper()
	select {
	case evt := <-events:
		if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
			t.Fatalf("slack-go could not parse %s: %v", bad.Message, bad.Cause)
		}
		return evt
	case <-time.After(10 * time.Second):
		t.Fatal("no socket mode event within 10s")
	}
	return socketmode.Event{}
}

func TestSocketModeDeliversAndRecordsAcks(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	events := socketApp(t, fake)
	ctx := t.Context()
	if err := fake.WaitForSocket(ctx); err != nil {
		t.Fatal(err)
	}
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("ask", false), slack.MsgOptionBlocks(askBlocks("ask-3")...))
	if err != nil {
		t.Fatal(err)
	}

	click, err := fake.SendInteractive(ctx, fake.BlockActionsPayload(fakeslack.BlockActions{User: "U1", Channel: "C1", MessageTS: ts, ActionID: "askops_deny", Value: "ask-3"}))
	if err != nil {
		t.Fatal(err)
	}
	evt := nextEvent(t, events)
	cb, ok := evt.Data.(slack.InteractionCallback)
	if evt.Type != socketmode.EventTypeInteractive || !ok {
		t.Fatalf("event %s with %T", evt.Type, evt.Data)
	}
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 ||
		cb.ActionCallback.BlockActions[0].ActionID != "askops_deny" || cb.ActionCallback.BlockActions[0].Value != "ask-3" || cb.Container.MessageTs != ts {
		t.Errorf("interaction = %+v", cb)
	}
	if evt.Request.EnvelopeID != click || evt.Request.AcceptsResponsePayload {
		t.Errorf("request = %+v", evt.Request)
	}
	ack, err := fake.WaitForAck(ctx, click)
	if err != nil || ack.EnvelopeID != click {
		t.Fatalf("ack = %+v, %v", ack, err)
	}

	cmdEnv, err := fake.SendSlashCommand(ctx, slack.SlashCommand{Command: "/askops", Text: "pending", UserID: "U1", ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	evt = nextEvent(t, events)
	if cmd, ok := evt.Data.(slack.SlashCommand); evt.Type != socketmode.EventTypeSlashCommand || !ok || cmd.Text != "pending" || cmd.TeamID != fake.TeamID() {
		t.Errorf("slash command event %s = %#v", evt.Type, evt.Data)
	}
	if !evt.Request.AcceptsResponsePayload {
		t.Errorf("slash command envelope does not accept a response payload")
	}

	env, err := fake.EventEnvelope(fake.AppMention("U1", "C1", "<@"+fake.BotUserID()+"> hello", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	eventEnv, err := fake.SendEvent(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	evt = nextEvent(t, events)
	api2, ok := evt.Data.(slackevents.EventsAPIEvent)
	if evt.Type != socketmode.EventTypeEventsAPI || !ok {
		t.Fatalf("events api event %s = %T", evt.Type, evt.Data)
	}
	if m, ok := api2.InnerEvent.Data.(*slackevents.AppMentionEvent); !ok || m.User != "U1" {
		t.Errorf("inner event = %#v", api2.InnerEvent.Data)
	}

	retryEnv, err := fake.SendEventRetry(ctx, env, 1)
	if err != nil {
		t.Fatal(err)
	}
	evt = nextEvent(t, events)
	retried, _ := evt.Data.(slackevents.EventsAPIEvent)
	first, _ := api2.Data.(*slackevents.EventsAPICallbackEvent)
	again, _ := retried.Data.(*slackevents.EventsAPICallbackEvent)
	if evt.Request.EnvelopeID != retryEnv || evt.Request.RetryAttempt != 1 || first == nil || again == nil || again.EventID != first.EventID {
		t.Errorf("redelivery: request %+v, event ids %v / %v", evt.Request, first, again)
	}

	// The acks of the later envelopes came after the click's on the same
	// connection, so a duplicate click ack would be recorded by now.
	for _, id := range []string{cmdEnv, eventEnv, retryEnv} {
		if _, err := fake.WaitForAck(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{click, cmdEnv, eventEnv} {
		if n := fake.AcksFor(id); n != 1 {
			t.Errorf("envelope %s acked %d times, want once", id, n)
		}
	}
	if n := len(fake.Envelopes()); n != 4 {
		t.Errorf("%d envelopes recorded, want 4", n)
	}
}

func TestSocketModeReconnectsAfterDisconnect(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	events := socketApp(t, fake)
	ctx := t.Context()
	if err := fake.WaitForSocket(ctx); err != nil {
		t.Fatal(err)
	}
	fake.DisconnectSockets()
	if _, err := fake.WaitForCalls(ctx, "apps.connections.open", 2, nil); err != nil {
		t.Fatalf("client did not reopen: %v", err)
	}
	if err := fake.WaitForSocket(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := fake.SendInteractive(ctx, fake.BlockActionsPayload(fakeslack.BlockActions{User: "U1", Channel: "C1", MessageTS: "1.000001", ActionID: "x", Value: "y"}))
	if err != nil {
		t.Fatal(err)
	}
	if evt := nextEvent(t, events); evt.Request.EnvelopeID != id {
		t.Errorf("after reconnect got envelope %q, want %q", evt.Request.EnvelopeID, id)
	}
	if _, err := fake.WaitForAck(ctx, id); err != nil {
		t.Fatal(err)
	}
}

func TestCloseStopsSocketsWhileClientRuns(t *testing.T) {
	// Close with a live connection must not hang; the client then keeps
	// retrying until its own context ends (socketApp's cleanup).
	fake, err := fakeslack.Start(fakeslack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	socketApp(t, fake)
	if err := fake.WaitForSocket(t.Context()); err != nil {
		t.Fatal(err)
	}
	fake.Close()
	if n := fake.SocketConnections(); n != 0 {
		t.Errorf("%d connections after Close", n)
	}
}
