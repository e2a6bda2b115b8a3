package approval

import (
	"testing"
	"time"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// An "Approve for 15 min" records a grant that ends 15 minutes after it
// was made, not with the session (1 h here); "for session" still records
// one for the session's TTL.
func TestGrantLivesTheChosenDuration(t *testing.T) {
	for _, tc := range []struct {
		life, want time.Duration
	}{{15 * time.Minute, 15 * time.Minute}, {0, time.Hour}} {
		t.Run(tc.want.String(), func(t *testing.T) {
			s := newSetup(t)
			n := newNotifier("C1")
			c := s.core(t, nil, n)
			done := approveAsync(t.Context(), c, bashRequest("run-1", "sess-1", "make deploy"))
			shown := n.waitPosted(t)
			before := time.Now()
			won, err := s.asks.Cast(t.Context(), shown.ID, pending.Ballot{Outcome: pending.ApprovedSession, By: "U1", GrantTTL: tc.life})
			if err != nil {
				t.Fatal(err)
			}
			if got := result(t, done); got.Status != won.Status || got.GrantTTL != tc.life {
				t.Fatalf("waiter got %s with grant ttl %s", got.Status, got.GrantTTL)
			}
			call := policy.Call{Tool: "bash", Command: "make deploy", Cwd: "/ws/app", Workspace: "/ws", SessionID: "sess-1"}
			g, ok, err := s.grants.Match(t.Context(), "sess-1", call)
			if err != nil || !ok {
				t.Fatalf("no grant: %v", err)
			}
			if left := g.ExpiresAt.Sub(before); left < tc.want-time.Minute || left > tc.want+time.Minute {
				t.Errorf("grant expires %s after the click; want about %s", left.Round(time.Second), tc.want)
			}
		})
	}
}
