package gateway

import (
	"github.com/askops/askops/sessions"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// A decision through the API may choose the grant's life among
// approvals.grant_durations, as Slack's "Approve for 15 min" does: the
// grant then ends before its session. Anything else is refused with a
// 400 that names grant_ttl, and changes nothing.
func TestDecisionGrantTTL(t *testing.T) {
	s := newStack(t, stackOptions{grantDurations: []time.Duration{15 * time.Minute, time.Hour}})
	u := apiServer(t, s).URL
	created := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy"))
	id := created.Body["id"].(string)
	s.posted(t, t.Context())

	for _, tc := range []struct{ name, decision, ttl, want string }{
		{"not offered", "approve_session", "10m", "grant_ttl: 10m is not one of approvals.grant_durations (15m, 1h)"},
		{"not a duration", "approve_session", "soon", "grant_ttl: want a Go duration"},
		{"not a session approval", "approve", "15m", "grant_ttl: only with decision approve_session"},
	} {
		r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": tc.decision, "grant_ttl": tc.ttl})
		if msg, _ := r.Body["error"].(string); r.Status != 400 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if a, _ := s.asks.Get(t.Context(), id); a.Status != "pending" {
		t.Fatalf("a refused decision changed the ask: %s", a.Status)
	}

	r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve_session", "grant_ttl": "15m"})
	if r.Status != 200 || r.Body["status"] != "approved_session" {
		t.Fatalf("approve_session for 15m: %d %s", r.Status, r.Raw)
	}
	if a, _ := s.asks.Get(t.Context(), id); a.GrantTTL != 15*time.Minute {
		t.Errorf("the ask records grant life %s, want 15m", a.GrantTTL)
	}
	// The waiter records the grant, boxed to 15 minutes.
	testwait.For(t, "the session grant to be recorded", func() bool {
		g, err := s.grants.List(t.Context(), sessions.Key("laptop-ana", "sess-1"))
		return err == nil && len(g) == 1
	})
	g, _ := s.grants.List(t.Context(), sessions.Key("laptop-ana", "sess-1"))
	if g[0].Until.IsZero() || g[0].Until.Sub(g[0].CreatedAt) != 15*time.Minute {
		t.Errorf("grant %+v: want one that ends 15m after it was made", g[0])
	}
}

// Without grant_durations configured, grant_ttl is refused.
func TestDecisionGrantTTLNotConfigured(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	created := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy"))
	r := call(t, "POST", u+"/v1/asks/"+created.Body["id"].(string)+"/decision", consoleToken, map[string]any{"decision": "approve_session", "grant_ttl": "15m"})
	if msg, _ := r.Body["error"].(string); r.Status != 400 || !strings.Contains(msg, "grant_ttl: no grant durations are configured") {
		t.Errorf("%d %s", r.Status, r.Raw)
	}
}
