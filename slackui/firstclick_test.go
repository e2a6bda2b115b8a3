package slackui

import (
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// A click faster than the poster's save decides an Ask whose record does
// not yet say where its message is. The decided record must say so anyway
// (a long poll reading the decision shows its message_url from it), and it
// is the clicked message, the one Slack signed into the payload.
func TestClickBeforeSaveLeavesTheMessageOnTheRecord(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		ctx := t.Context()
		early, err := w.asks.Create(ctx, bashRequest("run-early", "", "make deploy"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ch, ts, err := w.notifier.Post(ctx, early) // posted; the save has not landed
		if err != nil {
			t.Fatal(err)
		}
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
