package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

// TestSessionStartIsTheFirstSeenOnEveryReplica: a session's Asks name the
// start of its first call, whichever replica that call reached and the
// later Ask's reached: two gateways on one Redis, the first sees the
// session at 14:02 (a call the policy allows), the other makes its Ask at
// 15:30, and the Ask, its Slack message (in each reader's zone) and the
// scope of "Approve for session" (in UTC) say "started 14:02".
func TestSessionStartIsTheFirstSeenOnEveryReplica(t *testing.T) {
	rds := redistest.Start(t)
	client, err := redisconn.Open(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	first := time.Date(2026, 12, 2, 14, 2, 7, 0, time.UTC)
	later := first.Add(88 * time.Minute)

	replica := func(now time.Time) (*Service, *approval.Core, pending.Store) {
		asks := pending.NewMemoryStore(pending.Options{Now: func() time.Time { return now }})
		t.Cleanup(func() { asks.Close() })
		gs := grants.NewMemoryStore(grants.Options{})
		t.Cleanup(func() { gs.Close() })
		core, err := approval.New(approval.Config{
			Asks: asks, Grants: gs, Notifiers: []approval.Notifier{offerNotifier{}}, Timeout: time.Minute, SessionTTL: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := policy.New(policy.Config{Grants: gs})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := New(Config{
			Asks: asks, Approver: core, Policy: engine, MaxTimeout: time.Minute,
			Sessions: sessions.NewRedisStore(client, sessions.Options{}), Now: func() time.Time { return now },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(svc.Close)
		return svc, core, asks
	}
	const session = "0199a213-81c0-7800-8aa1-bbab2a035a53" // as Codex names one
	a, _, _ := replica(first)
	read := Call{Call: hook.Call{SessionID: session, Agent: hook.AgentCodex, Tool: "Read", Input: json.RawMessage(`{"file_path":"/home/ana/src/api/go.mod"}`), Cwd: "/home/ana/src/api", By: "ana", Resolved: true}}
	if _, final, decided := a.judge(t.Context(), read); !decided || final.Status != pending.Status(pending.Approved) {
		t.Fatalf("the first call (a read in the workspace): decided %v, %s; want the policy's allow", decided, final.Status)
	}

	b, core, asks := replica(later)
	req, _, decided := b.judge(t.Context(), Call{Call: hook.Call{SessionID: session, Agent: hook.AgentCodex, Tool: "Bash", Input: json.RawMessage(`{"command":"make deploy"}`), Cwd: "/home/ana/src/api", By: "ana"}})
	if decided {
		t.Fatal("the policy decided make deploy")
	}
	if !req.SessionStarted.Equal(first.Truncate(time.Second)) || req.SessionName != "this Codex session in ~/src/api" {
		t.Fatalf("the later Ask's session: %q started %v, want this Codex session in ~/src/api started %v", req.SessionName, req.SessionStarted, first)
	}
	ask, err := asks.Create(t.Context(), core.Prepare(req), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ask.Shown == nil || ask.Shown.Started != first.Unix() {
		t.Fatalf("the Ask stores the start %+v, want %d", ask.Shown, first.Unix())
	}
	scope := approval.ScopeText(nil)(ask)
	if !strings.HasSuffix(scope, "— in this Codex session in ~/src/api, started 14:02 UTC") {
		t.Errorf("scope text %q", scope)
	}
	msg := slackui.RenderAsk(ask, slackui.RenderOptions{GrantScope: scope})
	raw, _ := json.Marshal(msg.Blocks)
	// (Slack's prose shows ~ as ∼: it would strike text through.)
	want := fmt.Sprintf("*Session:* this Codex session in ∼/src/api, started <!date^%d^{time}|14:02 UTC>", first.Unix())
	if !strings.Contains(string(raw), strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(want)) {
		t.Errorf("the Slack message lacks %q:\n%s", want, raw)
	}
	if confirm, ok := sessionButton(msg); !ok || !strings.Contains(confirm, "started 14:02 UTC") {
		t.Errorf("the confirmation %q (button %v) does not say when the session started", confirm, ok)
	}
}

// A session is named by what a person knows it by: an id its caller chose
// is kept, a generated one left out while the start tells sessions apart
// (and its head kept when the start is unknown).
func TestSessionNames(t *testing.T) {
	for _, tc := range []struct {
		agent, session, workspace string
		started                   bool
		want                      string
	}{
		{hook.AgentClaude, "3f2a9c1b-7e4d-4f6a-9b1c-2d3e4f5a6b7c", "/home/ana/src/api", true, "this Claude Code session in ~/src/api"},
		{hook.AgentClaude, "3f2a9c1b-7e4d-4f6a-9b1c-2d3e4f5a6b7c", "/home/ana/src/api", false, "this Claude Code session 3f2a… in ~/src/api"},
		{"bot mcp", "ses_" + strings.Repeat("a", 26), "", true, "this bot mcp session"},
		{"bot ask on lap", "nightly", "/srv/app", true, "this bot ask on lap session 'nightly' in /srv/app"},
		{"", "a very long session name that somebody chose once", "", true, "this agent session 'a very long session name that somebody …'"},
		{hook.AgentClaude, "", "/srv/app", true, ""},
	} {
		if got := sessionName(tc.agent, tc.session, tc.workspace, tc.started); got != tc.want {
			t.Errorf("sessionName(%q, %q, %q, %v) = %q, want %q", tc.agent, tc.session, tc.workspace, tc.started, got, tc.want)
		}
	}
}
