package pending

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// testVotes is the quorum and time-boxed grant part of the contract, run
// with the rest of testStore on every store and topology.
func testVotes(t *testing.T, newStore newStoreFunc) {
	quorum := func(n int) Request {
		r := sampleRequest(1)
		r.Approvals = n
		return r
	}
	// A quorum counts people, the fewest the votes could be: a Slack click
	// is its user (Ballot.Person); an API token or console user is a
	// person only where Options.People names them; every vote nobody can
	// name could be one person, who could be any Slack voter.
	t.Run("CountsPeopleNotIdentities", func(t *testing.T) {
		slack := func(u string) Ballot { return Ballot{Outcome: Approved, By: u, Person: u} }
		other := func(by string) Ballot { return Ballot{Outcome: Approved, By: by} }
		tests := []struct {
			name    string
			people  map[string]string
			votes   []Ballot
			repeat  int // index of the vote refused as a repeat; -1 none
			counted int
			status  Status
		}{
			{"a Slack user and an unnamed token are maybe one person", nil,
				[]Ballot{slack("U_ANA"), other("ci-token")}, -1, 1, StatusPending},
			{"an unnamed token and then a Slack user", nil,
				[]Ballot{other("ci-token"), slack("U_ANA")}, -1, 1, StatusPending},
			{"a Slack user and the console's unnamed user", nil,
				[]Ballot{slack("U_ANA"), other("console:dana")}, -1, 1, StatusPending},
			{"two unnamed tokens may be one holder's", nil,
				[]Ballot{other("ci-token"), other("dana-token")}, -1, 1, StatusPending},
			{"a token named as the Slack voter is a repeat", map[string]string{"ci-token": "U_ANA"},
				[]Ballot{slack("U_ANA"), other("ci-token")}, 1, 1, StatusPending},
			{"the Slack click after its own console vote is a repeat", map[string]string{"console:dana": "U_DANA"},
				[]Ballot{other("console:dana"), slack("U_DANA")}, 1, 1, StatusPending},
			{"a token named as another person counts", map[string]string{"ci-token": "U_BO"},
				[]Ballot{slack("U_ANA"), other("ci-token")}, -1, 2, Status(Approved)},
			{"named console user and named token", map[string]string{"console:dana": "U_DANA", "bo-token": "U_BO"},
				[]Ballot{other("console:dana"), other("bo-token")}, -1, 2, Status(Approved)},
			{"two Slack users beside an unnamed token", nil,
				[]Ballot{other("ci-token"), slack("U_ANA"), slack("U_BO")}, -1, 2, Status(Approved)},
		}
		for _, tc := range tests {
			a, b := newStore(t, Options{People: tc.people})
			ask, err := a.Create(t.Context(), quorum(2), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var got Ask
			for i, v := range tc.votes {
				st := []Store{a, b}[i%2]
				cast, err := st.Cast(t.Context(), ask.ID, v)
				if _, rep := RepeatVote(err); rep != (i == tc.repeat) {
					t.Fatalf("%s: vote %d by %s: %v; repeat wanted %v", tc.name, i, v.By, err, i == tc.repeat)
				} else if err != nil && !rep {
					t.Fatalf("%s: vote %d by %s: %v", tc.name, i, v.By, err)
				}
				if err == nil {
					got = cast
				}
			}
			if got, _ := b.Get(t.Context(), ask.ID); got.Status != tc.status || got.Counted() != tc.counted {
				t.Errorf("%s: %s with %d people counted (%s); want %s with %d", tc.name, got.Status, got.Counted(), got.Tally(), tc.status, tc.counted)
			}
			if tc.status == StatusPending && got.Votes.Count() > got.Counted() && !strings.Contains(got.Tally(), UncountedNote) {
				t.Errorf("%s: the tally lists more than it counts and does not say why: %q", tc.name, got.Tally())
			}
		}
	})
	t.Run("TwoDistinctApprovers", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, err := a.Create(t.Context(), quorum(2), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ask.Needed() != 2 {
			t.Fatalf("created ask needs %d approvals, want 2", ask.Needed())
		}
		got, err := b.Get(t.Context(), ask.ID)
		if err != nil || got != ask {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, ask)
		}
		first, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_ANA", Person: "U_ANA"})
		if err != nil || first.Status != StatusPending || first.Votes != "U_ANA" {
			t.Fatalf("first approval: %+v, %v; want still pending with U_ANA counted", first, err)
		}
		if got := first.Tally(); got != "1 of 2 approvals (U_ANA)" {
			t.Errorf("Tally = %q", got)
		}
		// Decide is the same ballot: the same person again counts nothing.
		_, err = b.Decide(t.Context(), ask.ID, Approved, "U_ANA", "")
		if rep, ok := RepeatVote(err); !ok || rep.Votes != "U_ANA" {
			t.Fatalf("second approval by U_ANA: %v; want a repeat-vote conflict", err)
		}
		if _, err := b.Cast(t.Context(), ask.ID, Ballot{Outcome: ApprovedSession, By: "U_BO"}); ErrorCode(err) != CodeInvalid {
			t.Fatalf("approve for session on a quorum ask: %v; want invalid", err)
		}
		done := waitInBackground(t, a, ask.ID)
		won, err := b.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_BO", Person: "U_BO"})
		if err != nil || Outcome(won.Status) != Approved || won.DecidedBy != "U_BO" || won.Votes != "U_ANA\nU_BO" {
			t.Fatalf("second distinct approval: %+v, %v; want approved by U_BO after U_ANA", won, err)
		}
		if w := testwait.ReceiveWithin(t, done, 5*time.Second, "the waiter to wake on the quorum"); w != won {
			t.Errorf("waiter got %+v, want %+v", w, won)
		}
		if _, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_CY", Person: "U_CY"}); ErrorCode(err) != CodeConflict {
			t.Errorf("a third approval: %v; want conflict", err)
		} else if _, rep := RepeatVote(err); rep {
			t.Error("a vote after the decision is reported as a repeat, not as already decided")
		}
		assertAuditPairs(t, a, 1)
		assertVotes(t, a, ask.ID, "U_ANA 1 of 2 approvals", "U_BO 2 of 2 approvals")
		// Every vote is a link of the audit chain.
		if rep, err := a.(AuditLog).VerifyAudit(t.Context()); err != nil || rep.Break != nil || rep.Events != 4 {
			t.Errorf("audit chain after the votes: %+v, %v; want 4 events, no break", rep, err)
		}
	})

	t.Run("OneDenyEndsIt", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), quorum(3), time.Minute)
		if _, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_ANA", Person: "U_ANA"}); err != nil {
			t.Fatal(err)
		}
		d, err := b.Decide(t.Context(), ask.ID, Denied, "U_BO", "not on a Friday")
		if err != nil || Outcome(d.Status) != Denied || d.DecidedBy != "U_BO" || d.DecisionReason != "not on a Friday" {
			t.Fatalf("deny: %+v, %v", d, err)
		}
		if d.Tally() != "1 of 3 approvals (U_ANA)" {
			t.Errorf("after the deny Tally = %q", d.Tally())
		}
		assertAuditPairs(t, a, 1)
		assertVotes(t, a, ask.ID, "U_ANA 1 of 3 approvals", "U_BO denied with 1 of 3 approvals")
	})

	t.Run("LastApprovalFirstWins", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), quorum(2), time.Minute)
		if _, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_ANA", Person: "U_ANA"}); err != nil {
			t.Fatal(err)
		}
		const n = 12
		results, errs := castConcurrently(t, a, b, ask.ID, n, func(i int) Ballot {
			return Ballot{Outcome: Approved, By: fmt.Sprintf("U_%02d", i), Person: fmt.Sprintf("U_%02d", i)}
		})
		winners := 0
		for i := range n {
			switch {
			case errs[i] == nil && Outcome(results[i].Status) == Approved:
				winners++
			case ErrorCode(errs[i]) == CodeConflict:
				if _, rep := RepeatVote(errs[i]); rep {
					t.Errorf("click %d: a distinct person told they voted already", i)
				}
			default:
				t.Errorf("click %d: %+v, %v", i, results[i], errs[i])
			}
		}
		if winners != 1 {
			t.Fatalf("%d last approvals won; want exactly 1", winners)
		}
		got, _ := b.Get(t.Context(), ask.ID)
		if got.Votes.Count() != 2 {
			t.Errorf("votes %q; want the first and the one winner", got.Votes)
		}
		assertAuditPairs(t, a, 1)
	})

	t.Run("SamePersonConcurrentlyCountsOnce", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), quorum(2), time.Minute)
		const n = 10
		_, errs := castConcurrently(t, a, b, ask.ID, n, func(int) Ballot {
			return Ballot{Outcome: Approved, By: "U_ANA", Person: "U_ANA"}
		})
		counted, repeats := 0, 0
		for _, err := range errs {
			if err == nil {
				counted++
			} else if _, ok := RepeatVote(err); ok {
				repeats++
			}
		}
		got, _ := a.Get(t.Context(), ask.ID)
		if counted != 1 || repeats != n-1 || got.Status != StatusPending || got.Votes != "U_ANA" {
			t.Fatalf("%d counted, %d repeats, ask %s with votes %q; want 1, %d, pending, U_ANA", counted, repeats, got.Status, got.Votes, n-1)
		}
	})

	t.Run("LateVoteExpires", func(t *testing.T) {
		clock := newFakeClock()
		a, _ := newStore(t, clockOptions(clock))
		ask, _ := a.Create(t.Context(), quorum(2), time.Minute)
		if _, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_ANA", Person: "U_ANA"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		_, err := a.Cast(t.Context(), ask.ID, Ballot{Outcome: Approved, By: "U_BO", Person: "U_BO"})
		got, ok := ConflictAsk(err)
		if !ok || Outcome(got.Status) != Expired {
			t.Fatalf("approval at the deadline: %v; want a conflict with the ask expired", err)
		}
	})

	t.Run("GrantDurationTravels", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		won, err := b.Cast(t.Context(), ask.ID, Ballot{Outcome: ApprovedSession, By: "U_ANA", GrantTTL: 15 * time.Minute})
		if err != nil || Outcome(won.Status) != ApprovedSession || won.GrantTTL != 15*time.Minute {
			t.Fatalf("approve for 15 min: %+v, %v", won, err)
		}
		if got, _ := a.Get(t.Context(), ask.ID); got != won {
			t.Errorf("Get = %+v, want %+v", got, won)
		}
		plain, _ := a.Create(t.Context(), sampleRequest(2), time.Minute)
		if s, err := a.Decide(t.Context(), plain.ID, ApprovedSession, "U_ANA", ""); err != nil || s.GrantTTL != 0 {
			t.Errorf("approve for session: %+v, %v; want no grant duration (the session's)", s, err)
		}
		for _, bad := range []Ballot{
			{Outcome: Approved, By: "U_ANA", GrantTTL: time.Minute},
			{Outcome: ApprovedSession, By: "U_ANA", GrantTTL: -time.Minute},
			{Outcome: Expired, By: "U_ANA"},
			{Outcome: Approved, By: ""},
			{Outcome: Approved, By: "U_ANA\nU_BO"},
		} {
			if _, err := a.Cast(t.Context(), ask.ID, bad); ErrorCode(err) != CodeInvalid {
				t.Errorf("Cast(%+v) = %v; want invalid", bad, err)
			}
		}
	})

	t.Run("NoteAppendsToTheTrail", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		e := Event{Kind: EventRefused, AskID: ask.ID, RunID: ask.RunID, Tool: ask.Tool, Outcome: Approved,
			By: "U0STARTER", Reason: "self-approval: U0STARTER started the run"}
		if _, err := b.AppendEvent(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		events, _ := a.Audit(t.Context(), 0)
		last := events[len(events)-1]
		if last.Kind != EventRefused || last.AskID != ask.ID || last.By != "U0STARTER" || last.Reason != e.Reason || last.At.IsZero() {
			t.Errorf("last event %+v; want the refusal", last)
		}
		if got, _ := a.Get(t.Context(), ask.ID); got.Status != StatusPending {
			t.Errorf("a note changed the ask: %s", got.Status)
		}
	})
}

// castConcurrently casts ballot(i) for i in 0..n-1 on the Ask id, all at
// once, the even ones through a and the odd ones through b (clicks
// reaching two replicas), and returns each cast's answer and error by i.
func castConcurrently(t *testing.T, a, b Store, id string, n int, ballot func(i int) Ballot) ([]Ask, []error) {
	results := make([]Ask, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() {
			results[i], errs[i] = st.Cast(t.Context(), id, ballot(i))
		})
	}
	wg.Wait()
	return results, errs
}

// assertVotes checks the ask's voted events: "BY REASON" each, in order.
func assertVotes(t *testing.T, s Store, id string, want ...string) {
	t.Helper()
	got := auditPick(t, s, func(e Event) (string, bool) {
		return e.By + " " + e.Reason, e.Kind == EventVoted && e.AskID == id
	})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("voted events %q, want %q", got, want)
	}
}

// BenchmarkDecideVersusQuorum: one Decide of a one-approval Ask against the
// two votes a quorum of 2 takes, on a real Redis (what a click costs the
// store; the vote script reads and appends one field more).
func BenchmarkDecideVersusQuorum(b *testing.B) {
	srv := redistest.Start(b)
	s := benchStore(b, benchClient(b, srv.URL(), 3))
	ctx := b.Context()
	for _, need := range []int{1, 2} {
		b.Run(fmt.Sprintf("approvals=%d", need), func(b *testing.B) {
			req := sampleRequest(1)
			req.Approvals = need
			for b.Loop() {
				b.StopTimer()
				ask, err := s.Create(ctx, req, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for i := range need {
					if _, err := s.Cast(ctx, ask.ID, Ballot{Outcome: Approved, By: fmt.Sprintf("U_%d", i), Person: fmt.Sprintf("U_%d", i)}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
