package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// TestQuorumEscalatedByDM is issue 12's parts together, across two
// replicas: a quorum Ask (approvals: 2) nobody answers is reminded, then
// escalated to the on-call group by DM. The run's starter is in that
// group: their DM click is refused (self_approval is off and they are not
// the only approver). Ana approves in the channel on A; every copy, the
// DMs and the on-call member's App Home (opened on B) show "1 of 2
// approvals: @ana". The on-call member approves on their DM, on B: the
// quorum is reached, the command runs once, every copy shows the outcome.
// Then `bot audit verify` passes and `bot audit export` tells the Ask's
// story: both votes, the reminder, the escalation, the refusal.
func TestQuorumEscalatedByDM(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.setOncall(approverID, oncallB) // the starter is on call
	const command = "echo apply >> combined.txt"
	w.script.on("e2e-combined", steps(bash("c1", command), fakeopenai.Text("applied after two approvals")))
	s := settings{
		Approvers: []string{approverID, anaID},
		Approvals: followups("1s", "2s") + "  grant_durations: [15m]\n",
		Rules:     "    - {tool: bash, command: \"echo apply\", decision: ask, approvals: 2}\n",
	}
	a, b := w.servePair(ctx, t, s)
	applied := filepath.Join(w.ws, "combined.txt")

	// The on-call member opens the Home; the event reaches B.
	w.openHome(ctx, t, b, oncallB)

	ask := w.startRunToAsk(ctx, t, a, "e2e-combined: apply once", "combined.txt") // approverID starts it
	id := askID(ask.Blocks)
	testwait.Until(ctx, t, "the reminder, the escalation and both DMs", func() bool {
		return w.postsIn(ask.Channel, ask.ThreadTS, "Reminder") == 1 &&
			w.postsIn(ask.Channel, ask.ThreadTS, "<!subteam^"+oncallGroup+">") == 1 &&
			len(w.dmAsks(approverID)) == 1 && len(w.dmAsks(oncallB)) == 1
	})
	starterDM, oncallDM := w.dmAsks(approverID)[0], w.dmAsks(oncallB)[0]
	copies := []fakeslack.Message{ask, starterDM, oncallDM}
	for _, m := range copies {
		wantNoGrantButtons(t, m)
	}
	// The escalation gave the on-call member buttons on their Home (B's).
	if _, err := w.slack.WaitForHome(ctx, oncallB, func(v fakeslack.View) bool { return homeAskButtons(v) == 1 }); err != nil {
		t.Fatalf("the escalation target's Home: %v", err)
	}

	// The starter, reached by the escalation, may not approve.
	w.approveRefused(ctx, t, b, starterDM, approverID, 1, "You started this run", ask)

	// Ana's approval in the channel, on A: every copy shows the tally.
	w.clickOn(ctx, t, a, ask, anaID, slackui.ActionApprove)
	tally := "1 of 2 approvals: <@" + anaID + ">"
	for _, m := range copies {
		w.waitTally(ctx, t, m, tally)
	}
	if _, err := w.slack.WaitForHome(ctx, oncallB, func(v fakeslack.View) bool {
		return strings.Contains(fakeslack.BlockText(v.Request.Blocks.BlockSet), tally)
	}); err != nil {
		t.Fatalf("the Home never showed the tally: %v", err)
	}
	if n := lines(t, applied); n != 0 {
		t.Fatalf("the command ran %d times before the quorum", n)
	}

	// The on-call member approves on their DM, on B: quorum reached.
	w.clickOn(ctx, t, b, oncallDM, oncallB, slackui.ActionApprove)
	for _, m := range copies {
		w.waitDecided(ctx, t, m, "Approved", "2 of 2 approvals: <@"+anaID+">, <@"+oncallB+">")
	}
	testwait.Until(ctx, t, "the approved command to run", func() bool { return lines(t, applied) == 1 })
	w.waitAnswer(ctx, t, ask.ThreadTS, "applied after two approvals")
	if _, err := w.slack.WaitForHome(ctx, oncallB, func(v fakeslack.View) bool { return homeAskButtons(v) == 0 }); err != nil {
		t.Errorf("the Home still offers the decided Ask: %v", err)
	}

	// The record: intact, and the Ask's story has every step.
	story, exported := w.auditStory(ctx, t, b.config, id)
	if story == nil {
		t.Fatalf("export has no story of ask %s:\n%s", id, exported)
	}
	var got []string
	for _, e := range story.Events {
		got = append(got, string(e.Kind)+":"+e.By)
	}
	want := []string{"asked:", "reminded:", "escalated:", "refused:" + approverID, "voted:" + anaID, "voted:" + oncallB, "decided:" + oncallB}
	if !containsInOrder(got, want) || story.Outcome != pending.Approved || story.AskedBy != approverID {
		t.Errorf("the Ask's story: %v, outcome %s, asked by %s; want %v in order", got, story.Outcome, story.AskedBy, want)
	}
}

// containsInOrder reports whether every entry of want is a prefix of an
// entry of got, in want's order.
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && strings.HasPrefix(g, want[i]) {
			i++
		}
	}
	return i == len(want)
}
