package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// testCastOn is the one-round-trip click (BoundCaster), run with the rest
// of testStore on every store and topology: a ballot whose binding holds
// is an ordinary Cast; one whose binding does not hold writes nothing at
// all, so the caller's full check decides what the click does.
func testCastOn(t *testing.T, newStore newStoreFunc) {
	own := Binding{Channel: "C_ASKS", MessageTS: "1700000000.000200"}
	approve := Ballot{Outcome: Approved, By: "U_ANA"}

	t.Run("Unbound", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask := postedAsk(t, a)
		if err := a.(Steps).AddCopy(t.Context(), ask.ID, "D_DM", "1700000000.000300"); err != nil {
			t.Fatal(err)
		}
		for name, on := range map[string]Binding{
			"another message":      {Channel: "C_ASKS", MessageTS: "1700000000.000999"},
			"another channel":      {Channel: "C_OTHER", MessageTS: own.MessageTS},
			"a recorded copy":      {Channel: "D_DM", MessageTS: "1700000000.000300"},
			"no message":           {},
			"the starter, refused": {Channel: own.Channel, MessageTS: own.MessageTS, NotStartedBy: "U0STARTER"},
		} {
			got, bound, err := b.(BoundCaster).CastOn(t.Context(), ask.ID, approve, on)
			if bound || err != nil || got.ID != "" {
				t.Errorf("%s: CastOn = %+v, bound %v, %v; want unbound, nothing returned", name, got, bound, err)
			}
		}
		if _, bound, _ := b.(BoundCaster).CastOn(t.Context(), recordid.New(), approve, own); bound {
			t.Error("CastOn an unknown Ask: bound; want unbound (the full way says not found)")
		}
		got, err := b.Get(t.Context(), ask.ID)
		if err != nil || got.Status != StatusPending || got.Votes != "" {
			t.Fatalf("after unbound ballots the Ask is %+v, %v; want untouched and pending", got, err)
		}
		if evs, err := a.(AuditLog).AuditSince(t.Context(), time.Time{}); err != nil || len(evs) != 1 {
			t.Errorf("audit after unbound ballots: %d events, %v; want only the asked one", len(evs), err)
		}
	})

	t.Run("Bound", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask := postedAsk(t, a)
		done := waitInBackground(t, a, ask.ID)
		on := own
		on.NotStartedBy = "U_ANA" // not the starter: binds
		got, bound, err := b.(BoundCaster).CastOn(t.Context(), ask.ID, approve, on)
		if !bound || err != nil || Outcome(got.Status) != Approved || got.DecidedBy != "U_ANA" || got.StartedBy != "U0STARTER" {
			t.Fatalf("CastOn = %+v, bound %v, %v; want approved by U_ANA", got, bound, err)
		}
		if w := testwait.ReceiveWithin(t, done, 5*time.Second, "the waiter to wake"); w != got {
			t.Errorf("waiter got %+v, want %+v", w, got)
		}
		// Bound to a decided Ask: the ordinary conflict, first decision kept.
		_, bound, err = a.(BoundCaster).CastOn(t.Context(), ask.ID, Ballot{Outcome: Denied, By: "U_BO"}, own)
		if first, ok := ConflictAsk(err); !bound || !ok || first.DecidedBy != "U_ANA" {
			t.Errorf("CastOn a decided Ask: bound %v, %v; want a conflict naming U_ANA", bound, err)
		}
		assertAuditPairs(t, a, 1)
	})

	t.Run("NoStarter", func(t *testing.T) { testCastOnNoStarter(t, newStore) })
}

// postedAsk creates an Ask of sampleRequest(1) on s and records its
// message as posted at C_ASKS/1700000000.000200: the Ask a click on that
// message (a Binding to it) is cast on.
func postedAsk(t *testing.T, s Store) Ask {
	t.Helper()
	a, err := s.Create(t.Context(), sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMessage(t.Context(), a.ID, "C_ASKS", "1700000000.000200"); err != nil {
		t.Fatal(err)
	}
	return a
}

// A record written before the starter had its own field binds no ballot
// that must not be the starter's: the vote script cannot see who started
// the run, so the caller's full check (which can) must judge it.
func TestCastOnOldRecordWithoutStarterField(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{ReplicaAcks: -1})
	a := postedAsk(t, s)
	if err := s.client.HDel(t.Context(), s.keys.ask(a.ID), fieldStartedBy).Err(); err != nil {
		t.Fatal(err)
	}
	on := Binding{Channel: "C_ASKS", MessageTS: "1700000000.000200", NotStartedBy: "U_ANA"}
	if _, bound, err := s.CastOn(t.Context(), a.ID, Ballot{Outcome: Approved, By: "U_ANA"}, on); bound || err != nil {
		t.Errorf("CastOn an old record: bound %v, %v; want unbound", bound, err)
	}
	on.NotStartedBy = ""
	if got, bound, err := s.CastOn(t.Context(), a.ID, Ballot{Outcome: Approved, By: "U_ANA"}, on); !bound || err != nil || Outcome(got.Status) != Approved {
		t.Errorf("CastOn an old record with no starter to rule out: %+v, bound %v, %v; want approved", got, bound, err)
	}
}

// An Ask nobody started (an API or hook Ask) binds a ballot that must not
// be the starter's: nobody is.
func testCastOnNoStarter(t *testing.T, newStore newStoreFunc) {
	a, b := newStore(t, Options{})
	req := sampleRequest(1)
	req.StartedBy = ""
	ask, err := a.Create(t.Context(), req, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetMessage(t.Context(), ask.ID, "C_ASKS", "1700000000.000200"); err != nil {
		t.Fatal(err)
	}
	on := Binding{Channel: "C_ASKS", MessageTS: "1700000000.000200", NotStartedBy: "U_ANA"}
	got, bound, err := b.(BoundCaster).CastOn(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_ANA"}, on)
	if !bound || err != nil || Outcome(got.Status) != Approved || got.StartedBy != "" {
		t.Errorf("CastOn an Ask nobody started: %+v, bound %v, %v; want approved", got, bound, err)
	}
}

// The request's JSON keeps the starter beside its own field: a replica from
// before the field reads it only there, and must still refuse a run's
// starter approving it during a rolling upgrade.
func TestStarterStaysInTheRequest(t *testing.T) {
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{ReplicaAcks: -1})
	a, err := s.Create(t.Context(), sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.client.HGetAll(t.Context(), s.keys.ask(a.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if h[fieldStartedBy] != "U0STARTER" {
		t.Errorf("field %s = %q, want U0STARTER", fieldStartedBy, h[fieldStartedBy])
	}
	delete(h, fieldStartedBy) // as an older replica sees it
	old, err := (&requestCodec{}).decodeAsk("get", a.ID, h)
	if err != nil || old.StartedBy != "U0STARTER" {
		t.Errorf("the record without its starter field: StartedBy %q, %v; want U0STARTER from the request", old.StartedBy, err)
	}
}
