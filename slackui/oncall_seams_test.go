package slackui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// Where quorum, self-approval, escalation with DMs and the App Home meet:
// one replica wired as serve wires it (cmd/bot/app.go), over a memory
// store whose clock the test moves.

type seamWorld struct {
	*escalationWorld
	home  *Home
	inter *Interactions
}

func newSeamWorld(t *testing.T) *seamWorld {
	base, api := newOncallWorld(t)
	w := &seamWorld{escalationWorld: base}
	var err error
	w.esc, err = NewEscalation(EscalationConfig{
		RemindAfter:   5 * time.Minute,
		Levels:        []EscalationLevel{{After: 10 * time.Minute, Groups: []string{oncallGroup}, DM: true}},
		ApproverUsers: []string{approverA, approverB},
		Steps:         w.store, Groups: api, DM: api, Names: api,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.notifier = NewNotifier(api, NotifierConfig{
		ApprovalChannel: approvals, ScopeText: approval.ScopeText(approval.DefaultScopeFor),
		GrantDurations:     []time.Duration{15 * time.Minute},
		PerChannelInterval: time.Millisecond, Followups: w.esc,
	})
	approvers := testApprovers(t)
	rule := approval.SelfApproval{Allowed: false}
	w.home = NewHome(HomeConfig{
		Asks: w.store, API: api, Notifier: w.notifier,
		Approvers: AskDeciders{Approvers: approvers, Escalated: w.esc, Rule: rule},
		Poll:      20 * time.Millisecond, Debounce: time.Millisecond, PublishEvery: time.Millisecond,
	})
	runHome(t, w.home)
	asksUI := HomeNotifier{Notifier: w.notifier, Home: w.home}
	w.inter = NewInteractions(InteractionsConfig{
		Asks: w.store, Notifier: asksUI, Home: w.home, Approvers: approvers,
		Escalated: w.esc, API: api, Decider: testDecider(t, w.store, asksUI, approvers, rule),
	})
	w.url = serveInteractions(t, w.fake.SigningSecret(), w.inter)
	return w
}

// postReq records and posts req's Ask.
func (w *seamWorld) postReq(req pending.Request) pending.Ask {
	w.t.Helper()
	a := w.postRequest(req, 15*time.Minute)
	w.home.Changed()
	return a
}

// escalated moves past the reminder and the escalation and returns the
// Ask's DM to user.
func (w *seamWorld) escalated(a pending.Ask, user string) [2]string {
	w.t.Helper()
	w.clock.Advance(10 * time.Minute)
	w.runDue(2)
	got, _ := w.store.Get(w.t.Context(), a.ID)
	for _, c := range got.Copies.List() {
		if c[0] == "D"+user[1:] {
			return c
		}
	}
	w.t.Fatalf("no DM of ask %s to %s among %q", a.ID, user, got.Copies)
	return [2]string{}
}

func (w *seamWorld) clickHome(user, action, askID string) {
	w.t.Helper()
	payload, ok := w.fake.HomeBlockActionsPayload(user, action, askID)
	if !ok {
		w.t.Fatalf("no %s button for %s on the Home of %s", action, askID, user)
	}
	resp, err := w.fake.PostInteraction(w.t.Context(), w.url, payload)
	if err != nil {
		w.t.Fatal(err)
	}
	clickOK(w.t, resp)
}

// waitEphemeral waits for an ephemeral reply to user whose text is told by told.
func (w *seamWorld) waitEphemeral(what, user string, told func(text string) bool) {
	w.t.Helper()
	testwait.For(w.t, what, func() bool {
		for _, c := range w.fake.Calls("chat.postEphemeral") {
			if c.User == user && told(c.Text) {
				return true
			}
		}
		return false
	})
}

func (w *seamWorld) homeText(user string, pred func(string) bool) string {
	w.t.Helper()
	v, err := w.fake.WaitForHome(w.t.Context(), user, func(v fakeslack.View) bool { return pred(fakeslack.BlockText(v.Request.Blocks.BlockSet)) })
	if err != nil {
		got, _ := w.fake.Home(user)
		w.t.Fatalf("the Home of %s: %v\n%s", user, err, fakeslack.BlockText(got.Request.Blocks.BlockSet))
	}
	return fakeslack.BlockText(v.Request.Blocks.BlockSet)
}

// The run's starter is an on-call member: once escalated they get the DM
// and see the Ask on their Home, but may not approve it there or on the DM
// (self_approval off, and they are not the only approver); the other
// member, not an approver, gets buttons on the Home only once the level
// fired, and their Home click decides it.
func TestEscalatedStarterMayNotApproveAnywhere(t *testing.T) {
	w := newSeamWorld(t)
	ctx := t.Context()
	req := bashRequest("run-1", "sess-1", "terraform apply")
	req.StartedBy = oncallA
	a := w.postReq(req)
	w.home.Opened(oncallA)
	w.home.Opened(oncallB)
	w.homeText(oncallB, func(s string) bool { return strings.Contains(s, "not one of askops' approvers") })
	if v, _ := w.fake.Home(oncallB); buttonFor(v.Request.Blocks.BlockSet, ActionApprove, a.ID) {
		t.Fatal("an on-call member has buttons on the Home before the escalation")
	}

	dm := w.escalated(a, oncallA)
	w.homeText(oncallB, func(s string) bool { return strings.Contains(s, "Waiting for your decision:* 1") })
	starter := w.homeText(oncallA, func(s string) bool { return strings.Contains(s, "Your runs waiting for a decision:* 1") })
	if v, _ := w.fake.Home(oncallA); buttonFor(v.Request.Blocks.BlockSet, ActionApprove, a.ID) {
		t.Errorf("the starter's Home offers to approve their own run's Ask:\n%s", starter)
	}

	w.click(oncallA, dm[0], dm[1], a.ID, ActionApprove)
	w.waitEphemeral("the starter's refusal", oncallA, func(s string) bool { return strings.Contains(s, "You started this run") })
	if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.StatusPending {
		t.Fatalf("the starter's DM click decided their own Ask: %s", got.Status)
	}

	w.clickHome(oncallB, ActionApprove, a.ID)
	w.wantApprovedBy(a, oncallB, "after the on-call member's Home click")
	events, _ := w.store.Audit(ctx, 0)
	refused := 0
	for _, e := range events {
		if e.Kind == pending.EventRefused && e.By == oncallA {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d refusals of the starter audited, want 1", refused)
	}
}

// A quorum Ask escalated by DM: votes count from any copy, one person once
// across copies, every copy (channel, DMs, Homes) shows the tally and then
// the outcome, and no copy offers a session or time-boxed approval.
func TestQuorumVotesFromEveryCopy(t *testing.T) {
	w := newSeamWorld(t)
	ctx := t.Context()
	a := w.postReq(quorumRequest())
	dmB := w.escalated(a, oncallB)
	got, _ := w.store.Get(ctx, a.ID)
	messages := append([][2]string{{a.Channel, a.MessageTS}}, got.Copies.List()...)
	if len(messages) != 3 {
		t.Fatalf("messages of the Ask: %v", messages)
	}
	w.home.Opened(approverA)
	w.home.Opened(oncallB)
	w.homeText(oncallB, func(s string) bool { return strings.Contains(s, "0 of 2 approvals") })
	for _, user := range []string{approverA, oncallB} {
		v, _ := w.fake.WaitForHome(ctx, user, func(v fakeslack.View) bool { return homeAsks(v) == 1 })
		if buttonFor(v.Request.Blocks.BlockSet, ActionApproveSession, a.ID) || buttonFor(v.Request.Blocks.BlockSet, ApproveForAction(15*time.Minute), a.ID) {
			t.Errorf("the Home of %s offers a session approval on a quorum Ask", user)
		}
	}
	for _, m := range messages {
		msg, _ := w.fake.Message(m[0], m[1])
		if blocksHaveButton(msg.Blocks, ActionApproveSession) || blocksHaveButton(msg.Blocks, ApproveForAction(15*time.Minute)) {
			t.Errorf("copy %v offers a session approval on a quorum Ask", m)
		}
	}

	// The first vote, on the on-call member's DM.
	w.click(oncallB, dmB[0], dmB[1], a.ID, ActionApprove)
	tally := "1 of 2 approvals: <@" + oncallB + ">"
	testwait.For(t, "every message to show the tally", func() bool {
		for _, m := range messages {
			msg, _ := w.fake.Message(m[0], m[1])
			if !strings.Contains(fakeslack.BlockText(msg.Blocks), tally) || !blocksHaveButton(msg.Blocks, ActionApprove) {
				return false
			}
		}
		return true
	})
	w.homeText(approverA, func(s string) bool { return strings.Contains(s, tally) })

	// The same person again, from the Home: counted once.
	w.clickHome(oncallB, ActionApprove, a.ID)
	w.homeText(oncallB, func(s string) bool { return strings.Contains(s, "already approved") })
	if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.StatusPending || got.Votes.Count() != 1 {
		t.Fatalf("a second vote by the same person from another copy: %s, votes %q", got.Status, got.Votes)
	}

	// The second person, from the channel message: decided.
	w.click(approverA, a.Channel, a.MessageTS, a.ID, ActionApprove)
	testwait.For(t, "every message to show the outcome", func() bool {
		for _, m := range messages {
			msg, _ := w.fake.Message(m[0], m[1])
			if blocksHaveButton(msg.Blocks, ActionApprove) || !strings.Contains(fakeslack.BlockText(msg.Blocks), "2 of 2 approvals") {
				return false
			}
		}
		return true
	})
	w.homeText(oncallB, func(s string) bool {
		return strings.Contains(s, "Nothing is waiting") || strings.Contains(s, "not one of askops' approvers")
	})
	if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.Status(pending.Approved) || got.Votes.Count() != 2 {
		t.Errorf("ended %s with votes %q", got.Status, got.Votes)
	}
}

// voteAtCopy is a step store that, just before a DM copy is recorded, lets
// another replica's click land: f runs first. The DM was rendered from the
// record as it was claimed, and the click's update could not know the
// copy yet.
type voteAtCopy struct {
	StepStore
	f func()
}

func (v *voteAtCopy) ConfirmDirect(ctx context.Context, id, user, channel, ts string) error {
	if v.f != nil {
		v.f()
		v.f = nil
	}
	return v.StepStore.ConfirmDirect(ctx, id, user, channel, ts)
}

// A vote that lands while an escalation is sending its DMs still shows on
// every DM; so does a decision (no DM keeps buttons of a decided Ask).
func TestDMSentWhileVotingShowsTheVote(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    pending.Ballot
		want string
	}{
		{"vote", pending.Ballot{Outcome: pending.Approved, By: approverA}, "1 of 2 approvals: <@" + approverA + ">"},
		{"deny", pending.Ballot{Outcome: pending.Denied, By: approverA}, "Denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSeamWorld(t)
			ctx := t.Context()
			a := w.postReq(quorumRequest())
			hook := &voteAtCopy{StepStore: w.store}
			w.esc.cfg.Steps = hook
			hook.f = func() {
				if _, err := w.store.Cast(ctx, a.ID, tc.b); err != nil {
					t.Error(err)
				}
			}
			w.clock.Advance(10 * time.Minute)
			w.runDue(2)
			got, _ := w.store.Get(ctx, a.ID)
			dms := got.Copies.List()
			if len(dms) != 2 {
				t.Fatalf("DMs: %q", got.Copies)
			}
			testwait.For(t, "both DMs to show "+tc.want, func() bool {
				for _, c := range dms {
					m, _ := w.fake.Message(c[0], c[1])
					if !strings.Contains(fakeslack.BlockText(m.Blocks), tc.want) {
						return false
					}
					if got.Status != pending.StatusPending && blocksHaveButton(m.Blocks, ActionApprove) {
						return false
					}
				}
				return true
			})
		})
	}
}

// A quorum Ask that expires after one of its two approvals was answered:
// its expiry must not say "nobody answered" (the model and bot ask read
// it, next to "after 1 of 2 approvals").
func TestQuorumExpiryIsNotNobodyAnswered(t *testing.T) {
	w := newSeamWorld(t)
	ctx := t.Context()
	a := w.postReq(quorumRequest())
	w.escalated(a, oncallB)
	if _, err := w.store.Cast(ctx, a.ID, pending.Ballot{Outcome: pending.Approved, By: approverA}); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(5 * time.Minute)
	expired, err := w.store.Sweep(ctx, w.clock.Now())
	if err != nil || len(expired) != 1 {
		t.Fatalf("sweep: %d, %v", len(expired), err)
	}
	const want = "the 2 approvals needed did not come in 15m (reminded at 5m, escalated to @s_oncall at 10m)"
	if got := expired[0].DecisionReason; got != want {
		t.Errorf("expired with %q, want %q", got, want)
	}
}
