package slackui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

const (
	oncallGroup = "S_ONCALL"
	oncallA     = "UONCALLA"
	oncallB     = "UONCALLB"
)

// escalationWorld is one replica's follow-ups and clicks over a memory
// store driven by a test clock, and a fake Slack.
type escalationWorld struct {
	t        *testing.T
	clock    *testclock.Clock
	fake     *fakeslack.Server
	store    *pending.MemoryStore
	notifier *Notifier
	esc      *Escalation
	url      string
}

// newOncallWorld is what every on-call world starts from: a test clock
// at the current whole second, a fake Slack whose on-call group is
// oncallA and oncallB, and a memory store on that clock. It returns the
// Slack client on the fake; the caller adds the escalation, the
// notifier and the clicking side.
func newOncallWorld(t *testing.T) (*escalationWorld, *slack.Client) {
	verifyNoLeaks(t)
	w := &escalationWorld{t: t, clock: testclock.New(time.Now().UTC().Truncate(time.Second))}
	w.fake = fakeslack.New(t, fakeslack.Options{SigningSecret: "test-secret", UserGroups: map[string][]string{oncallGroup: {oncallA, oncallB}}})
	w.store = pending.NewMemoryStore(pending.Options{Now: w.clock.Now})
	t.Cleanup(func() { w.store.Close() })
	return w, fakeAPI(w.fake)
}

func newEscalationWorld(t *testing.T) *escalationWorld {
	w, api := newOncallWorld(t)
	w.fake.SetUserGroupHandle(oncallGroup, "oncall")
	var err error
	w.esc, err = NewEscalation(EscalationConfig{
		RemindAfter:   5 * time.Minute,
		Levels:        []EscalationLevel{{After: 10 * time.Minute, Groups: []string{oncallGroup}, DM: true}},
		ApproverUsers: []string{approverA}, ApproverGroups: []string{"SAPPROVERS"},
		Steps: w.store, Groups: api, DM: api, History: api, Names: api,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.notifier = NewNotifier(api, NotifierConfig{
		ApprovalChannel: approvals, ScopeText: approval.ScopeText(approval.DefaultScopeFor),
		PerChannelInterval: time.Millisecond, Followups: w.esc,
	})
	approvers, err := NewApprovers(ApproversConfig{Users: []string{approverA}})
	if err != nil {
		t.Fatal(err)
	}
	inter := NewInteractions(InteractionsConfig{Asks: w.store, Notifier: w.notifier, Approvers: approvers, Escalated: w.esc, API: api,
		Decider: testDecider(t, w.store, w.notifier, approvers, approval.SelfApproval{})})
	w.url = serveInteractions(t, w.fake.SigningSecret(), inter)
	return w
}

// post records and posts an Ask as the approval round trip does.
func (w *escalationWorld) post(ttl time.Duration) pending.Ask {
	w.t.Helper()
	return w.postRequest(bashRequest("run-1", "sess-1", "terraform apply"), ttl)
}

// postRequest records req's Ask, open for ttl, posts it and saves where
// its message is, as the approval round trip does, and returns it with
// its message.
func (w *escalationWorld) postRequest(req pending.Request, ttl time.Duration) pending.Ask {
	w.t.Helper()
	ctx := w.t.Context()
	a, err := w.store.Create(ctx, req, ttl)
	if err != nil {
		w.t.Fatal(err)
	}
	ch, ts, err := w.notifier.Post(ctx, a)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.store.SetMessage(ctx, a.ID, ch, ts); err != nil {
		w.t.Fatal(err)
	}
	a.Channel, a.MessageTS = ch, ts
	return a
}

// wantApprovedBy fails the test unless a's record says it is approved,
// by user; what names the step checked, for the failure.
func (w *escalationWorld) wantApprovedBy(a pending.Ask, user, what string) {
	w.t.Helper()
	if got, _ := w.store.Get(w.t.Context(), a.ID); got.Status != pending.Status(pending.Approved) || got.DecidedBy != user {
		w.t.Fatalf("%s: %s by %q, want approved by %s", what, got.Status, got.DecidedBy, user)
	}
}

func (w *escalationWorld) runDue(want int) {
	w.t.Helper()
	n, err := w.esc.RunDue(w.t.Context(), w.notifier)
	if err != nil || n != want {
		w.t.Fatalf("RunDue = %d, %v; want %d steps done", n, err, want)
	}
}

func (w *escalationWorld) click(user, channel, ts, askID, action string) {
	w.t.Helper()
	payload := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: user, Channel: channel, MessageTS: ts, ActionID: action, Value: askID})
	resp, err := w.fake.PostInteraction(w.t.Context(), w.url, payload)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
}

func (w *escalationWorld) thread(a pending.Ask) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range w.fake.Thread(a.Channel, a.MessageTS) {
		if m.TS != a.MessageTS {
			out = append(out, m)
		}
	}
	return out
}

// An unanswered Ask gets one reminder mentioning its approvers, then its
// escalation: a mention of the on-call group in the thread and the Ask as a
// direct message to each member. Only then may a member decide it, from
// their DM, and every copy shows the decision.
func TestReminderThenEscalationByDM(t *testing.T) {
	w := newEscalationWorld(t)
	a := w.post(15 * time.Minute)

	w.runDue(0)
	w.clock.Advance(5 * time.Minute)
	w.runDue(1)
	th := w.thread(a)
	if len(th) != 1 || !strings.Contains(th[0].Text, "<@"+approverA+">") || !strings.Contains(th[0].Text, "<!subteam^SAPPROVERS>") || !strings.Contains(th[0].Text, "Reminder") {
		t.Fatalf("after 5m the thread holds %+v, want one reminder mentioning the approvers", th)
	}
	w.runDue(0) // a step is done once

	// Not escalated yet: the on-call member may not decide.
	w.click(oncallA, a.Channel, a.MessageTS, a.ID, ActionApprove)
	testwait.For(t, "the refusal", func() bool { return len(w.fake.Calls("chat.postEphemeral")) == 1 })
	if got, _ := w.store.Get(t.Context(), a.ID); got.Status != pending.StatusPending {
		t.Fatalf("an on-call member decided before the escalation: %s", got.Status)
	}

	w.clock.Advance(5 * time.Minute)
	w.runDue(1)
	w.runDue(0)
	th = w.thread(a)
	if len(th) != 2 || !strings.Contains(th[1].Text, "<!subteam^"+oncallGroup+">") || !strings.Contains(th[1].Text, "Escalated") {
		t.Fatalf("after 10m the thread holds %d messages, the last %q; want the escalation", len(th), th[len(th)-1].Text)
	}
	got, _ := w.store.Get(t.Context(), a.ID)
	copies := got.Copies.List()
	if len(copies) != 2 {
		t.Fatalf("copies = %q, want a DM to each of the 2 members", got.Copies)
	}
	for _, c := range copies {
		m, ok := w.fake.Message(c[0], c[1])
		if !ok || !strings.HasPrefix(c[0], "D") || !blocksHaveButton(m.Blocks, ActionApprove) {
			t.Fatalf("copy %v is not a DM with buttons", c)
		}
	}

	// A click on a message that is no copy of the Ask changes nothing.
	w.click(oncallB, copies[0][0], "1.000001", a.ID, ActionApprove)
	testwait.For(t, "the refusal", func() bool { return len(w.fake.Calls("chat.postEphemeral")) == 2 })
	if got, _ := w.store.Get(t.Context(), a.ID); got.Status != pending.StatusPending {
		t.Fatalf("a click on a message that is no copy decided the Ask: %s", got.Status)
	}
	// The member's click on their DM decides it.
	var mine [2]string
	for _, c := range copies {
		if c[0] == "D"+oncallB[1:] {
			mine = c
		}
	}
	w.click(oncallB, mine[0], mine[1], a.ID, ActionApprove)
	testwait.For(t, "every copy to show the decision", func() bool {
		for _, m := range append(copies, [2]string{a.Channel, a.MessageTS}) {
			msg, _ := w.fake.Message(m[0], m[1])
			if blocksHaveButton(msg.Blocks, ActionApprove) || !strings.Contains(fakeslack.BlockText(msg.Blocks), "Approved") {
				return false
			}
		}
		return true
	})
	got, _ = w.store.Get(t.Context(), a.ID)
	if got.Status != pending.Status(pending.Approved) || got.DecidedBy != oncallB {
		t.Errorf("the Ask ended %s by %s, want approved by %s", got.Status, got.DecidedBy, oncallB)
	}
	events, _ := w.store.Audit(t.Context(), 0)
	kinds := map[pending.EventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	if kinds[pending.EventReminded] != 1 || kinds[pending.EventEscalated] != 1 || kinds[pending.EventDecided] != 1 {
		t.Errorf("audit kinds = %v", kinds)
	}
	// Decided: nothing more is due.
	w.clock.Advance(time.Hour)
	w.runDue(0)
}

// An Ask nobody answers expires saying what was tried, and its message
// shows it.
func TestExpiryTellsWhatWasTried(t *testing.T) {
	w := newEscalationWorld(t)
	a := w.post(15 * time.Minute)
	w.clock.Advance(10 * time.Minute)
	w.runDue(2)
	w.clock.Advance(5 * time.Minute)
	expired, err := w.store.Sweep(t.Context(), w.clock.Now())
	if err != nil || len(expired) != 1 {
		t.Fatalf("sweep: %d, %v", len(expired), err)
	}
	const want = "nobody answered in 15m (reminded at 5m, escalated to @oncall at 10m)"
	if expired[0].DecisionReason != want {
		t.Errorf("expired with %q, want %q", expired[0].DecisionReason, want)
	}
	w.notifier.UpdateExpired(t.Context(), expired)
	for _, m := range append(expired[0].Copies.List(), [2]string{a.Channel, a.MessageTS}) {
		msg, _ := w.fake.Message(m[0], m[1])
		if txt := fakeslack.BlockText(msg.Blocks); !strings.Contains(txt, "Expired") || !strings.Contains(txt, "reminded at 5m, escalated to <!subteam^S_ONCALL> at 10m") {
			t.Errorf("message %v says:\n%s", m, txt)
		}
	}
}

// Steps past the deadline are not scheduled; with nothing configured there
// is no Escalation at all.
func TestScheduleSkipsStepsPastTheDeadline(t *testing.T) {
	w := newEscalationWorld(t)
	w.post(7 * time.Minute) // the reminder (5m) fits, the escalation (10m) does not
	w.clock.Advance(time.Hour)
	w.runDue(1)
	if e, err := NewEscalation(EscalationConfig{}); e != nil || err != nil {
		t.Errorf("NewEscalation of nothing = %v, %v", e, err)
	}
	var none *Escalation
	if err := none.Schedule(context.Background(), pending.Ask{}); err != nil {
		t.Error(err)
	}
}

// claimSignal is a step store that says when a claim was handed out.
type claimSignal struct {
	StepStore
	claimed chan struct{}
}

func (c claimSignal) ClaimSteps(ctx context.Context, lease time.Duration, limit int) ([]pending.ClaimedStep, error) {
	steps, err := c.StepStore.ClaimSteps(ctx, lease, limit)
	if len(steps) > 0 {
		close(c.claimed)
	}
	return steps, err
}

// A follow-up points to its Ask: a step claimed before the Ask's message
// is recorded (the Ask waited for a busy channel past the step's time; the
// steps are scheduled as it is shown, a moment before the record has its
// message) waits for the message, and then the reminder, the escalation
// and its DMs all go in the Ask's thread, after it.
func TestFollowupsWaitForTheirAsksMessage(t *testing.T) {
	w := newEscalationWorld(t)
	ctx := t.Context()
	a, err := w.store.Create(ctx, bashRequest("run-1", "sess-1", "terraform apply"), 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ch, ts, err := w.notifier.Post(ctx, a) // shown; its steps scheduled; its message not yet recorded
	if err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(10 * time.Minute) // both steps due
	claims := claimSignal{StepStore: w.store, claimed: make(chan struct{})}
	esc, err := NewEscalation(EscalationConfig{
		RemindAfter: 5 * time.Minute, Levels: []EscalationLevel{{After: 10 * time.Minute, Groups: []string{oncallGroup}, DM: true}},
		ApproverUsers: []string{approverA}, Steps: claims, Groups: w.esc.cfg.Groups, DM: w.esc.cfg.DM, History: w.esc.cfg.History,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		n, err := esc.RunDue(ctx, w.notifier)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	<-claims.claimed
	if err := w.store.SetMessage(ctx, a.ID, ch, ts); err != nil {
		t.Fatal(err)
	}
	if n := <-done; n != 2 {
		t.Fatalf("%d steps done, want the reminder and the escalation", n)
	}
	var inThread, dms int
	for _, c := range w.fake.Calls("chat.postMessage") {
		switch {
		case c.TS == ts: // the Ask itself
		case strings.HasPrefix(c.Channel, "D"):
			dms++
		case c.ThreadTS == ts && c.Channel == ch:
			inThread++
		default:
			t.Errorf("a follow-up went to %s, thread %q, not the Ask's thread %s: %q", c.Channel, c.ThreadTS, ts, c.Text)
		}
	}
	if inThread != 2 || dms != 2 {
		t.Fatalf("%d follow-ups in the Ask's thread and %d DMs; want the reminder and the escalation, and a DM to each member", inThread, dms)
	}
}
