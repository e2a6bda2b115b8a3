package pending

import (
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testclock"
)

func TestRedisSteps(t *testing.T) {
	testSteps(t, redisStoresOn(redistest.Start(t).URL(), "steps"))
}

func TestMemorySteps(t *testing.T) {
	testSteps(t, memoryStores)
}

// testSteps is the follow-up schedule's contract, for both stores.
func testSteps(t *testing.T, newStore newStoreFunc) {
	steps := func(s Store) Steps { return s.(Steps) }
	const lease = 30 * time.Second
	// clocked is the pair of stores (as two replicas) on one fake clock
	// that every case moving time starts from.
	clocked := func(t *testing.T) (*testclock.Clock, Store, Store) {
		clock := newFakeClock()
		a, b := newStore(t, clockOptions(clock))
		return clock, a, b
	}

	t.Run("ClaimedOnceFinishedOnce", func(t *testing.T) {
		clock, a, b := clocked(t)
		ctx := t.Context()
		ask, err := a.Create(ctx, sampleRequest(1), 15*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := steps(a).ScheduleSteps(ctx, ask.ID, []DueStep{
			{Name: "remind", Due: ask.CreatedAt.Add(5 * time.Minute)},
			{Name: "escalate:1", Due: ask.CreatedAt.Add(10 * time.Minute)},
		}); err != nil {
			t.Fatal(err)
		}
		if got, err := steps(b).ClaimSteps(ctx, lease, 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed %d steps before any was due (err %v)", len(got), err)
		}
		clock.Advance(5 * time.Minute)
		got, err := steps(a).ClaimSteps(ctx, lease, 10)
		if err != nil || len(got) != 1 || got[0].Name != "remind" || got[0].Ask.ID != ask.ID {
			t.Fatalf("claim at 5m = %+v, %v; want the reminder", got, err)
		}
		if again, _ := steps(b).ClaimSteps(ctx, lease, 10); len(again) != 0 {
			t.Fatalf("a claimed step was claimed again within its lease: %+v", again)
		}
		ok, err := steps(a).FinishStep(ctx, got[0], StepDone{Kind: EventReminded, After: 5 * time.Minute, To: "U1,S1", Text: "reminded", Tried: "reminded at 5m", Unanswered: "nobody answered in 15m"})
		if err != nil || !ok {
			t.Fatalf("finish = %v, %v", ok, err)
		}
		clock.Advance(lease)
		if again, _ := steps(b).ClaimSteps(ctx, lease, 10); len(again) != 0 {
			t.Fatalf("a finished step came back: %+v", again)
		}
		rec, _ := b.Get(ctx, ask.ID)
		if f := rec.Followups.Entries(); len(f) != 1 || f[0] != (Followup{Name: "remind", After: 5 * time.Minute, To: "U1,S1"}) {
			t.Errorf("followups = %+v", f)
		}
		assertReminded(t, a, 1)
	})

	t.Run("LapsedLeaseIsTakenOver", func(t *testing.T) {
		clock, a, b := clocked(t)
		ctx := t.Context()
		askWithReminder(t, a, 2)
		clock.Advance(time.Minute)
		dead, _ := steps(a).ClaimSteps(ctx, lease, 10) // a's replica then dies
		if len(dead) != 1 {
			t.Fatalf("claimed %d", len(dead))
		}
		clock.Advance(lease - time.Second)
		if got, _ := steps(b).ClaimSteps(ctx, lease, 10); len(got) != 0 {
			t.Fatal("taken over before the lease lapsed")
		}
		clock.Advance(time.Second)
		got, _ := steps(b).ClaimSteps(ctx, lease, 10)
		if len(got) != 1 {
			t.Fatalf("after the lease lapsed another claimer got %d steps, want 1", len(got))
		}
		if ok, _ := steps(a).FinishStep(ctx, dead[0], StepDone{Kind: EventReminded}); ok {
			t.Error("the lapsed claim still finished the step")
		}
		if ok, _ := steps(b).FinishStep(ctx, got[0], StepDone{Kind: EventReminded}); !ok {
			t.Error("the new claim could not finish the step")
		}
		assertReminded(t, a, 1)
	})

	t.Run("DecidedAskDropsItsSteps", func(t *testing.T) {
		clock, a, b := clocked(t)
		ctx := t.Context()
		ask := askWithReminder(t, a, 3)
		if _, err := b.Decide(ctx, ask.ID, Approved, "U1", ""); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute)
		if got, _ := steps(b).ClaimSteps(ctx, lease, 10); len(got) != 0 {
			t.Errorf("a step of a decided Ask was claimed: %+v", got)
		}
		// Scheduling on an ended Ask records nothing.
		_ = steps(a).ScheduleSteps(ctx, ask.ID, []DueStep{{Name: "escalate:1", Due: ask.CreatedAt}})
		if got, _ := steps(b).ClaimSteps(ctx, lease, 10); len(got) != 0 {
			t.Errorf("a step scheduled on a decided Ask was claimed: %+v", got)
		}
	})

	t.Run("ExpiryTellsWhatWasTried", func(t *testing.T) {
		clock, a, b := clocked(t)
		ctx := t.Context()
		plain, _ := a.Create(ctx, sampleRequest(4), 15*time.Minute)
		ask, _ := a.Create(ctx, sampleRequest(4), 15*time.Minute)
		_ = steps(a).ScheduleSteps(ctx, ask.ID, []DueStep{
			{Name: "remind", Due: ask.CreatedAt.Add(5 * time.Minute)},
			{Name: "escalate:1", Due: ask.CreatedAt.Add(10 * time.Minute)},
		})
		clock.Advance(10 * time.Minute)
		// Both claimed at once (as by two replicas), each finished with
		// only its own part of the story.
		got, _ := steps(b).ClaimSteps(ctx, lease, 10)
		const why = "nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m)"
		if len(got) != 2 || got[0].Name != "remind" {
			t.Fatalf("claimed %+v", got)
		}
		for i, tried := range []string{"reminded at 5m", "escalated to S_ONCALL at 10m"} {
			if ok, err := steps(a).FinishStep(ctx, got[i], StepDone{Kind: EventReminded, Tried: tried, Unanswered: "nobody answered in 15m"}); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		clock.Advance(5 * time.Minute)
		expired, err := b.Sweep(ctx, clock.Now())
		if err != nil || len(expired) != 2 {
			t.Fatalf("sweep expired %d (%v)", len(expired), err)
		}
		for _, e := range expired {
			want := reasonDeadline
			if e.ID == ask.ID {
				want = why
			}
			if e.DecisionReason != want {
				t.Errorf("ask %s expired with %q, want %q", e.ID, e.DecisionReason, want)
			}
		}
		_ = plain
	})

	t.Run("CopiesAreRecorded", func(t *testing.T) {
		a, b := newStore(t, Options{})
		ctx := t.Context()
		ask, _ := a.Create(ctx, sampleRequest(5), time.Minute)
		_ = a.SetMessage(ctx, ask.ID, "C1", "1.1")
		for _, m := range [][2]string{{"D1", "2.1"}, {"D2", "2.2"}, {"D1", "2.1"}} {
			if err := steps(b).AddCopy(ctx, ask.ID, m[0], m[1]); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := a.Get(ctx, ask.ID)
		if len(got.Copies.List()) != 2 {
			t.Errorf("copies = %q, want two", got.Copies)
		}
		for _, c := range []struct {
			ch, ts string
			want   bool
		}{{"C1", "1.1", true}, {"D1", "2.1", true}, {"D2", "2.2", true}, {"D2", "2.1", false}, {"C1", "2.2", false}, {"", "", false}} {
			if got.ShownOn(c.ch, c.ts) != c.want {
				t.Errorf("ShownOn(%q, %q) = %v", c.ch, c.ts, !c.want)
			}
		}
		if err := steps(b).AddCopy(ctx, ask.ID, "D/1", "x"); ErrorCode(err) != CodeInvalid {
			t.Errorf("a malformed copy: %v", err)
		}
	})
}

// askWithReminder creates an Ask of sampleRequest(i) on s, due in 15
// minutes, with one follow-up step, "remind", due a minute after it was
// made: the Ask the lease and decision cases of testSteps start from.
func askWithReminder(t *testing.T, s Store, i int) Ask {
	t.Helper()
	ask, _ := s.Create(t.Context(), sampleRequest(i), 15*time.Minute)
	_ = s.(Steps).ScheduleSteps(t.Context(), ask.ID, []DueStep{{Name: "remind", Due: ask.CreatedAt.Add(time.Minute)}})
	return ask
}

// assertReminded checks that s's audit trail holds want reminded events.
func assertReminded(t *testing.T, s Store, want int) {
	t.Helper()
	events, _ := s.Audit(t.Context(), 0)
	if n := countKind(events, EventReminded); n != want {
		t.Errorf("%d reminded events, want %d", n, want)
	}
}

func countKind(events []Event, k EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// Replicas claiming at once (four store instances on one Redis, as four
// processes) carry out each step exactly once between them.
func TestRedisStepsClaimedOnceAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	clock := newFakeClock()
	opts := clockOptions(clock)
	opts.Namespace = "stepsrace"
	var replicas []*RedisStore
	for range 4 {
		replicas = append(replicas, newRedisStore(t, srv.URL(), opts))
	}
	ctx := t.Context()
	const asks = 50
	for i := range asks {
		a, err := replicas[i%4].Create(ctx, sampleRequest(i), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := replicas[i%4].ScheduleSteps(ctx, a.ID, []DueStep{
			{Name: "remind", Due: a.CreatedAt.Add(time.Minute)},
			{Name: "escalate:1", Due: a.CreatedAt.Add(2 * time.Minute)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(2 * time.Minute)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for _, r := range replicas {
		wg.Go(func() {
			for {
				got, err := r.ClaimSteps(ctx, time.Minute, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				for _, c := range got {
					if ok, err := r.FinishStep(ctx, c, StepDone{Kind: EventReminded}); !ok || err != nil {
						t.Errorf("finish %s %s: %v %v", c.Ask.ID, c.Name, ok, err)
					}
					mu.Lock()
					seen[c.Ask.ID+" "+c.Name]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 2*asks {
		t.Errorf("%d distinct steps carried out, want %d", len(seen), 2*asks)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("step %s carried out %d times", k, n)
		}
	}
}
