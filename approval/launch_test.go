package approval

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// parkingStore is the memory store, counting Waits and saying when a
// round trip parks on it.
type parkingStore struct {
	*pending.MemoryStore
	waits  atomic.Int32
	parked chan string // the id of each OnEnd
}

func (p *parkingStore) WaitFor(ctx context.Context, a pending.Ask) (pending.Ask, error) {
	p.waits.Add(1)
	return p.MemoryStore.WaitFor(ctx, a)
}

func (p *parkingStore) OnEnd(id string, wake func()) func() {
	stop := p.MemoryStore.OnEnd(id, wake)
	p.parked <- id
	return stop
}

// An API Ask's round trip holds no goroutine between being shown and its
// end: it parks on the store, and whatever ends the Ask (a decision, the
// deadline, the front door stopping, the store closing) wakes it to end
// as Start's rest would, never approved by anything but a decision.
func TestLaunchParksUntilTheAskEnds(t *testing.T) {
	cases := []struct {
		name   string
		end    func(t *testing.T, s *setup, st *parkingStore, ts *timers, stop context.CancelCauseFunc, id string)
		want   pending.Outcome
		reason string
		grant  bool
	}{
		{name: "approved for session: the grant is recorded", want: pending.ApprovedSession, grant: true,
			end: func(t *testing.T, s *setup, _ *parkingStore, _ *timers, _ context.CancelCauseFunc, id string) {
				if _, err := s.asks.Decide(t.Context(), id, pending.ApprovedSession, "UAPPROVER", ""); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "denied", want: pending.Denied,
			end: func(t *testing.T, s *setup, _ *parkingStore, _ *timers, _ context.CancelCauseFunc, id string) {
				if _, err := s.asks.Decide(t.Context(), id, pending.Denied, "UAPPROVER", ""); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "deadline: expired", want: pending.Expired,
			end: func(t *testing.T, s *setup, _ *parkingStore, ts *timers, _ context.CancelCauseFunc, _ string) {
				ts.fire()            // the parked Ask's timer: it wakes and waits
				s.deadlines.expire() // the store's deadline, which its Wait records
			}},
		{name: "front door stopped: cancelled with its cause", want: pending.Cancelled, reason: "shutting down",
			end: func(_ *testing.T, _ *setup, _ *parkingStore, _ *timers, stop context.CancelCauseFunc, _ string) {
				stop(errors.New("askops is shutting down"))
			}},
		{name: "store closed: never approved", want: pending.Unavailable,
			end: func(t *testing.T, s *setup, _ *parkingStore, _ *timers, _ context.CancelCauseFunc, _ string) {
				s.asks.Close()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			st := &parkingStore{MemoryStore: s.asks, parked: make(chan string, 1)}
			ts := &timers{arms: make(chan struct{}, 1)}
			n := newNotifier("C1")
			c, err := New(Config{Asks: st, Grants: s.grants, Notifiers: []Notifier{n}, Timeout: time.Hour, SessionTTL: time.Hour,
				UpdateTimeout: 5 * time.Second, AfterFunc: ts.afterFunc})
			if err != nil {
				t.Fatal(err)
			}
			bg, stop := context.WithCancelCause(t.Context())
			defer stop(nil)
			a, run := c.Launch(t.Context(), bashRequest("sess-1", "sess-1", "make deploy"), 0)
			if _, done := a.Outcome(); done {
				t.Fatalf("launched %s, want pending", a.Status)
			}
			ended := make(chan pending.Ask, 1)
			run(bg, func(final pending.Ask) { ended <- final })
			select {
			case <-ts.arms: // the timer is armed after the store's wake
			case <-time.After(20 * time.Second):
				t.Fatal("the round trip never parked")
			}
			<-st.parked
			if w := st.waits.Load(); w != 0 {
				t.Fatalf("%d Waits while parked, want none", w)
			}
			tc.end(t, s, st, ts, stop, a.ID)
			var got pending.Ask
			select {
			case got = <-ended:
			case <-time.After(20 * time.Second):
				t.Fatal("the parked round trip never ended")
			}
			if o, _ := got.Outcome(); o != tc.want && !(tc.want == pending.Unavailable && o == pending.Cancelled) {
				t.Fatalf("ended %s (%q), want %s", got.Status, got.DecisionReason, tc.want)
			}
			if !strings.Contains(got.DecisionReason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", got.DecisionReason, tc.reason)
			}
			gs, err := s.grants.List(t.Context(), "sess-1")
			if err != nil {
				t.Fatal(err)
			}
			if (len(gs) == 1) != tc.grant {
				t.Errorf("grants %v, want a grant: %v", gs, tc.grant)
			}
		})
	}
}
