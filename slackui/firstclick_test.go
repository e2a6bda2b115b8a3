package slackui

import (
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// postUnrecorded creates an Ask and posts its message without telling the
// store where it went, as when a click beats the poster's save: it returns
// the Ask and the message's channel and ts.
func (w *world) postUnrecorded() (early pending.Ask, channel, ts string) {
	w.t.Helper()
	ctx := w.t.Context()
	early, err := w.asks.Create(ctx, bashRequest("run-early", "", "make deploy"), time.Minute)
	if err != nil {
		w.t.Fatal(err)
	}
	channel, ts, err = w.notifier.Post(ctx, early)
	if err != nil {
		w.t.Fatal(err)
	}
	return early, channel, ts
}

// A click faster than the poster's save decides an Ask whose record does
// not yet say where its message is. The decided record must say so anyway
// (a long poll reading the decision shows its message_url from it), and it
// is the clicked message, the one Slack signed into the payload.
func TestClickBeforeSaveLeavesTheMessageOnTheRecord(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		ctx := t.Context()
		early, ch, ts := w.postUnrecorded() // posted; the save has not landed
		w.clickOn(ch, ts, early.ID, approverA, ActionApprove)
		a, err := w.asks.Get(ctx, early.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != pending.Status(pending.Approved) || a.Channel != ch || a.MessageTS != ts {
			t.Errorf("decided record: %s at %q/%q, want approved at %q/%q", a.Status, a.Channel, a.MessageTS, ch, ts)
		}
	})
}
