package slackui

import (
	"context"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// A run stopped while chat.postMessage is in flight: Slack has made the
// message by then, so the Ask ends cancelled and that message loses its
// buttons instead of looking live forever.
func TestRunStoppedWhilePostingUpdatesTheMessage(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		w.fake.SetDelay("chat.postMessage", 300*time.Millisecond)
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan pending.Ask, 1)
		go func() { done <- w.approver.Approve(ctx, bashRequest("run-stop", "sess-1", "make deploy")) }()
		post, err := w.fake.WaitForCall(t.Context(), "chat.postMessage", nil)
		if err != nil {
			t.Fatal(err)
		}
		stop() // the message exists; its answer is still on the way
		var got pending.Ask
		select {
		case got = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Approve did not return")
		}
		if got.Status != pending.Status(pending.Cancelled) {
			t.Fatalf("got %s, want cancelled", got.Status)
		}
		msgs := w.fake.Messages()
		if len(msgs) != 1 || msgs[0].Channel != post.Channel {
			t.Fatalf("messages %+v, want the one posted", msgs)
		}
		wctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := w.fake.WaitForMessage(wctx, msgs[0].Channel, msgs[0].TS, func(m fakeslack.Message) bool {
			return m.Updates > 0 && !blocksHaveButton(m.Blocks, ActionApprove) && !blocksHaveButton(m.Blocks, ActionDeny)
		}); err != nil {
			t.Fatalf("the posted message kept its buttons: %v", err)
		}
		if a, err := w.asks.Get(t.Context(), got.ID); err != nil || a.Status != pending.Status(pending.Cancelled) || a.MessageTS != msgs[0].TS {
			t.Fatalf("stored ask %s at %q (%v)", a.Status, a.MessageTS, err)
		}
	})
}

// A post that does not answer is not waited for until the Ask's deadline
// once the run has stopped: it gets UpdateTimeout, then the Ask ends
// cancelled.
func TestRunStoppedWhilePostingHangsNoLongerThanUpdateTimeout(t *testing.T) {
	w := newWorld(t, worldOptions{timeout: time.Hour})
	approver, err := NewApprover(ApproverConfig{
		Asks: w.asks, Grants: w.grants, Notifier: w.notifier,
		Timeout: time.Hour, SessionTTL: time.Hour, UpdateTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.fake.SetDelay("chat.postMessage", time.Hour)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan pending.Ask, 1)
	go func() { done <- approver.Approve(ctx, bashRequest("run-hang", "sess-1", "make deploy")) }()
	if _, err := w.fake.WaitForCall(t.Context(), "chat.postMessage", nil); err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case got := <-done:
		if got.Status != pending.Status(pending.Cancelled) {
			t.Fatalf("got %s, want cancelled", got.Status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Approve still waits for a post that does not answer after its run stopped")
	}
}
