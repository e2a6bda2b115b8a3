package console_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// The console's user may not approve a run they started on some host
// (bot run records "dana@host") unless self-approval is allowed; a quorum
// vote from the console is counted and said so, and counts once.
func TestConsoleSelfApprovalAndQuorum(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		asks := pending.NewMemoryStore(pending.Options{})
		defer asks.Close()
		gs := grants.NewMemoryStore(grants.Options{})
		defer gs.Close()
		c, err := console.New(console.Config{Asks: asks, Grants: gs, Live: console.NewLive(), User: "dana", SelfApproval: allowed})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(c.Handler())
		s := signIn(t, c, srv.URL)

		own, _ := asks.Create(t.Context(), pending.Request{RunID: "r1", StartedBy: "dana@build-1", Tool: "bash", Args: `{"command":"make deploy"}`}, time.Minute)
		code, body := s.post(t, "/asks/"+own.ID, url.Values{"action": {"approve"}})
		got, _ := asks.Get(t.Context(), own.ID)
		if !allowed {
			if code != http.StatusForbidden || !strings.Contains(html.UnescapeString(body), "You started this run") || got.Status != pending.StatusPending {
				t.Errorf("self-approval off: %d, ask %s", code, got.Status)
			}
			events, _ := asks.Audit(t.Context(), 0)
			if last := events[len(events)-1]; last.Kind != pending.EventRefused || last.By != "console:dana" {
				t.Errorf("refusal not audited: %+v", last)
			}
			if code, _ := s.post(t, "/asks/"+own.ID, url.Values{"action": {"deny"}}); code != http.StatusOK {
				t.Errorf("the starter's deny: %d", code)
			}
		} else if got.Status != pending.Status(pending.Approved) {
			t.Errorf("self-approval allowed: %d, ask %s", code, got.Status)
		}

		q, _ := asks.Create(t.Context(), pending.Request{RunID: "r2", StartedBy: "U0SOMEONE", Tool: "bash", Args: `{"command":"terraform apply"}`, Approvals: 2}, time.Minute)
		if code, body := s.post(t, "/asks/"+q.ID, url.Values{"action": {"approve"}}); code != http.StatusOK || !strings.Contains(html.UnescapeString(body), "Your approval is counted: 1 of 2 approvals (console:dana)") {
			t.Errorf("quorum vote: %d\n%s", code, body)
		}
		if code, _ := s.post(t, "/asks/"+q.ID, url.Values{"action": {"approve"}}); code != http.StatusConflict {
			t.Errorf("second vote by the same console user: %d", code)
		}
		if code, _ := s.post(t, "/asks/"+q.ID, url.Values{"action": {"approve_session"}}); code != http.StatusBadRequest && code != http.StatusForbidden {
			t.Errorf("session approval of a quorum ask: %d", code)
		}
		if a, _ := asks.Cast(t.Context(), q.ID, pending.Ballot{Outcome: pending.Approved, By: "U0BO"}); a.Status != pending.Status(pending.Approved) {
			t.Errorf("a second person's approval: %s", a.Status)
		}
		c.Close()
		srv.Close()
	}
}
