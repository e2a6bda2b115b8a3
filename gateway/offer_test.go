package gateway

import (
	"context"
	"encoding/json"
	"github.com/askops/askops/gateway/script"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

// offerNotifier shows nothing: the offer test only prepares Asks.
type offerNotifier struct{}

func (offerNotifier) PostThen(_ context.Context, _ *pending.Ask, done func(string, string, error)) {
	go done("", "", nil)
}
func (offerNotifier) Update(context.Context, pending.Ask) error { return nil }

// TestSessionOfferOnlyWhereALaterCallCanMatch is issue 24's rule at every
// door that builds a request: "Approve for session" is offered, and its
// scope names the session as a person knows it, only where a later call
// shares the session; a bot ask without -session (its session is its own,
// locally or through a serve's API) is not offered it, on Slack or
// anywhere.
func TestSessionOfferOnlyWhereALaterCallCanMatch(t *testing.T) {
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { gs.Close() })
	core, err := approval.New(approval.Config{
		Asks: asks, Grants: gs, Notifiers: []approval.Notifier{offerNotifier{}},
		Timeout: time.Minute, SessionTTL: time.Hour, GrantDurations: []time.Duration{15 * time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := policy.New(policy.Config{Grants: gs})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Truncate(time.Minute) // the sessions are first seen now
	svc, err := New(Config{Asks: asks, Approver: core, Policy: engine, MaxTimeout: time.Minute, Now: func() time.Time { return started }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	judged := func(c Call) pending.Request {
		t.Helper()
		req, final, decided := svc.judge(t.Context(), c)
		if decided {
			t.Fatalf("the policy decided %+v: %s", c, final.Status)
		}
		return req
	}
	input := json.RawMessage(`{"command":"make deploy"}`)
	botAsk := script.Question{Command: "make deploy", User: "ana", Host: "lap", Cwd: "/home/ana/src/api"}
	nightly := botAsk
	nightly.Session = "nightly"

	tests := []struct {
		name      string
		req       pending.Request
		wantScope string // "" means not offered
	}{
		{"bot ask without -session", botAsk.Request(), ""},
		{"bot ask -session", nightly.Request(), "— in bot ask session 'nightly'"},
		{"Claude Code hook", judged(Call{Call: hook.Call{SessionID: "3f2a9c1b-7e4d-4f6a-9b1c-2d3e4f5a6b7c", Agent: hook.AgentClaude, Tool: "Bash", Input: input, Cwd: "/home/ana/src/api", By: "ana"}}),
			"— in this Claude Code session in ~/src/api, started " + started.Format("15:04") + " UTC"},
		{"bot ask through a serve's API, without -session", judged(Call{Call: hook.Call{SessionID: "ask-0a1b2c", Agent: "bot ask on lap", Tool: "Bash", Input: input, Cwd: "/home/ana/src/api", By: "ana", OneOff: true}}), ""},
		{"bot ask through a serve's API, -session", judged(Call{Call: hook.Call{SessionID: "nightly", Agent: "bot ask on lap", Tool: "Bash", Input: input, Cwd: "/home/ana/src/api", By: "ana"}}),
			"— in this bot ask on lap session 'nightly' in ~/src/api, started " + started.Format("15:04") + " UTC"},
	}
	scopeText := approval.ScopeText(nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := asks.Create(t.Context(), core.Prepare(tc.req), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			offered, known := a.OffersSession()
			if !known || offered != (tc.wantScope != "") {
				t.Fatalf("offers session %v (known %v), want %v", offered, known, tc.wantScope != "")
			}
			scope := scopeText(a)
			if !strings.HasSuffix(scope, tc.wantScope) || (tc.wantScope == "") != (scope == "") {
				t.Errorf("scope text %q, want it to end %q", scope, tc.wantScope)
			}
			msg := slackui.RenderAsk(a, slackui.RenderOptions{GrantScope: scope, GrantDurations: []time.Duration{15 * time.Minute}})
			confirm, button := sessionButton(msg)
			if button != (tc.wantScope != "") {
				t.Fatalf("Slack's Approve for session button: %v, want %v", button, tc.wantScope != "")
			}
			if button && !strings.Contains(confirm, tc.wantScope) {
				t.Errorf("the confirmation does not name the session: %q", confirm)
			}
		})
	}
}

// sessionButton is the confirmation text of msg's "Approve for session"
// button, and whether there is one.
func sessionButton(msg slackui.Message) (string, bool) {
	for _, b := range msg.Blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.Elements == nil {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == slackui.ActionApproveSession {
				if btn.Confirm == nil || btn.Confirm.Text == nil {
					return "", true
				}
				return btn.Confirm.Text.Text, true
			}
		}
	}
	return "", false
}

// TestAPIRefusesASessionApprovalNotOffered: POST decision approve_session
// on an Ask that offers none (a bot ask without -session) is refused and
// decides nothing, as Slack's and the console's clicks are.
func TestAPIRefusesASessionApprovalNotOffered(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	body := bashAsk("make deploy")
	body["one_off"] = true
	made := call(t, "POST", u+"/v1/asks", askToken, body)
	if made.Status != 201 {
		t.Fatalf("ask: %d %s", made.Status, made.Raw)
	}
	id := made.Body["id"].(string)
	if r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve_session"}); r.Status != 409 || !strings.Contains(string(r.Raw), "offers no approval for the session") {
		t.Fatalf("approve_session on an ask that offers none: %d %s", r.Status, r.Raw)
	}
	a, err := s.asks.Get(t.Context(), id)
	if err != nil || a.Status != pending.StatusPending {
		t.Fatalf("after the refusal: %s %v", a.Status, err)
	}
	if r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
}
