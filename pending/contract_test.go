package pending

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/testwait"
)

// newStoreFunc returns two store instances over the same data: for Redis two
// clients (as two processes would have), for memory the same store twice.
type newStoreFunc func(t *testing.T, opts Options) (a, b Store)

// memoryStores is the in-memory store's newStoreFunc: one store, handed
// out as both instances and closed when the test ends.
func memoryStores(t *testing.T, opts Options) (Store, Store) {
	s := NewMemoryStore(opts)
	t.Cleanup(func() { _ = s.Close() })
	return s, s
}

func sampleRequest(i int) Request {
	return Request{
		RunID: fmt.Sprintf("run-%d", i%3), SessionID: fmt.Sprintf("sess-%d", i%2),
		Label: "deploy bot", StartedBy: "U0STARTER",
		Tool: "bash", Args: `{"command":"git push origin main"}`, Summary: "git push origin main",
		Reason: "side effect", Rule: "rules[2]", Workspace: "/ws", Cwd: "/ws/app",
		ReplyChannel: "C1", ReplyThreadTS: "1700000000.000100",
	}
}

// testStore is the contract both implementations obey.
func testStore(t *testing.T, newStore newStoreFunc) {
	t.Run("Votes", func(t *testing.T) { testVotes(t, newStore) })
	t.Run("CastOn", func(t *testing.T) { testCastOn(t, newStore) })
	t.Run("SaveMessage", func(t *testing.T) { testSaveMessage(t, newStore) })
	t.Run("AuditLatest", func(t *testing.T) { testAuditLatest(t, newStore) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, newStore) })
	t.Run("AskID", func(t *testing.T) { testAskID(t, newStore) })
	t.Run("CreateGet", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		req := sampleRequest(1)
		ask, err := a.Create(t.Context(), req, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if !recordid.Valid(ask.ID) {
			t.Errorf("id %q is not 26 chars of lowercase base32", ask.ID)
		}
		if ask.Status != StatusPending || !ask.CreatedAt.Equal(clock.Now()) || !ask.Deadline.Equal(clock.Now().Add(2*time.Minute)) {
			t.Errorf("created ask = %+v", ask)
		}
		got, err := b.Get(t.Context(), ask.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got != ask {
			t.Errorf("Get on the other instance = %+v, want %+v", got, ask)
		}
		if err := b.SetMessage(t.Context(), ask.ID, "C123", "1700000000.1"); err != nil {
			t.Fatal(err)
		}
		got, _ = a.Get(t.Context(), ask.ID)
		if got.Channel != "C123" || got.MessageTS != "1700000000.1" {
			t.Errorf("after SetMessage: channel %q ts %q", got.Channel, got.MessageTS)
		}
		other, _ := a.Create(t.Context(), req, time.Minute)
		if other.ID == ask.ID {
			t.Error("two asks got the same id")
		}
	})

	t.Run("Shown", func(t *testing.T) {
		// What is worked out when the Ask is made comes back as made,
		// secrets redacted; a request without it (a previous release's)
		// comes back without it.
		a, b := newStore(t, Options{})
		req := sampleRequest(1)
		req.SessionName, req.OneOff = "bot ask session 'nightly'", true // the builder's, not stored
		req.SessionStarted = time.Unix(1796220120, 0)
		req.Shown = &Shown{
			Programs: []string{"git", "curl"}, MorePrograms: 3,
			Scope: "bash: exactly \"git push origin main\" in /ws/app", GrantLives: []int64{900, 3600},
			Session: "bot ask session 'nightly' AKIAIOSFODNN7EXAMPLE", Started: 1796220120,
		}
		ask, err := a.Create(t.Context(), req, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Get(t.Context(), ask.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := *req.Shown
		want.Session = "bot ask session 'nightly' AKIA[REDACTED]"
		if got.Shown == nil || !reflect.DeepEqual(*got.Shown, want) || !reflect.DeepEqual(*ask.Shown, want) {
			t.Errorf("shown: created %+v, read %+v, want %+v", ask.Shown, got.Shown, want)
		}
		if got.SessionName != "" || got.OneOff || !got.SessionStarted.IsZero() {
			t.Errorf("the builder's session fields were stored: %q %v %v", got.SessionName, got.OneOff, got.SessionStarted)
		}
		if offered, known := got.OffersSession(); !offered || !known {
			t.Errorf("offers session %v known %v", offered, known)
		}
		old, err := a.Create(t.Context(), sampleRequest(2), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.Get(t.Context(), old.ID); err != nil || got.Shown != nil {
			t.Errorf("a request without Shown read back with %+v (%v)", got.Shown, err)
		}
		if _, known := old.OffersSession(); known {
			t.Error("an Ask without Shown says what it offers")
		}
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		a, _ := newStore(t, Options{})
		ctx := t.Context()
		ask, err := a.Create(ctx, sampleRequest(1), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		unknown := recordid.New()
		cases := []struct {
			name string
			call func() error
			want Code
		}{
			{"create ttl 0", func() error { _, err := a.Create(ctx, sampleRequest(2), 0); return err }, CodeInvalid},
			{"create ttl < 0", func() error { _, err := a.Create(ctx, sampleRequest(2), -time.Second); return err }, CodeInvalid},
			{"decide empty id", func() error { _, err := a.Decide(ctx, "", Approved, "U1", ""); return err }, CodeInvalid},
			{"decide malformed id", func() error { _, err := a.Decide(ctx, "x}{y", Approved, "U1", ""); return err }, CodeInvalid},
			{"decide unknown id", func() error { _, err := a.Decide(ctx, unknown, Approved, "U1", ""); return err }, CodeNotFound},
			{"decide bad outcome", func() error { _, err := a.Decide(ctx, ask.ID, "yes", "U1", ""); return err }, CodeInvalid},
			{"decide pending as outcome", func() error { _, err := a.Decide(ctx, ask.ID, Outcome(StatusPending), "U1", ""); return err }, CodeInvalid},
			{"get empty id", func() error { _, err := a.Get(ctx, ""); return err }, CodeInvalid},
			{"get unknown id", func() error { _, err := a.Get(ctx, unknown); return err }, CodeNotFound},
			{"set message unknown id", func() error { return a.SetMessage(ctx, unknown, "C1", "1.2") }, CodeNotFound},
			{"set message empty id", func() error { return a.SetMessage(ctx, "", "C1", "1.2") }, CodeInvalid},
			{"wait empty id", func() error { _, err := a.Wait(ctx, ""); return err }, CodeInvalid},
			{"wait unknown id", func() error { _, err := a.Wait(ctx, unknown); return err }, CodeNotFound},
		}
		for _, c := range cases {
			err := c.call()
			if got := ErrorCode(err); got != c.want {
				t.Errorf("%s: code %q (err %v), want %q", c.name, got, err, c.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s: error %T is not *pending.Error", c.name, err)
			}
		}
		w, err := a.Wait(ctx, unknown)
		if _, ended := w.Outcome(); !ended || err == nil {
			t.Errorf("Wait on unknown id = %+v, %v; want a terminal status and an error", w, err)
		}
		got, _ := a.Get(ctx, ask.ID)
		if got.Status != StatusPending {
			t.Errorf("bad input changed the ask: %+v", got)
		}
		events, _ := a.Audit(ctx, 0)
		if len(events) != 1 || events[0].Kind != EventAsked {
			t.Errorf("audit after bad input = %+v, want only the one asked event", events)
		}
		list, _ := a.ListPending(ctx, Filter{})
		if len(list) != 1 {
			t.Errorf("pending after bad input = %d asks, want 1", len(list))
		}
	})

	t.Run("ConcurrentDecideOneWinner", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, err := a.Create(t.Context(), sampleRequest(1), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		const goroutines, calls = 50, 1000
		outcomes := []Outcome{Approved, Denied, ApprovedSession}
		type result struct {
			ask Ask
			err error
		}
		results := make(chan result, calls)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				st := a
				if g%2 == 1 {
					st = b
				}
				for i := range calls / goroutines {
					n := g*(calls/goroutines) + i
					got, err := st.Decide(t.Context(), ask.ID, outcomes[n%3], fmt.Sprintf("U%04d", n), "because")
					results <- result{got, err}
				}
			})
		}
		wg.Wait()
		close(results)
		var winners []Ask
		var losers []error
		for r := range results {
			if r.err == nil {
				winners = append(winners, r.ask)
			} else {
				losers = append(losers, r.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%d winners, want exactly 1", len(winners))
		}
		win := winners[0]
		for _, err := range losers {
			c, ok := ConflictAsk(err)
			if !ok {
				t.Fatalf("loser error %v is not a conflict carrying the winner", err)
			}
			if c.Status != win.Status || c.DecidedBy != win.DecidedBy || !c.DecidedAt.Equal(win.DecidedAt) {
				t.Fatalf("loser told %s by %s, winner was %s by %s", c.Status, c.DecidedBy, win.Status, win.DecidedBy)
			}
			if want := fmt.Sprintf("already %s by %s at ", win.Status, win.DecidedBy); !strings.Contains(err.Error(), want) {
				t.Fatalf("loser message %q does not say %q", err, want)
			}
		}
		stored, _ := b.Get(t.Context(), ask.ID)
		if stored != win {
			t.Errorf("stored %+v, winner %+v", stored, win)
		}
		assertAuditPairs(t, a, 1)
	})

	t.Run("DecideOnBWakesWaiterOnA", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		done := make(chan Ask, 1)
		go func() {
			got, err := a.Wait(t.Context(), ask.ID)
			if err != nil {
				t.Errorf("Wait: %v", err)
			}
			done <- got
		}()
		testwait.Within(t, 5*time.Second, "the waiter to register", func() bool { return waitingCount(a) == 1 })
		won, err := b.Decide(t.Context(), ask.ID, Denied, "U_BOB", "not today")
		if err != nil {
			t.Fatal(err)
		}
		if got := testwait.ReceiveWithin(t, done, 5*time.Second, "the waiter on A to wake on a decision on B"); got != won {
			t.Errorf("waiter got %+v, want %+v", got, won)
		}
		testwait.Within(t, 5*time.Second, "the waiter to unregister", func() bool { return waitingCount(a) == 0 })
	})

	t.Run("DecisionBeforeWaitNotLost", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		won, err := b.Decide(t.Context(), ask.ID, Approved, "U_ANN", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Wait(t.Context(), ask.ID)
		if err != nil || got != won {
			t.Errorf("Wait after decision = %+v, %v; want %+v", got, err, won)
		}
	})

	t.Run("SeveralWaitersOnOneAsk", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		var wg sync.WaitGroup
		got := make([]Ask, 4)
		for i := range got {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Go(func() { got[i], _ = st.Wait(t.Context(), ask.ID) })
		}
		testwait.Within(t, 5*time.Second, "four waiters", func() bool {
			if a == b {
				return waitingCount(a) == 4
			}
			return waitingCount(a)+waitingCount(b) == 4
		})
		if _, err := a.Decide(t.Context(), ask.ID, ApprovedSession, "U_ANN", ""); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		for i, g := range got {
			if g.Status != Status(ApprovedSession) {
				t.Errorf("waiter %d got %s", i, g.Status)
			}
		}
	})

	t.Run("ExpiresAtDeadlineWithInjectedClock", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		done := waitInBackground(t, a, ask.ID)
		testwait.Within(t, 5*time.Second, "the waiter to register", func() bool { return waitingCount(a) == 1 })
		clock.Advance(59 * time.Second)
		select {
		case got := <-done:
			t.Fatalf("Wait returned %s before the deadline", got.Status)
		default:
		}
		clock.Advance(time.Second)
		got := testwait.ReceiveWithin(t, done, 5*time.Second, "Wait to return at the deadline")
		if got.Status != Status(Expired) || got.DecidedBy != "" || !got.DecidedAt.Equal(clock.Now()) {
			t.Errorf("at deadline Wait returned %+v", got)
		}
		_, err := b.Decide(t.Context(), ask.ID, Approved, "U_LATE", "")
		if c, ok := ConflictAsk(err); !ok || c.Status != Status(Expired) || !strings.Contains(err.Error(), "already expired") {
			t.Errorf("late click: %v", err)
		}
		assertAuditPairs(t, a, 1)
	})

	t.Run("ClickAfterDeadlineExpiresInstead", func(t *testing.T) {
		clock := newFakeClock()
		a, _ := newStore(t, clockOptions(clock))
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		clock.Advance(time.Minute)
		_, err := a.Decide(t.Context(), ask.ID, Approved, "U_LATE", "")
		c, ok := ConflictAsk(err)
		if !ok || c.Status != Status(Expired) || c.DecisionReason != reasonLate {
			t.Fatalf("approval after the deadline: %v (%+v)", err, c)
		}
		got, err := a.Wait(t.Context(), ask.ID)
		if err != nil || got.Status != Status(Expired) {
			t.Errorf("Wait = %+v, %v", got, err)
		}
		assertAuditPairs(t, a, 1)
	})

	t.Run("ClickRacingDeadlineHasOneResult", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		const n = 40
		for i := range n {
			ask, _ := a.Create(t.Context(), sampleRequest(i), time.Minute)
			done := waitInBackground(t, a, ask.ID)
			testwait.Within(t, 5*time.Second, "the waiter to register", func() bool { return waitingCount(a) == 1 })
			var decided Ask
			var decideErr error
			var wg sync.WaitGroup
			wg.Go(func() { decided, decideErr = b.Decide(t.Context(), ask.ID, Approved, "U_FAST", "") })
			wg.Go(func() { clock.Advance(time.Minute) })
			wg.Wait()
			waited := <-done
			stored, _ := a.Get(t.Context(), ask.ID)
			if waited != stored {
				t.Fatalf("#%d: waiter saw %+v, store holds %+v", i, waited, stored)
			}
			if decideErr == nil {
				if decided != stored || stored.Status != Status(Approved) {
					t.Fatalf("#%d: click won with %+v, store holds %+v", i, decided, stored)
				}
			} else if c, ok := ConflictAsk(decideErr); !ok || c.Status != Status(Expired) || stored.Status != Status(Expired) {
				t.Fatalf("#%d: click lost with %v, store holds %s", i, decideErr, stored.Status)
			}
			testwait.Within(t, 5*time.Second, "the waiter to unregister", func() bool { return waitingCount(a) == 0 })
		}
		assertAuditPairs(t, a, n)
	})

	t.Run("ConcurrentSweepersExpireOnce", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		orphans := map[string]bool{}
		for i := range 30 {
			ask, _ := a.Create(t.Context(), sampleRequest(i), time.Minute)
			orphans[ask.ID] = true
		}
		keep, _ := a.Create(t.Context(), sampleRequest(99), time.Hour)
		decided, _ := a.Create(t.Context(), sampleRequest(98), time.Minute)
		if _, err := b.Decide(t.Context(), decided.ID, Denied, "U1", ""); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		var wg sync.WaitGroup
		swept := make([][]Ask, 4)
		for i := range swept {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Go(func() {
				var err error
				if swept[i], err = st.Sweep(t.Context(), clock.Now()); err != nil {
					t.Errorf("sweep: %v", err)
				}
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for _, list := range swept {
			for _, x := range list {
				seen[x.ID]++
				if x.Status != Status(Expired) {
					t.Errorf("swept ask %s has status %s", x.ID, x.Status)
				}
			}
		}
		for id := range orphans {
			if seen[id] != 1 {
				t.Errorf("orphan %s expired by %d sweepers, want exactly 1", id, seen[id])
			}
		}
		if len(seen) != len(orphans) {
			t.Errorf("sweepers returned %d asks, want the %d orphans", len(seen), len(orphans))
		}
		again, _ := a.Sweep(t.Context(), clock.Now())
		if len(again) != 0 {
			t.Errorf("second sweep returned %d asks", len(again))
		}
		list, _ := b.ListPending(t.Context(), Filter{})
		if len(list) != 1 || list[0].ID != keep.ID {
			t.Errorf("pending after sweep = %v, want only %s", ids(list), keep.ID)
		}
		if _, err := a.Decide(t.Context(), keep.ID, Denied, "U1", ""); err != nil {
			t.Fatal(err)
		}
		assertAuditPairs(t, a, 32)
	})

	t.Run("CancelledWhenContextEnds", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan Ask, 1)
		go func() { got, _ := a.Wait(ctx, ask.ID); done <- got }()
		testwait.Within(t, 5*time.Second, "the waiter to register", func() bool { return waitingCount(a) == 1 })
		cancel()
		got := <-done
		stored, _ := b.Get(t.Context(), ask.ID)
		if got.Status != Status(Cancelled) || stored != got {
			t.Errorf("cancelled Wait = %+v, stored %+v", got, stored)
		}
	})

	t.Run("ListPendingFiltersOldestFirst", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		var made []Ask
		for i := range 6 {
			// later asks get shorter TTLs, so deadline order differs from creation order
			ask, _ := a.Create(t.Context(), sampleRequest(i), time.Duration(10-i)*time.Minute)
			made = append(made, ask)
			clock.Advance(time.Second)
		}
		if _, err := a.Decide(t.Context(), made[2].ID, Approved, "U1", ""); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			f    Filter
			want []Ask
		}{
			{Filter{}, []Ask{made[0], made[1], made[3], made[4], made[5]}},
			{Filter{SessionID: "sess-0"}, []Ask{made[0], made[4]}},
			{Filter{RunID: "run-0"}, []Ask{made[0], made[3]}},
			{Filter{SessionID: "sess-1", RunID: "run-1"}, []Ask{made[1]}},
			{Filter{SessionID: "nope"}, nil},
		}
		for _, c := range cases {
			got, err := b.ListPending(t.Context(), c.f)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(got)) != fmt.Sprint(ids(c.want)) {
				t.Errorf("ListPending(%+v) = %v, want %v", c.f, ids(got), ids(c.want))
			}
		}
	})

	t.Run("AuditOneDecidedPerAsked", func(t *testing.T) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		const n = 30
		var wg sync.WaitGroup
		for i := range n {
			ask, err := a.Create(t.Context(), sampleRequest(i), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			switch i % 5 {
			case 0: // racing clicks on both instances
				for j := range 4 {
					st := []Store{a, b}[j%2]
					wg.Go(func() { _, _ = st.Decide(t.Context(), ask.ID, []Outcome{Approved, Denied}[j%2], "U", "") })
				}
			case 1:
				_, _ = b.Decide(t.Context(), ask.ID, ApprovedSession, "U2", "")
			case 2:
				_, _ = a.Decide(t.Context(), ask.ID, Unavailable, "", "slack down")
			case 3:
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				_, _ = a.Wait(ctx, ask.ID)
			case 4: // left for the sweep
			}
		}
		wg.Wait()
		clock.Advance(time.Minute)
		if _, err := b.Sweep(t.Context(), clock.Now()); err != nil {
			t.Fatal(err)
		}
		assertAuditPairs(t, b, n)
		events, _ := a.Audit(t.Context(), 5)
		if len(events) != 5 || events[0].Kind != EventAsked {
			t.Errorf("Audit(limit 5) = %d events starting with %+v", len(events), events)
		}
	})

	t.Run("CloseReleasesWaiters", func(t *testing.T) {
		a, _ := newStore(t, Options{})
		ask, _ := a.Create(t.Context(), sampleRequest(1), time.Minute)
		done := make(chan error, 1)
		go func() {
			got, err := a.Wait(t.Context(), ask.ID)
			if _, ended := got.Outcome(); !ended {
				t.Errorf("Wait after Close returned non-terminal %+v", got)
			}
			done <- err
		}()
		testwait.Within(t, 5*time.Second, "the waiter to register", func() bool { return waitingCount(a) == 1 })
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; ErrorCode(err) != CodeUnavailable {
			t.Errorf("Wait after Close: %v, want unavailable", err)
		}
	})
}

func ids(asks []Ask) []string {
	out := make([]string, len(asks))
	for i, a := range asks {
		out[i] = a.ID
	}
	return out
}

// assertAuditPairs checks the audit trail holds exactly n asks, each with one
// asked event followed later by exactly one decided event that matches the
// record.
func assertAuditPairs(t *testing.T, s Store, n int) {
	t.Helper()
	events, err := s.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	asked, decided := map[string]int{}, map[string]int{}
	for _, e := range events {
		switch e.Kind {
		case EventAsked:
			asked[e.AskID]++
		case EventDecided:
			if asked[e.AskID] == 0 {
				t.Errorf("decided before asked for %s", e.AskID)
			}
			decided[e.AskID]++
			rec, err := s.Get(t.Context(), e.AskID)
			if err != nil || Outcome(rec.Status) != e.Outcome || rec.DecidedBy != e.By || !rec.DecidedAt.Equal(e.At) {
				t.Errorf("decided event %+v does not match the record %+v (%v)", e, rec, err)
			}
		case EventVoted, EventRefused: // checked by testVotes
		default:
			t.Errorf("unknown event kind %q", e.Kind)
		}
	}
	if len(asked) != n {
		t.Errorf("audit has %d asks, want %d", len(asked), n)
	}
	for id, c := range asked {
		if c != 1 || decided[id] != 1 {
			t.Errorf("ask %s: %d asked, %d decided events; want 1 and 1", id, c, decided[id])
		}
	}
}
