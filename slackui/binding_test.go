package slackui

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// clickOn delivers a signed click on the message at (channel, ts) whose
// button value names askID.
func (w *world) clickOn(channel, ts, askID, user, action string) {
	w.t.Helper()
	resp, err := w.fake.PostInteraction(w.t.Context(), w.url, w.fake.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: channel, MessageTS: ts, ActionID: action, Value: askID,
	}))
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("click answered %d", resp.StatusCode)
	}
}

// stillPending fails unless every Ask is pending and no grant was recorded
// in sess.
func (w *world) stillPending(sess string, was ...*waiting) {
	w.t.Helper()
	for _, wa := range was {
		if a, err := w.asks.Get(w.t.Context(), wa.id); err != nil || a.Status != pending.StatusPending {
			w.t.Fatalf("ask %s is %s (%v), want pending", wa.id, a.Status, err)
		}
	}
	if gs, _ := w.grants.List(w.t.Context(), sess); len(gs) != 0 {
		w.t.Fatalf("grants %v recorded", gs)
	}
}

// A click decides only the Ask whose own message it sits on, and only with
// an action that message offered.
func TestClickIsBoundToItsAsksMessage(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		a := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
		b := w.ask(bashRequest("run-b", "sess-b", "make release"))
		noSession := w.ask(bashRequest("run-c", "", "make clean"))
		if m, _ := w.fake.Message(noSession.channel, noSession.ts); blocksHaveButton(m.Blocks, ActionApproveSession) {
			t.Fatal("an Ask without a session offered Approve for session")
		}
		unposted, err := w.asks.Create(t.Context(), bashRequest("run-d", "sess-d", "make purge"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}

		const notOffered = "was not offered for that request on this message"
		tests := []struct {
			name                string
			channel, ts, target string
			action              string
			told                string
		}{
			{"B's id on A's message", a.channel, a.ts, b.id, ActionApprove, notOffered},
			{"B's id on A's message, for session", a.channel, a.ts, b.id, ActionApproveSession, notOffered},
			{"B's id on A's message, deny", a.channel, a.ts, b.id, ActionDeny, notOffered},
			{"B's id on A's message, deny with reason", a.channel, a.ts, b.id, ActionDenyReason, notOffered},
			{"B's id on A's message, show full", a.channel, a.ts, b.id, ActionShowFull, notOffered},
			{"A's id on a message in another channel", "COTHER", a.ts, a.id, ActionApprove, notOffered},
			{"an unposted Ask's id on A's message", a.channel, a.ts, unposted.ID, ActionApprove, notOffered},
			{"for session where it was not offered", noSession.channel, noSession.ts, noSession.id, ActionApproveSession, notOffered},
			{"show full where nothing was cut", a.channel, a.ts, a.id, ActionShowFull, notOffered},
		}
		for n, tt := range tests {
			w.clickOn(tt.channel, tt.ts, tt.target, approverA, tt.action)
			// Each refusal adds one ephemeral (the next click waits for it).
			told, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", n+1, func(c fakeslack.Call) bool { return c.User == approverA })
			if err != nil {
				t.Fatalf("%s: clicker not told: %v", tt.name, err)
			}
			if !strings.Contains(told[n].Text, tt.told) {
				t.Fatalf("%s: told %q, want %q", tt.name, told[n].Text, tt.told)
			}
			w.stillPending("sess-a", a, b, noSession)
			w.stillPending("sess-b")
			if got, _ := w.asks.Get(t.Context(), unposted.ID); got.Status != pending.StatusPending {
				t.Fatalf("%s: unposted ask is %s", tt.name, got.Status)
			}
		}
		if n := len(w.fake.Calls("chat.update")) + len(w.fake.Calls("views.open")); n != 0 {
			t.Fatalf("refused clicks caused %d message updates / modals", n)
		}

		// The genuine clicks still work, the offered session button included.
		w.click(a, approverA, ActionApproveSession)
		w.click(b, approverA, ActionDeny)
		w.click(noSession, approverA, ActionApprove)
		if got := a.result(t); got.Status != pending.Status(pending.ApprovedSession) {
			t.Fatalf("A: %s", got.Status)
		}
		if got := b.result(t); got.Status != pending.Status(pending.Denied) {
			t.Fatalf("B: %s", got.Status)
		}
		if got := noSession.result(t); got.Status != pending.Status(pending.Approved) {
			t.Fatalf("C: %s", got.Status)
		}
	})
}

// A "Deny with reason…" submission is bound like a click: its modal must
// have been opened from the named Ask's own message.
func TestDenyReasonFormIsBoundToItsAsksMessage(t *testing.T) {
	w := newWorld(t, worldOptions{})
	a := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	b := w.ask(bashRequest("run-b", "sess-b", "make release"))
	for _, meta := range []string{
		b.id, // the bare id a modal used to carry
		b.id + " " + a.channel + " " + a.ts,
		b.id + " COTHER " + b.ts,
		b.id + " " + b.channel + " " + b.ts + "x",
	} {
		resp, err := w.fake.PostInteraction(t.Context(), w.url, w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
			User: approverA, CallbackID: CallbackDenyReason, PrivateMetadata: meta,
			Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: "no"}},
		}))
		if err != nil {
			t.Fatal(err)
		}
		var got slack.ViewSubmissionResponse
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got.ResponseAction != slack.RAErrors || !strings.Contains(got.Errors[BlockDenyReason], "does not belong") {
			t.Fatalf("metadata %q: answer %+v, want a refusal in the modal", meta, got)
		}
		w.stillPending("sess-b", a, b)
	}
	// The form opened from B's own message denies B.
	w.click(b, approverA, ActionDenyReason)
	open, err := w.fake.WaitForCall(t.Context(), "views.open", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := w.fake.PostInteraction(t.Context(), w.url, w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: approverA, CallbackID: CallbackDenyReason, PrivateMetadata: open.View.PrivateMetadata,
		Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: "wrong cluster"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := b.result(t); got.Status != pending.Status(pending.Denied) || got.DecisionReason != "wrong cluster" {
		t.Fatalf("B: %s %q", got.Status, got.DecisionReason)
	}
	w.click(a, approverA, ActionDeny)
	a.result(t)
}

// openFullText clicks "Show full" on wa until its modal is open. Slack
// honours a trigger for 3 s, as the fake does; rendering 80 KB pages
// under -race on a loaded machine can take longer, and then the click is
// made again, as a person would.
func (w *world) openFullText(t *testing.T, wa *waiting) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		w.click(wa, approverA, ActionShowFull)
		calls, err := w.fake.WaitForCalls(t.Context(), "views.open", attempt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if calls[attempt-1].OK() {
			return
		}
		if attempt == 5 {
			t.Fatalf("views.open failed %d times, the last: %s", attempt, calls[attempt-1].Error)
		}
	}
}

// A page button inside one Ask's full-text modal cannot page another's.
func TestShowFullPageButtonIsBoundToItsModal(t *testing.T) {
	w := newWorld(t, worldOptions{})
	a := w.ask(bashRequest("run-a", "sess-a", "echo "+strings.Repeat("a ", 40000)))
	b := w.ask(bashRequest("run-b", "sess-b", "echo "+strings.Repeat("b ", 40000)))
	w.openFullText(t, a)
	view := w.fake.Views()[0]
	cb := slack.InteractionCallback{
		Type: slack.InteractionTypeBlockActions,
		// Of askops' own team: the binding refuses it, not the workspace.
		User: slack.User{ID: stranger, TeamID: w.fake.TeamID()},
		View: slack.View{ID: view.ID, CallbackID: view.Request.CallbackID, PrivateMetadata: view.Request.PrivateMetadata},
		ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{
			{ActionID: ActionShowFull, Value: ShowFullValue(b.id, 1)},
		}},
	}
	if _, err := w.inter.Handle(t.Context(), cb); err == nil {
		t.Fatal("a page button naming another Ask was honoured")
	}
	w.inter.Close() // drain: a views.update, had one started, is recorded now
	if n := len(w.fake.Calls("views.update")); n != 0 {
		t.Fatalf("%d views.update calls", n)
	}
}

// Until the store knows where an Ask was posted (a click faster than the
// poster's save, or a save the store failed), the message Slack put in the
// payload stands in for the record: it must carry the very button clicked,
// for that Ask, and the record must still offer it.
func TestClickBeforeItsMessageIsRecorded(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		ctx := t.Context()
		early, ch, ts := w.postUnrecorded() // posted; the store is never told where
		other := w.ask(bashRequest("run-other", "sess-o", "make release"))
		refusals := []struct{ name, channel, ts, action string }{
			{"for session, which its message does not offer", ch, ts, ActionApproveSession},
			{"its id on another Ask's message", other.channel, other.ts, ActionApprove},
		}
		for n, r := range refusals {
			w.clickOn(r.channel, r.ts, early.ID, approverA, r.action)
			told, err := w.fake.WaitForCalls(ctx, "chat.postEphemeral", n+1, func(c fakeslack.Call) bool { return c.User == approverA })
			if err != nil || !strings.Contains(told[n].Text, "was not offered") {
				t.Fatalf("%s: told %v (%v)", r.name, told, err)
			}
			if a, _ := w.asks.Get(ctx, early.ID); a.Status != pending.StatusPending {
				t.Fatalf("%s: the Ask is %s", r.name, a.Status)
			}
		}
		w.clickOn(ch, ts, early.ID, approverA, ActionApprove)
		if a, err := w.asks.Get(ctx, early.ID); err != nil || a.Status != pending.Status(pending.Approved) {
			t.Fatalf("the click on its own unrecorded message gave %s (%v)", a.Status, err)
		}
		w.click(other, approverA, ActionDeny)
		other.result(t)
	})
}
