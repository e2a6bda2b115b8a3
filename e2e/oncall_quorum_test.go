package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

// Issue 12's quorum, self-approval and time-boxed grants, through the built
// binaries: two replicas on one Redis, the fake Slack.

// Two more approvers besides approverID (who starts the runs).
const (
	anaID = "UANA00001"
	boID  = "UBO000002"
)

// ephemeralTo waits for the nth ephemeral reply to user (1-based) and
// returns its text.
func (w *world) ephemeralTo(ctx context.Context, t *testing.T, user string, n int) string {
	t.Helper()
	calls, err := w.slack.WaitForCalls(ctx, "chat.postEphemeral", n, func(c fakeslack.Call) bool { return c.User == user })
	if err != nil {
		t.Fatalf("no ephemeral reply #%d to %s: %v", n, user, err)
	}
	return calls[n-1].Text
}

// approveRefused clicks Approve on m as user on r and checks the click was
// refused: user's nth ephemeral reply says told, and ask is still open.
func (w *world) approveRefused(ctx context.Context, t *testing.T, r *replica, m fakeslack.Message, user string, n int, told string, ask fakeslack.Message) {
	t.Helper()
	w.clickOn(ctx, t, r, m, user, slackui.ActionApprove)
	if got := w.ephemeralTo(ctx, t, user, n); !strings.Contains(got, told) {
		t.Errorf("%s's Approve on %s was told %q, want %q", user, r.name, got, told)
	}
	if cur, _ := w.slack.Message(ask.Channel, ask.TS); askID(cur.Blocks) == "" {
		t.Fatalf("%s's refused Approve on %s decided the Ask:\n%s", user, r.name, text(cur))
	}
}

// wantNoGrantButtons fails the test if the quorum Ask message m offers a
// grant (for the session or 15 min): a quorum rule asks every time.
func wantNoGrantButtons(t *testing.T, m fakeslack.Message) {
	t.Helper()
	for _, action := range []string{slackui.ActionApproveSession, slackui.ApproveForAction(15 * time.Minute)} {
		if buttonIn(m, action) {
			t.Errorf("the quorum Ask (%s) offers %s", m.Channel, action)
		}
	}
}

// waitTally waits until the Ask message m, still open, shows tally (the
// votes a quorum has so far).
func (w *world) waitTally(ctx context.Context, t *testing.T, m fakeslack.Message, tally string) {
	t.Helper()
	if _, err := w.slack.WaitForMessage(ctx, m.Channel, m.TS, func(m fakeslack.Message) bool {
		return strings.Contains(text(m), tally) && askID(m.Blocks) != ""
	}); err != nil {
		cur, _ := w.slack.Message(m.Channel, m.TS)
		t.Fatalf("the open Ask %s never showed %q: %v\n%s", m.Channel, tally, err, text(cur))
	}
}

// lastToolResult is the last tool result the model was sent in the run tagged tag.
func (w *world) lastToolResult(tag string) string {
	reqs := w.requestsOf(tag)
	if len(reqs) == 0 {
		return ""
	}
	msgs := reqs[len(reqs)-1].Body.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleTool {
			return msgs[i].Content
		}
	}
	return ""
}

// TestQuorumAcrossReplicas: a rule with approvals: 2 needs two different
// approvers; the run's starter may not approve (self_approval defaults to
// false); the same person's second click is refused; each click goes to
// either replica; a deny after one approval ends it, and the model is told
// how far the count got.
func TestQuorumAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	const command = "echo deploy >> deployed.txt"
	w.script.on("e2e-quorum", steps(
		bash("c1", command), bash("c2", command),
		fakeopenai.Text("deployed once; the second was denied"),
	))
	s := settings{
		Approvers: []string{approverID, anaID, boID},
		Approvals: "  grant_durations: [15m]\n",
		Rules:     "    - {tool: bash, command: \"echo deploy\", decision: ask, approvals: 2}\n",
	}
	a, b := w.servePair(ctx, t, s)
	deployed := filepath.Join(w.ws, "deployed.txt")

	ask1 := w.startRunToAsk(ctx, t, a, "e2e-quorum: deploy twice", "deployed.txt") // approverID started it
	if body := text(ask1); !strings.Contains(body, "Needs 2 approvals from different people") || !strings.Contains(body, "0 of 2") {
		t.Fatalf("the quorum Ask does not say it needs 2 approvals:\n%s", body)
	}
	wantNoGrantButtons(t, ask1)

	// The run's starter may not approve it.
	w.approveRefused(ctx, t, b, ask1, approverID, 1, "You started this run", ask1)

	// Ana's approval on B counts one; the message says so, on every copy.
	w.clickOn(ctx, t, b, ask1, anaID, slackui.ActionApprove)
	if got := w.ephemeralTo(ctx, t, anaID, 1); !strings.Contains(got, "counted: 1 of 2") {
		t.Errorf("ana was told %q", got)
	}
	w.waitTally(ctx, t, ask1, "1 of 2 approvals: <@"+anaID+">")
	// Ana again, on A this time: one person counts once.
	w.approveRefused(ctx, t, a, ask1, anaID, 2, "already approved", ask1)
	if n := lines(t, deployed); n != 0 {
		t.Fatalf("the command ran %d times before the quorum", n)
	}

	// Bo's approval on A completes it; A's agent (waiting on A) runs it.
	w.clickOn(ctx, t, a, ask1, boID, slackui.ActionApprove)
	w.waitDecided(ctx, t, ask1, "Approved", "2 of 2 approvals: <@"+anaID+">, <@"+boID+">")
	testwait.Until(ctx, t, "the approved command to run", func() bool { return lines(t, deployed) == 1 })

	// The identical second call asks again (no grant on a quorum rule).
	// Ana approves on A, Bo denies on B: one Deny ends it.
	ask2 := w.waitOpenAsk(ctx, t, "deployed.txt", ask1)
	w.clickOn(ctx, t, a, ask2, anaID, slackui.ActionApprove)
	w.ephemeralTo(ctx, t, anaID, 3)
	w.clickOn(ctx, t, b, ask2, boID, slackui.ActionDeny)
	w.waitDecided(ctx, t, ask2, "Denied", "Ended after 1 of 2 approvals: <@"+anaID+">")
	w.waitAnswer(ctx, t, ask1.ThreadTS, "deployed once; the second was denied")
	if n := lines(t, deployed); n != 1 {
		t.Errorf("deployed.txt has %d lines after the deny, want 1", n)
	}
	if got := w.lastToolResult("e2e-quorum"); !strings.Contains(got, "permission denied by "+boID) || !strings.Contains(got, "1 of 2 approvals ("+anaID+")") {
		t.Errorf("the model was told %q; want who denied and that ana had approved", got)
	}
}

// TestTimeBoxedGrantLapses: "Approve for 10 s" (grant_durations: [10s],
// standing in for 15m) covers the identical call while it lasts; once its
// time is up (the test waits for /askops grants to stop listing it, the
// store's own word), the identical call asks again, in the same session.
func TestTimeBoxedGrantLapses(t *testing.T) {
	t.Parallel()
	ctx := testCtxFor(t, 90*time.Second)
	w := newWorld(t)
	const command = "echo g >> boxed.txt"
	lapsed := make(chan struct{})
	w.script.on("e2e-boxed", func(step int) fakeopenai.Reply {
		switch step {
		case 0, 1:
			return bash("c"+string(rune('1'+step)), command)
		case 2:
			// The model "thinks" until the grant has lapsed.
			select {
			case <-lapsed:
			case <-ctx.Done():
			}
			return bash("c3", command)
		}
		return fakeopenai.Text("asked again after the grant lapsed")
	})
	s := settings{Approvals: "  grant_durations: [10s, 1h]\n"}
	a, b := w.servePair(ctx, t, s)
	boxed := filepath.Join(w.ws, "boxed.txt")

	ask1 := w.startRunToAsk(ctx, t, a, "e2e-boxed: append g three times", "boxed.txt")
	for _, action := range []string{slackui.ApproveForAction(10 * time.Second), slackui.ApproveForAction(time.Hour), slackui.ActionApproveSession} {
		if !buttonIn(ask1, action) {
			t.Fatalf("the Ask does not offer %s:\n%s", action, text(ask1))
		}
	}
	w.clickOn(ctx, t, b, ask1, approverID, slackui.ApproveForAction(10*time.Second))
	w.waitDecided(ctx, t, ask1, "Approved for 10 s", approverID)
	// c2 runs on the grant without asking.
	testwait.Until(ctx, t, "c1 and c2 to run", func() bool { return lines(t, boxed) == 2 })
	if n := w.askPosts(); n != 1 {
		t.Fatalf("%d Ask messages, want 1: the grant must cover c2", n)
	}
	if l := w.command(ctx, t, a.base, approverID, "grants"); !strings.Contains(fakeslack.BlockText(l.Blocks), "time-boxed: ") {
		t.Errorf("/askops grants does not show the time left: %s", fakeslack.BlockText(l.Blocks))
	}
	testwait.Until(ctx, t, "the grant to lapse", func() bool {
		l := w.command(ctx, t, b.base, approverID, "grants")
		return strings.Contains(l.Text, "No session grants")
	})
	close(lapsed)

	ask3 := w.waitOpenAsk(ctx, t, "boxed.txt", ask1)
	if ask3.ThreadTS != ask1.ThreadTS {
		t.Errorf("c3 asked in thread %q, want the run's %q", ask3.ThreadTS, ask1.ThreadTS)
	}
	w.clickOn(ctx, t, a, ask3, approverID, slackui.ActionDeny)
	w.waitAnswer(ctx, t, ask1.ThreadTS, "asked again after the grant lapsed")
	if n := lines(t, boxed); n != 2 {
		t.Errorf("boxed.txt has %d lines, want 2 (the lapsed grant must not cover c3)", n)
	}
}

// buttonIn reports whether message m has a button with actionID.
func buttonIn(m fakeslack.Message, actionID string) bool {
	for _, b := range m.Blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok {
			continue
		}
		for _, el := range ab.Elements.ElementSet {
			if btn, ok := el.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
				return true
			}
		}
	}
	return false
}
