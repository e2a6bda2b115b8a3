package slackui

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// TestEscalationKilledMidDMIsTakenOverOnce over one real Redis shared by
// two replicas: the store's scripts keep the reservations.
func TestEscalationKilledMidDMOverRedis(t *testing.T) {
	srv := redistest.Start(t)
	for _, at := range []stepPoint{beforeReserve, beforePost, beforeConfirm, afterConfirm} {
		fake := fakeslack.New(t, fakeslack.Options{SigningSecret: "test-secret", UserGroups: map[string][]string{oncallGroup: {oncallA, oncallB}}})
		api := fakeAPI(fake)
		store, _ := redisAsks(t, srv.URL(), pending.Options{})
		cfg := EscalationConfig{
			Levels: []EscalationLevel{{After: time.Millisecond, Groups: []string{oncallGroup}, DM: true}},
			Steps:  store, Groups: api, DM: api, History: api, Names: api, Lease: 300 * time.Millisecond,
		}
		a1, _ := NewEscalation(cfg)
		a2, _ := NewEscalation(cfg)
		n := NewNotifier(api, NotifierConfig{ApprovalChannel: approvals, ScopeText: approval.ScopeText(approval.DefaultScopeFor), PerChannelInterval: time.Millisecond, Followups: a1})
		ask, err := store.Create(t.Context(), bashRequest("run-k", "sess-k", "make deploy"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ch, ts, err := n.Post(t.Context(), ask)
		if err != nil {
			t.Fatal(err)
		}
		_ = store.SetMessage(t.Context(), ask.ID, ch, ts)
		a1.at = func(_ context.Context, p stepPoint, _ string) error {
			if p == at {
				return errors.New("killed")
			}
			return nil
		}
		testwait.For(t, "the first replica's attempt", func() bool {
			k, _ := a1.RunDue(t.Context(), n)
			_ = k
			return len(fake.Calls("conversations.open")) >= 2
		})
		testwait.For(t, "the second replica's takeover", func() bool { k, _ := a2.RunDue(t.Context(), n); return k == 1 })
		for _, u := range []string{oncallA, oncallB} {
			c := 0
			for _, m := range fake.Calls("chat.postMessage") {
				if m.OK() && m.Channel == "D"+u[1:] {
					c++
				}
			}
			if c != 1 {
				t.Errorf("point %d: %d DMs to %s, want 1", at, c, u)
			}
		}
		got, _ := store.Get(t.Context(), ask.ID)
		for _, u := range []string{oncallA, oncallB} {
			if d, _ := got.Directs.For(u); d.TS == "" || !got.Copies.Has(d.Channel, d.TS) {
				t.Errorf("point %d: %s's DM not recorded: %+v %q", at, u, d, got.Copies)
			}
		}
	}
}
