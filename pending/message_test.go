package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// testSaveMessage: a poster that saves its message after a fast decider
// (on the other instance) ended the Ask is told so, and the decided record
// still keeps where its message is; a save before the decision says the
// Ask was open, and the decision then carries the message.
func testSaveMessage(t *testing.T, newStore newStoreFunc) {
	a, b := newStore(t, Options{})
	ctx := t.Context()

	fast, err := a.Create(ctx, sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decide(ctx, fast.ID, Approved, "U0FAST", ""); err != nil {
		t.Fatal(err)
	}
	ended, err := a.SaveMessage(ctx, fast.ID, "C1", "1700000000.000200")
	if err != nil || !ended {
		t.Errorf("save after the decision: ended %v, err %v; want ended", ended, err)
	}
	got, err := b.Get(ctx, fast.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != Status(Approved) || got.DecidedBy != "U0FAST" || got.Channel != "C1" || got.MessageTS != "1700000000.000200" {
		t.Errorf("decided record after a late save: status %s by %q at %q/%q", got.Status, got.DecidedBy, got.Channel, got.MessageTS)
	}

	slow, err := a.Create(ctx, sampleRequest(2), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ended, err := a.SaveMessage(ctx, slow.ID, "C1", "1700000000.000300"); err != nil || ended {
		t.Errorf("save before the decision: ended %v, err %v; want open", ended, err)
	}
	d, err := b.Decide(ctx, slow.ID, Denied, "U0SLOW", "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Channel != "C1" || d.MessageTS != "1700000000.000300" {
		t.Errorf("the decision does not carry the saved message: %q/%q", d.Channel, d.MessageTS)
	}

	if _, err := a.SaveMessage(ctx, recordid.New(), "C1", "1.2"); ErrorCode(err) != CodeNotFound {
		t.Errorf("save on an unknown ask: %v, want not found", err)
	}
}
