package decidetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// The people: ana decides on every surface (U_ANA in Slack, "ana" signed
// in to the console, the token "ana-token"; the console user and the token
// are U_ANA toward a quorum); bo is a second Slack approver.
const (
	ana      = "U0ANA"
	bo       = "U0BO"
	stranger = "U0NOBODY"
	// partner is a Slack Connect channel's member from another
	// organisation, named among the approvers all the same.
	partner     = "U0PARTNER"
	partnerTeam = "T0PARTNER"
	anaToken    = "ana-token-value-123456"
	channel     = "CAPPROVALS"
)

// Outcomes a vote can have, as each surface's answer says it.
const (
	decided       = "decided"
	counted       = "counted"
	refusedSelf   = "refused: self-approval"
	refusedRepeat = "refused: repeat vote"
	refusedLate   = "refused: already decided"
	refusedOffer  = "refused: not offered here"
	refusedWho    = "refused: not someone who may decide"
	refusedOrg    = "refused: of another organisation"
)

// surface is one place ana decides from.
type surface struct {
	name string
	// starter is how a run ana starts records its starter there.
	starter string
	// vote casts who's action ("approve", "approve_session", "deny") on
	// a and says how the surface answered; on, if set, is the Ask whose
	// message the vote sits on (Slack only).
	vote func(t *testing.T, who, action string, a pending.Ask, on *pending.Ask) string
}

type world struct {
	asks   *pending.MemoryStore
	grants grants.Store
	fake   *fakeslack.Server
	notif  *slackui.Notifier
	// decider is the one every surface is handed, as cmd/bot hands its
	// one to Slack, the console and the API: the surfaces cannot differ
	// by wiring.
	decider *approval.Decider
}

func TestDecidingRulesAgreeOnEverySurface(t *testing.T) {
	w := newWorld(t)
	surfaces := []surface{w.slackSurface(t), w.consoleSurface(t), w.apiSurface(t)}

	type step struct {
		who, action string
		want        string
	}
	for _, tc := range []struct {
		name      string
		approvals int
		selfRun   bool                          // ana started the run
		before    func(*testing.T, pending.Ask) // what happened first
		otherMsg  bool                          // the click sits on another Ask's message
		slackOnly bool                          // only a message can be the wrong one
		steps     []step
		status    pending.Status
		tally     int // approvals counted at the end
		refusals  int // refusal events audited
	}{
		{name: "one approval decides", steps: []step{{"ana", "approve", decided}}, status: pending.Status(pending.Approved)},
		{name: "self-approval", selfRun: true, steps: []step{{"ana", "approve", refusedSelf}}, status: pending.StatusPending, refusals: 1},
		{name: "quorum of 2 with a repeat vote", approvals: 2,
			steps:  []step{{"ana", "approve", counted}, {"ana", "approve", refusedRepeat}},
			status: pending.StatusPending, tally: 1, refusals: 1},
		{name: "late click after a decision",
			before: func(t *testing.T, a pending.Ask) {
				if _, err := w.asks.Decide(t.Context(), a.ID, pending.Denied, bo, ""); err != nil {
					t.Fatal(err)
				}
			},
			steps: []step{{"ana", "approve", refusedLate}}, status: pending.Status(pending.Denied)},
		{name: "wrong message binding", otherMsg: true, slackOnly: true,
			steps: []step{{"ana", "approve", refusedOffer}}, status: pending.StatusPending},
		{name: "approve_session where not offered", approvals: 2,
			steps: []step{{"ana", "approve_session", refusedOffer}}, status: pending.StatusPending},
		{name: "unknown user", steps: []step{{"stranger", "approve", refusedWho}}, status: pending.StatusPending},
		// Slack's own: the console's user signs in and a token is a
		// credential, neither has a Slack team. The partner's vote is no
		// vote: no tally, no refusal event (slackui.Workspace).
		{name: "another organisation's member", slackOnly: true,
			steps: []step{{"partner", "approve", refusedOrg}, {"partner", "deny", refusedOrg}}, status: pending.StatusPending},
	} {
		for _, s := range surfaces {
			if tc.slackOnly && s.name != "slack" {
				continue // the console's form and the API name their Ask, on no message
			}
			t.Run(tc.name+"/"+s.name, func(t *testing.T) {
				starter := "UOWNER"
				if tc.selfRun {
					starter = s.starter
				}
				a := w.ask(t, starter, tc.approvals)
				var on *pending.Ask
				if tc.otherMsg {
					other := w.ask(t, "UOWNER", 0)
					on = &other
				}
				if tc.before != nil {
					tc.before(t, a)
				}
				for i, st := range tc.steps {
					if got := s.vote(t, st.who, st.action, a, on); got != st.want {
						t.Fatalf("step %d (%s %s): %s, want %s", i, st.who, st.action, got, st.want)
					}
				}
				final, err := w.asks.Get(t.Context(), a.ID)
				if err != nil {
					t.Fatal(err)
				}
				if final.Status != tc.status || final.Counted() != tc.tally {
					t.Errorf("ask ended %s with %d approvals counted, want %s with %d", final.Status, final.Counted(), tc.status, tc.tally)
				}
				if n := w.refusals(t, a.ID); n != tc.refusals {
					t.Errorf("%d refusals audited, want %d", n, tc.refusals)
				}
			})
		}
	}
}

func newWorld(t *testing.T) *world {
	w := &world{
		asks: pending.NewMemoryStore(pending.Options{People: map[string]string{
			console.DeciderPrefix + "ana": ana, "ana-token": ana,
		}}),
		grants: grants.NewMemoryStore(grants.Options{}),
		fake:   fakeslack.New(t, fakeslack.Options{}),
	}
	t.Cleanup(func() { w.asks.Close(); w.grants.Close() })
	api := slack.New(w.fake.BotToken(), slack.OptionAPIURL(w.fake.APIURL()))
	w.notif = slackui.NewNotifier(api, slackui.NotifierConfig{
		ApprovalChannel: channel, ScopeText: approval.ScopeText(nil),
		PerChannelInterval: time.Millisecond, MaxAttempts: 1,
	})
	scope := approval.ScopeText(nil)
	w.decider = approval.NewDecider(approval.DeciderConfig{
		Asks: w.asks, Messages: []approval.MessageUpdater{w.notif},
		SessionOffered: func(a pending.Ask) bool { return scope(a) != "" },
	})
	t.Cleanup(w.decider.Close)
	return w
}

// ask records an open Ask started by starter, needing approvals, and posts
// its message (recorded on the Ask, as the round trip does).
func (w *world) ask(t *testing.T, starter string, approvals int) pending.Ask {
	t.Helper()
	ctx := t.Context()
	args, _ := json.Marshal(map[string]string{"command": "make deploy"})
	a, err := w.asks.Create(ctx, pending.Request{
		RunID: "run-" + t.Name(), SessionID: "sess-1", Label: "deploy-bot", StartedBy: starter,
		Tool: "bash", Args: string(args), Summary: "make deploy", Reason: "side effect",
		Approvals: approvals, Workspace: "/ws", Cwd: "/ws",
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ch, ts, err := w.notif.Post(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.asks.SetMessage(ctx, a.ID, ch, ts); err != nil {
		t.Fatal(err)
	}
	a.Channel, a.MessageTS = ch, ts
	return a
}

func (w *world) refusals(t *testing.T, askID string) int {
	t.Helper()
	es, err := w.asks.AuditLatest(t.Context(), pending.EventRefused, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.AskID == askID {
			n++
		}
	}
	return n
}

// slackSurface clicks through the fake Slack's signed interactions; the
// answer is what the clicker was told (an ephemeral), or the store's
// change when a decision tells them nothing.
func (w *world) slackSurface(t *testing.T) surface {
	approvers, err := slackui.NewApprovers(slackui.ApproversConfig{Users: []string{ana, bo, partner}})
	if err != nil {
		t.Fatal(err)
	}
	w.fake.SetUserTeam(partner, partnerTeam)
	api := slack.New(w.fake.BotToken(), slack.OptionAPIURL(w.fake.APIURL()))
	inter := slackui.NewInteractions(slackui.InteractionsConfig{
		Asks: w.asks, Notifier: w.notif, Approvers: approvers, Decider: w.decider,
		API: api, Now: time.Now,
		Workspace: slackui.NewWorkspace(api), // as cmd/bot wires it: auth.test's team
	})
	t.Cleanup(func() { _ = inter.Close() })
	srv := httptest.NewServer(slackui.Verified(w.fake.SigningSecret(), time.Now, inter))
	t.Cleanup(srv.Close)
	ids := map[string]string{"ana": ana, "stranger": stranger, "partner": partner}
	actions := map[string]string{"approve": slackui.ActionApprove, "approve_session": slackui.ActionApproveSession, "deny": slackui.ActionDeny}
	return surface{name: "slack", starter: ana, vote: func(t *testing.T, who, action string, a pending.Ask, on *pending.Ask) string {
		t.Helper()
		user := ids[who]
		before := len(w.ephemerals(user))
		msg := a
		if on != nil {
			msg = *on
		}
		payload := w.fake.BlockActionsPayload(fakeslack.BlockActions{
			User: user, Channel: msg.Channel, MessageTS: msg.MessageTS, ActionID: actions[action], Value: a.ID,
		})
		resp, err := w.fake.PostInteraction(t.Context(), srv.URL, payload)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("interaction: %d", resp.StatusCode)
		}
		// The decision is recorded before the acknowledgement; what the
		// clicker is told follows in the background.
		if got, _ := w.asks.Get(t.Context(), a.ID); got.Status != pending.StatusPending && a.Status == pending.StatusPending && got.DecidedBy == user {
			return decided
		}
		text := w.nextEphemeral(t, user, before)
		switch {
		case strings.HasPrefix(text, "Your approval is counted"):
			return counted
		case text == approval.SelfApprovalRefusal:
			return refusedSelf
		case strings.Contains(text, "one person counts once"):
			return refusedRepeat
		case strings.HasPrefix(text, "Already "):
			return refusedLate
		case strings.HasPrefix(text, "This button was not offered"):
			return refusedOffer
		case strings.HasPrefix(text, "You are not one of the approvers"):
			return refusedWho
		case text == slackui.OutsiderText:
			return refusedOrg
		}
		return "told: " + text
	}}
}

func (w *world) ephemerals(user string) []string {
	var out []string
	for _, c := range w.fake.Calls("chat.postEphemeral") {
		if c.Form.Get("user") == user {
			out = append(out, c.Form.Get("text"))
		}
	}
	return out
}

// nextEphemeral waits (bounded) for user's ephemeral after the first
// before, and returns its text.
func (w *world) nextEphemeral(t *testing.T, user string, before int) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if got := w.ephemerals(user); len(got) > before {
			return got[before]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ephemeral told %s anything", user)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// consoleSurface posts the console's form, signed in as ana, with the
// session's CSRF token; the stranger has no session.
func (w *world) consoleSurface(t *testing.T) surface {
	srv, jar, csrf := signedInConsole(t, console.Config{Asks: w.asks, Grants: w.grants, Decider: w.decider})
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return surface{name: "console", starter: "ana@build-1", vote: func(t *testing.T, who, action string, a pending.Ask, _ *pending.Ask) string {
		t.Helper()
		cl := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
		if who != "ana" {
			cl.Jar = nil // not signed in
		}
		form := url.Values{"csrf": {csrf}, "action": {action}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/asks/"+a.ID, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch text := string(body); {
		case resp.StatusCode == http.StatusSeeOther:
			return decided
		case resp.StatusCode == http.StatusOK && strings.Contains(text, "Your approval is counted"):
			return counted
		case resp.StatusCode == http.StatusForbidden && strings.Contains(text, "You started this run"):
			return refusedSelf
		case resp.StatusCode == http.StatusConflict && strings.Contains(text, "one person counts once"):
			return refusedRepeat
		case resp.StatusCode == http.StatusConflict && strings.Contains(text, "Already "):
			return refusedLate
		case resp.StatusCode == http.StatusBadRequest && strings.Contains(text, "approval for the session is not offered"):
			return refusedOffer
		case resp.StatusCode == http.StatusUnauthorized:
			return refusedWho
		default:
			return fmt.Sprintf("answered %d", resp.StatusCode)
		}
	}}
}

// apiSurface POSTs /v1/asks/{id}/decision with ana's token (a stranger's
// is no token of this serve).
func (w *world) apiSurface(t *testing.T) surface {
	core, err := approval.New(approval.Config{
		Asks: w.asks, Grants: w.grants, Notifiers: []approval.Notifier{w.notif},
		Timeout: time.Minute, SessionTTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := askAPI(t, w.asks, w.grants, core, w.decider, "ana-token", anaToken)
	return surface{name: "api", starter: "ana-token", vote: func(t *testing.T, who, action string, a pending.Ask, _ *pending.Ask) string {
		t.Helper()
		token := anaToken
		if who != "ana" {
			token = "not-a-token-of-this-serve"
		}
		body, _ := json.Marshal(gateway.DecisionBody{Decision: action})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/asks/"+a.ID+"/decision", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error  string `json:"error"`
			Status string `json:"status"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK && got.Status == string(pending.StatusPending):
			return counted
		case resp.StatusCode == http.StatusOK:
			return decided
		case resp.StatusCode == http.StatusForbidden && got.Error == "a token may not decide an ask it made":
			return refusedSelf
		case resp.StatusCode == http.StatusConflict && strings.HasPrefix(got.Error, "you have already approved"):
			return refusedRepeat
		case resp.StatusCode == http.StatusConflict && got.Error == "already decided":
			return refusedLate
		case resp.StatusCode == http.StatusBadRequest && strings.Contains(got.Error, "approve_session is not offered"):
			return refusedOffer
		case resp.StatusCode == http.StatusUnauthorized:
			return refusedWho
		default:
			return fmt.Sprintf("answered %d %q", resp.StatusCode, got.Error)
		}
	}}
}
