package slackui

import (
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// newDMWorld is a seam world with one Ask posted in the approval channel,
// whose DMs (and clicks on them) each test then makes.
func newDMWorld(t *testing.T) (*seamWorld, pending.Ask) {
	t.Helper()
	w := newSeamWorld(t)
	return w, w.postReq(bashRequest("run-dm", "sess-dm", "make deploy"))
}

// sendDM sends a's DM to user as a level does, the level reaching no one
// else (its authority not recorded: only the DM rule admits user): a step
// of its own claimed, the DM reserved, posted and recorded. It returns the
// recorded copy: the DM's channel and ts, as the Ask's first copy.
func (w *seamWorld) sendDM(a pending.Ask, user string) (dm [2]string) {
	w.t.Helper()
	ctx := w.t.Context()
	if err := w.store.ScheduleSteps(ctx, a.ID, []pending.DueStep{{Name: "escalate:dm-" + user, Due: w.clock.Now()}}); err != nil {
		w.t.Fatal(err)
	}
	claimed, err := w.store.ClaimSteps(ctx, time.Minute, 10)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, c := range claimed {
		if c.Name != "escalate:dm-"+user {
			continue
		}
		b, ok, err := w.store.BeginStep(ctx, c, "", []pending.DirectCopy{{User: user, Channel: "D" + user[1:]}})
		if err != nil || !ok {
			w.t.Fatalf("BeginStep = %v, %v", ok, err)
		}
		r, _ := b.Ask.Directs.For(user)
		if err := w.esc.sendDirect(ctx, w.notifier, b, r); err != nil {
			w.t.Fatal(err)
		}
		got, err := w.store.Get(ctx, a.ID)
		if err != nil {
			w.t.Fatal(err)
		}
		copies := got.Copies.List()
		if len(copies) == 0 {
			w.t.Fatalf("the DM to %s was not recorded as a copy", user)
		}
		return copies[0]
	}
	w.t.Fatalf("the DM step for %s was not claimed", user)
	return dm
}

// postInDM posts a's message, buttons and all, in user's DM without
// recording it as a copy of a, and returns where it is.
func (w *seamWorld) postInDM(a pending.Ask, user string) (channel, ts string) {
	w.t.Helper()
	msg := RenderAsk(a, RenderOptions{GrantScope: w.notifier.cfg.ScopeText(a), Now: w.notifier.cfg.Now()})
	channel, ts, err := w.notifier.PostMessage(w.t.Context(), "D"+user[1:], slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	if err != nil {
		w.t.Fatal(err)
	}
	return channel, ts
}

// A target quick on their phone clicks the DM while the level is still
// being carried out (its other DMs and the thread mention not yet out, so
// the Ask does not yet record that the level fired): the click on that
// recorded DM copy is the recipient's and counts. A click on a DM askops
// never recorded for the Ask is still refused.
func TestDMClickBeforeTheLevelIsRecorded(t *testing.T) {
	w, a := newDMWorld(t)
	ctx := t.Context()

	// Refused: the Ask's buttons in a DM askops never recorded as a copy.
	channel, stray := w.postInDM(a, oncallA)
	w.click(oncallA, channel, stray, a.ID, ActionApprove)
	if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.StatusPending {
		t.Fatalf("a click on a DM that is no copy decided the ask: %s by %s", got.Status, got.DecidedBy)
	}

	// The level's first DM is out and recorded; the level is not finished.
	dm := w.sendDM(a, oncallB)
	if got, _ := w.store.Get(ctx, a.ID); got.Followups != "" {
		t.Fatalf("the level is recorded already (%q); the test needs it in flight", got.Followups)
	}
	w.click(oncallB, dm[0], dm[1], a.ID, ActionApprove)
	w.wantApprovedBy(a, oncallB, "the DM's recipient's click while the level was being carried out")
}

// A DM copy is its recipient's to click, and nobody else's: a signed click
// by anyone else on oncallB's copy (a stranger, the other target of the
// level before it is recorded, an approver) is refused as a non-approver's
// is, and changes nothing, whoever the clicker is elsewhere. The
// recipient's own click then decides.
func TestDMCopyDecidedOnlyByItsRecipient(t *testing.T) {
	w, a := newDMWorld(t)
	ctx := t.Context()
	dm := w.sendDM(a, oncallB)

	for i, clicker := range []string{"USTRANGER", oncallA, approverA} {
		w.click(clicker, dm[0], dm[1], a.ID, ActionApprove)
		w.waitEphemeral("the refusal of "+clicker, clicker, func(s string) bool { return s == refusalText })
		if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.StatusPending || got.Votes != "" {
			t.Fatalf("click %d: %s's click on %s's DM copy counted: %s by %q (votes %q)", i, clicker, oncallB, got.Status, got.DecidedBy, got.Votes)
		}
	}

	w.click(oncallB, dm[0], dm[1], a.ID, ActionApprove)
	w.wantApprovedBy(a, oncallB, "the DM's recipient's click")
}

// Whose DM a copy is comes from Slack (conversations.open for the
// clicker); when Slack cannot say, the click is refused as one whose
// approver check failed, and nothing changes. Once Slack answers, the
// recipient's click counts.
func TestDMCopyRecipientUncheckedIsRefused(t *testing.T) {
	w, a := newDMWorld(t)
	ctx := t.Context()
	// The DM posted and recorded as the previous release did (a copy
	// without its recipient): this replica never opened it, so it must
	// ask Slack whose it is.
	channel, ts := w.postInDM(a, oncallB)
	if err := w.store.AddCopy(ctx, a.ID, channel, ts); err != nil {
		t.Fatal(err)
	}
	got, _ := w.store.Get(ctx, a.ID)
	dm := got.Copies.List()[0]

	w.fake.FailNext("conversations.open", 1, fakeslack.FailMode{SlackError: "internal_error"})
	w.click(oncallB, dm[0], dm[1], a.ID, ActionApprove)
	w.waitEphemeral("the refusal", oncallB, func(s string) bool { return s == copyUncheckedText })
	if got, _ := w.store.Get(ctx, a.ID); got.Status != pending.StatusPending {
		t.Fatalf("a click Slack could not place decided: %s by %q", got.Status, got.DecidedBy)
	}

	w.click(oncallB, dm[0], dm[1], a.ID, ActionApprove)
	w.wantApprovedBy(a, oncallB, "the recipient's click once Slack answers")
}
