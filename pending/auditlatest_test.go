package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// testAuditLatest: the newest events of a kind, newest first, read from
// the end of the trail, across pages when the kind is rare.
func testAuditLatest(t *testing.T, newStore newStoreFunc) {
	a, b := newStore(t, Options{})
	ctx := t.Context()
	first, err := a.AppendEvent(ctx, Event{Kind: EventRefused, AskID: "x", By: "U0SELF", Reason: "self-approval"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 100 { // 200 events after the refusal: several pages from the end
		ask, err := a.Create(ctx, sampleRequest(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Decide(ctx, ask.ID, Denied, "U0ANA", ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ask.ID)
	}
	got, err := b.AuditLatest(ctx, EventDecided, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].AskID != ids[99] || got[1].AskID != ids[98] || got[2].AskID != ids[97] {
		t.Errorf("newest 3 decided: %+v", got)
	}
	for _, e := range got {
		if e.Kind != EventDecided {
			t.Errorf("kind %s among decided events", e.Kind)
		}
	}
	rare, err := b.AuditLatest(ctx, EventRefused, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rare) != 1 || rare[0].Seq != first.Seq || rare[0].By != "U0SELF" {
		t.Errorf("the one refusal, 200 events back: %+v", rare)
	}
	all, err := b.AuditLatest(ctx, "", 2)
	if err != nil || len(all) != 2 || all[0].Kind != EventDecided || all[1].Kind != EventAsked || all[0].Seq != all[1].Seq+1 {
		t.Errorf("newest 2 of any kind: %+v, %v", all, err)
	}
	if none, err := b.AuditLatest(ctx, EventDecided, 0); err != nil || len(none) != 0 {
		t.Errorf("n 0: %v, %v", none, err)
	}
}

// BenchmarkConsoleHistoryRead compares the console's history read on a
// trail of 20,000 events (10,000 decided Asks): the whole trail, as it was
// read before, and the newest 30 decisions from the end.
func BenchmarkConsoleHistoryRead(b *testing.B) {
	srv := redistest.Start(b)
	s := newRedisStore(b, srv.URL(), Options{})
	ctx := b.Context()
	for i := range 10000 {
		a, err := s.Create(ctx, sampleRequest(i), time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Decide(ctx, a.ID, Denied, "U0ANA", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("whole-trail", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Audit(ctx, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("latest-30-decided", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.AuditLatest(ctx, EventDecided, 30); err != nil {
				b.Fatal(err)
			}
		}
	})
}
