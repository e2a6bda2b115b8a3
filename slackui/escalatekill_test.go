package slackui

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// A replica dies at any point of an escalation's DMs (its step abandoned
// there, as by kill -9); a second replica takes the step over once the
// lease lapses. Each target gets exactly one DM, and a click on it by its
// recipient decides.
func TestEscalationKilledMidDMIsTakenOverOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   stepPoint
	}{
		{"before the reservation", beforeReserve},
		{"after the reservation, before the post", beforePost},
		{"after the post, before the confirmation", beforeConfirm},
		{"after the confirmation", afterConfirm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newEscalationWorld(t)
			ctx := t.Context()
			a := w.post(15 * time.Minute)
			other, err := NewEscalation(w.esc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.esc.at = func(_ context.Context, p stepPoint, _ string) error {
				if p == tc.at {
					return errors.New("killed")
				}
				return nil
			}
			w.clock.Advance(10 * time.Minute)
			w.runDue(1)                      // the reminder; the escalation is abandoned
			w.clock.Advance(3 * time.Minute) // the lease (2m) lapses
			if n, err := other.RunDue(ctx, w.notifier); n != 1 || err != nil {
				t.Fatalf("the other replica: %d, %v", n, err)
			}
			for _, u := range []string{oncallA, oncallB} {
				n := 0
				for _, c := range w.fake.Calls("chat.postMessage") {
					if c.OK() && c.Channel == "D"+u[1:] {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d DMs to %s, want 1", n, u)
				}
			}
			got, _ := w.store.Get(ctx, a.ID)
			dm, _ := got.Directs.For(oncallA)
			if dm.TS == "" || !got.Copies.Has(dm.Channel, dm.TS) {
				t.Fatalf("%s's DM is not recorded: %+v, copies %q", oncallA, dm, got.Copies)
			}
			w.click(oncallA, dm.Channel, dm.TS, a.ID, ActionApprove)
			testwait.For(t, "the decision", func() bool {
				got, _ := w.store.Get(ctx, a.ID)
				return got.Status == pending.Status(pending.Approved)
			})
		})
	}
}

// The recipient clicks their DM the instant it is out, before its sender
// recorded it: the click is theirs and decides.
func TestDMClickTheInstantAfterThePost(t *testing.T) {
	w := newEscalationWorld(t)
	a := w.post(15 * time.Minute)
	w.esc.at = func(_ context.Context, p stepPoint, user string) error {
		if p == beforeConfirm && user == oncallA {
			for _, c := range w.fake.Calls("chat.postMessage") {
				if c.OK() && c.Channel == "D"+oncallA[1:] {
					w.click(oncallA, c.Channel, c.TS, a.ID, ActionApprove)
				}
			}
		}
		return nil
	}
	w.clock.Advance(10 * time.Minute)
	w.runDue(2)
	w.wantApprovedBy(a, oncallA, "the quick click")
}
