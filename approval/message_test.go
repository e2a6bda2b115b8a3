package approval

import (
	"context"
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// A decision that lands between the notifier's post and the save of where
// it posted (a fast click on another replica, a console or API decision)
// was taken on a record without the message, so its decider could not
// update it. The waiter then updates it, and the decided record keeps the
// message's address.
func TestDecisionBeforeMessageSavedStillUpdatesIt(t *testing.T) {
	s := newSetup(t)
	slack := newNotifier("CAPPROVALS")
	slack.post = func(ctx context.Context, a pending.Ask) (string, string, error) {
		// The message exists; someone decides before Post has returned.
		if _, err := s.asks.Decide(ctx, a.ID, pending.Approved, "console:dana", ""); err != nil {
			t.Error(err)
		}
		return "CAPPROVALS", "1700000000.000100", nil
	}
	c := s.core(t, nil, slack)
	final := c.Approve(t.Context(), bashRequest("r1", "s1", "make deploy"))
	if final.Status != pending.Status(pending.Approved) || final.DecidedBy != "console:dana" {
		t.Fatalf("Approve = %s by %q", final.Status, final.DecidedBy)
	}
	ups := slack.updated()
	if len(ups) != 1 || ups[0].Channel != "CAPPROVALS" || ups[0].MessageTS != "1700000000.000100" || ups[0].Status != pending.Status(pending.Approved) {
		t.Errorf("updates of the message decided before it was saved: %+v, want one, approved, at CAPPROVALS/1700000000.000100", ups)
	}
	stored, err := s.asks.Get(t.Context(), final.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Channel != "CAPPROVALS" || stored.MessageTS != "1700000000.000100" {
		t.Errorf("the decided record lost its message: %q/%q", stored.Channel, stored.MessageTS)
	}
}

// savesSignalled tells the test when the waiter saved the message.
type savesSignalled struct {
	*pending.MemoryStore
	saved chan struct{}
}

func (s savesSignalled) SaveMessage(ctx context.Context, id, channel, ts string) (bool, error) {
	defer close(s.saved)
	return s.MemoryStore.SaveMessage(ctx, id, channel, ts)
}

func (s savesSignalled) waitSaved(t *testing.T) {
	t.Helper()
	select {
	case <-s.saved:
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter never saved where the ask was posted")
	}
}

// A decision after the save is the decider's to show (it read the message
// from the record): the waiter leaves the message alone.
func TestDecisionAfterMessageSavedLeftToDecider(t *testing.T) {
	s := newSetup(t)
	slack := newNotifier("CAPPROVALS")
	store := savesSignalled{s.asks, make(chan struct{})}
	c := s.core(t, store, slack)
	done := approveAsync(t.Context(), c, bashRequest("r1", "s1", "make deploy"))
	a := slack.waitPosted(t)
	store.waitSaved(t)
	d, err := s.asks.Decide(t.Context(), a.ID, pending.Denied, "U0ANA", "")
	if err != nil || d.MessageTS == "" {
		t.Fatalf("decide: %v, message %q", err, d.MessageTS)
	}
	if final := result(t, done); final.Status != pending.Status(pending.Denied) {
		t.Fatalf("Approve = %s", final.Status)
	}
	if ups := slack.updated(); len(ups) != 0 {
		t.Errorf("the waiter updated a message its decider knew of: %+v", ups)
	}
}
