package console_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
)

// With approvals.grant_durations the console offers "Approve for 15 min"
// and "for 1 h" beside "for session", as Slack does; the choice reaches
// the Ask as its GrantTTL (which the waiting side records the grant from),
// and a duration not offered, or one without a session approval, is
// refused and changes nothing.
func TestConsoleGrantDurations(t *testing.T) {
	asks, gs := memoryStores(t)
	c, err := console.New(deciding(t, asks, console.Config{Asks: asks, Grants: gs, Live: console.NewLive(), User: "dana",
		ScopeText: approval.ScopeText(approval.DefaultScopeFor), GrantDurations: []time.Duration{15 * time.Minute, time.Hour}}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	_, s := serveSignedIn(t, c)

	a, err := asks.Create(t.Context(), pending.Request{RunID: "r1", SessionID: "s1", StartedBy: "U0SOMEONE", Tool: "bash",
		Args: `{"command":"make deploy"}`, Cwd: "/ws", Workspace: "/ws"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	page := s.get(t, "/live")
	for _, want := range []string{
		`<input type="hidden" name="grant_ttl" value="15m0s">`, `Approve for 15 min</button>`,
		`<input type="hidden" name="grant_ttl" value="1h0m0s">`, `Approve for 1 h</button>`,
		`Approve for session</button>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if !strings.Contains(page, `action="/asks/`+a.ID+`"`) {
		t.Errorf("the page has no form for the ask")
	}

	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"not offered", url.Values{"action": {"approve_session"}, "grant_ttl": {"10m"}}, "That grant duration is not offered"},
		{"not a duration", url.Values{"action": {"approve_session"}, "grant_ttl": {"soon"}}, "That grant duration is not offered"},
		{"without a session approval", url.Values{"action": {"approve"}, "grant_ttl": {"15m"}}, "A grant duration goes only with an approval for the session"},
	} {
		code, body := s.post(t, "/asks/"+a.ID, tc.form)
		if code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(body), tc.want) {
			t.Errorf("%s: %d, want 400 saying %q", tc.name, code, tc.want)
		}
	}
	if got, _ := asks.Get(t.Context(), a.ID); got.Status != pending.StatusPending {
		t.Fatalf("a refused choice changed the ask: %s", got.Status)
	}

	if code, body := s.post(t, "/asks/"+a.ID, url.Values{"action": {"approve_session"}, "grant_ttl": {"15m0s"}}); code != http.StatusOK {
		t.Fatalf("approve for 15 min: %d\n%s", code, body)
	}
	got, _ := asks.Get(t.Context(), a.ID)
	if got.Status != pending.Status(pending.ApprovedSession) || got.GrantTTL != 15*time.Minute || got.DecidedBy != "console:dana" {
		t.Errorf("after approve for 15 min: %s, grant life %s, by %q", got.Status, got.GrantTTL, got.DecidedBy)
	}
}
