package console_test

import (
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// The console's user may not approve a run they started on some host
// (bot run records "dana@host") unless self-approval is allowed or they
// are the only approver there is (the console without Slack); a quorum
// vote from the console is counted and said so, and counts once.
func TestConsoleSelfApprovalAndQuorum(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rule    approval.DeciderConfig
		allowed bool
	}{
		{"self_approval off", approval.DeciderConfig{}, false},
		{"self_approval on", approval.DeciderConfig{SelfApproval: approval.SelfApproval{Allowed: true}}, true},
		{"the only approver", approval.DeciderConfig{OnlyApprover: func(by string) bool { return by == "console:dana" }}, true},
	} {
		allowed := tc.allowed
		asks, _, _, s := danasConsoleDeciding(t, console.Config{}, tc.rule)

		own, _ := asks.Create(t.Context(), pending.Request{RunID: "r1", StartedBy: "dana@build-1", Tool: "bash", Args: `{"command":"make deploy"}`}, time.Minute)
		code, body := s.post(t, "/asks/"+own.ID, url.Values{"action": {"approve"}})
		got, _ := asks.Get(t.Context(), own.ID)
		if !allowed {
			if code != http.StatusForbidden || !strings.Contains(html.UnescapeString(body), "You started this run") || got.Status != pending.StatusPending {
				t.Errorf("%s: %d, ask %s", tc.name, code, got.Status)
			}
			events, _ := asks.Audit(t.Context(), 0)
			if last := events[len(events)-1]; last.Kind != pending.EventRefused || last.By != "console:dana" {
				t.Errorf("refusal not audited: %+v", last)
			}
			if code, _ := s.post(t, "/asks/"+own.ID, url.Values{"action": {"deny"}}); code != http.StatusOK {
				t.Errorf("the starter's deny: %d", code)
			}
		} else if got.Status != pending.Status(pending.Approved) {
			t.Errorf("%s: %d, ask %s", tc.name, code, got.Status)
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
		// console:dana is linked to no Slack user, so may be U0BO: the
		// two are one approval of two (this completed the quorum before).
		if a, _ := asks.Cast(t.Context(), q.ID, pending.Ballot{Outcome: pending.Approved, By: "U0BO", Person: "U0BO"}); a.Status != pending.StatusPending || a.Counted() != 1 {
			t.Errorf("a Slack approval beside the unlinked console user's: %s, %d counted", a.Status, a.Counted())
		}
	}
}

// The console's user counts as a person toward a quorum only as the Slack
// user the config links them to (pending.Options.People, from
// console.slack_user): linked, their Slack click after it is a repeat and
// another Slack user completes it; unlinked, their approval beside a Slack
// approver's is recorded and the flash says it adds nobody.
func TestConsoleQuorumCountsPeople(t *testing.T) {
	tests := []struct {
		name   string
		people map[string]string
		slack  []string // Slack approvers after the console's vote
		status pending.Status
		flash  string
	}{
		{"linked", map[string]string{"console:dana": "U0DANA"}, []string{"U0DANA", "U0BO"}, pending.Status(pending.Approved), "Your approval is counted: 1 of 2 approvals (console:dana)"},
		{"unlinked, after a Slack approver", nil, nil, pending.StatusPending, "Your approval is recorded, but it does not add a person to the count: 1 of 2 approvals (U0BO, console:dana); " + pending.UncountedNote},
	}
	for _, tc := range tests {
		asks := pending.NewMemoryStore(pending.Options{People: tc.people})
		defer asks.Close()
		gs := grants.NewMemoryStore(grants.Options{})
		defer gs.Close()
		c, err := console.New(deciding(t, asks, console.Config{Asks: asks, Grants: gs, Live: console.NewLive(), User: "dana"}, approval.DeciderConfig{}))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(c.Handler())
		s := signIn(t, c, srv.URL)
		q, _ := asks.Create(t.Context(), pending.Request{RunID: "r", StartedBy: "U0SOMEONE", Tool: "bash", Args: `{"command":"terraform apply"}`, Approvals: 2}, time.Minute)
		if tc.people == nil {
			if _, err := asks.Cast(t.Context(), q.ID, pending.Ballot{Outcome: pending.Approved, By: "U0BO", Person: "U0BO"}); err != nil {
				t.Fatal(err)
			}
		}
		if code, body := s.post(t, "/asks/"+q.ID, url.Values{"action": {"approve"}}); code != http.StatusOK || !strings.Contains(html.UnescapeString(body), tc.flash) {
			t.Errorf("%s: the console's vote: %d, want the flash %q\n%s", tc.name, code, tc.flash, body)
		}
		for i, u := range tc.slack {
			_, err := asks.Cast(t.Context(), q.ID, pending.Ballot{Outcome: pending.Approved, By: u, Person: u})
			if _, repeat := pending.RepeatVote(err); repeat != (i == 0) {
				t.Errorf("%s: %s's Slack approval after the console's: %v; a repeat is wanted only from the linked user", tc.name, u, err)
			}
		}
		if got, _ := asks.Get(t.Context(), q.ID); got.Status != tc.status {
			t.Errorf("%s: the Ask is %s (%s), want %s", tc.name, got.Status, got.Tally(), tc.status)
		}
		c.Close()
		srv.Close()
	}
}
