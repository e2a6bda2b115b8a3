package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
)

// TestCardShowsTheFollowupsTried: a waiting Ask's card says which
// reminder and escalations were already tried, when, and whom an
// escalation reached (people by id, as the page names the decider, groups
// as groups); an Ask with none shows no such row.
func TestCardShowsTheFollowupsTried(t *testing.T) {
	asks, _, _, s := danasConsole(t, console.Config{})

	ctx := t.Context()
	req := pending.Request{RunID: "run-1", SessionID: "sess-1", Tool: "bash", Args: `{"command":"make deploy"}`,
		Call: pending.Call{Kind: pending.CallCommand, Command: "make deploy"}}
	tried, err := asks.Create(ctx, req, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := asks.Create(ctx, req, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{tried.ID, quiet.ID} {
		defer asks.Decide(context.WithoutCancel(ctx), id, pending.Denied, "test", "")
	}

	// The steps as the escalation records them, due at once.
	done := map[string]pending.StepDone{
		pending.StepRemind:               {Kind: pending.EventReminded, After: 5 * time.Minute, To: "U_APPROVER,S_APPROVERS"},
		pending.StepEscalatePrefix + "1": {Kind: pending.EventEscalated, After: 10 * time.Minute, To: "U1,S1"},
	}
	if err := asks.ScheduleSteps(ctx, tried.ID, []pending.DueStep{
		{Name: pending.StepRemind, Due: tried.CreatedAt.Add(-2 * time.Second)},
		{Name: pending.StepEscalatePrefix + "1", Due: tried.CreatedAt.Add(-time.Second)},
	}); err != nil {
		t.Fatal(err)
	}
	claimed, err := asks.ClaimSteps(ctx, time.Minute, 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d steps (err %v), want 2", len(claimed), err)
	}
	for _, cs := range claimed { // in due order: the reminder first
		if ok, err := asks.FinishStep(ctx, cs, done[cs.Name]); !ok || err != nil {
			t.Fatalf("finish %s = %v, %v", cs.Name, ok, err)
		}
	}

	const want = `<dt>Follow-ups</dt><dd class="followups">reminded after 5m; escalated to U1, group S1 after 10m</dd>`
	if card := consoleCardHTML(t, s, tried.ID); !strings.Contains(card, want) {
		t.Errorf("the card does not show %q:\n%s", want, card)
	}
	if card := consoleCardHTML(t, s, quiet.ID); strings.Contains(card, "Follow-ups") {
		t.Errorf("an Ask with no follow-ups shows some:\n%s", card)
	}
}
