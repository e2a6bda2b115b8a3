package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// homeAskButtons counts the Asks a published Home offers Approve for.
func homeAskButtons(v fakeslack.View) int {
	n := 0
	for _, b := range v.Request.Blocks.BlockSet {
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.Elements == nil {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == slackui.ActionApprove {
				n++
			}
		}
	}
	return n
}

// openHome delivers user's app_home_opened event (the Home tab opened) to
// replica r.
func (w *world) openHome(ctx context.Context, t testing.TB, r *replica, user string) {
	t.Helper()
	envelope, err := w.slack.EventEnvelope(w.slack.AppHomeOpened(user))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := w.slack.PostEvent(ctx, r.base+"/slack/events", envelope, fakeslack.EventOptions{}); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("app_home_opened to %s: %v %v", r.name, resp, err)
	}
}

// TestAppHomeAndAuditChain, across two replicas: the approver opens the
// Home tab (the event reaches B); a run on A asks, and B's Home shows the
// Ask with its buttons; Approve clicked on the Home (delivered to A)
// decides it and the Home empties again. Then `bot audit verify` passes on
// the run's real Redis, `bot audit export` prints the Ask's story, and an
// event edited in Redis makes verify fail naming it.
func TestAppHomeAndAuditChain(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	const command = "echo audited >> audit.txt"
	w.script.on("e2e-home", steps(bash("c1", command), fakeopenai.Text("appended once")))
	a, b := w.servePair(ctx, t, settings{})

	// 1. The approver opens the Home tab; B publishes it.
	w.openHome(ctx, t, b, approverID)
	if _, err := w.slack.WaitForHome(ctx, approverID, func(v fakeslack.View) bool {
		return strings.Contains(fakeslack.BlockText(v.Request.Blocks.BlockSet), "Nothing is waiting for your decision")
	}); err != nil {
		t.Fatal(err)
	}

	// 2. A run on A asks; B's Home follows.
	ask := w.startRunToAsk(ctx, t, a, "e2e-home: append to audit.txt once", "audit.txt")
	id := askID(ask.Blocks)
	home, err := w.slack.WaitForHome(ctx, approverID, func(v fakeslack.View) bool { return homeAskButtons(v) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fakeslack.BlockText(home.Request.Blocks.BlockSet), "audit.txt") {
		t.Errorf("the Home does not say what is asked:\n%s", fakeslack.BlockText(home.Request.Blocks.BlockSet))
	}
	// The approver started that run on A; B's Home lists it from the
	// shared run record, waiting on its Ask.
	if _, err := w.slack.WaitForHome(ctx, approverID, func(v fakeslack.View) bool {
		text := fakeslack.BlockText(v.Request.Blocks.BlockSet)
		return strings.Contains(text, "*Your runs:* 1 running") && strings.Contains(text, "e2e-home: append to audit.txt once") && strings.Contains(text, "waiting for a decision")
	}); err != nil {
		t.Errorf("the Home does not list the viewer's run: %v", err)
	}

	// 3. Approve on the Home, delivered to A: the same click as on the message.
	payload, ok := w.slack.HomeBlockActionsPayload(approverID, slackui.ActionApprove, id)
	if !ok {
		t.Fatal("the Home has no Approve button for the Ask")
	}
	if resp, err := w.slack.PostInteraction(ctx, a.base+"/slack/interactions", payload); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Home click to A: %v %v", resp, err)
	}
	w.waitDecided(ctx, t, ask, "Approved", approverID)
	w.waitAnswer(ctx, t, ask.ThreadTS, "appended once")
	if _, err := w.slack.WaitForHome(ctx, approverID, func(v fakeslack.View) bool { return homeAskButtons(v) == 0 }); err != nil {
		t.Errorf("the Home still offers the decided Ask: %v", err)
	}
	if _, err := w.slack.WaitForHome(ctx, approverID, func(v fakeslack.View) bool {
		return strings.Contains(fakeslack.BlockText(v.Request.Blocks.BlockSet), "*Your runs:* none is running.")
	}); err != nil {
		t.Errorf("the Home still lists the ended run: %v", err)
	}
	publishes := w.slack.Calls("views.publish")
	t.Logf("views.publish calls: %d", len(publishes))
	for _, c := range publishes {
		if !c.OK() {
			t.Errorf("views.publish refused: %d %s", c.Status, c.Error)
		}
	}

	// 4. The audit trail of that run: intact, and exported.
	story, exported := w.auditStory(ctx, t, a.config, id)
	if story == nil || story.AskedBy != approverID || !strings.Contains(story.What, "audit.txt") || story.Outcome != pending.Approved ||
		story.DecidedBy != approverID || story.PolicyReason == "" || len(story.Events) < 2 {
		t.Fatalf("export has no full story of ask %s:\n%s", id, exported)
	}

	// 5. Someone rewrites the decided event to name another decider.
	client := redis.NewClient(&redis.Options{Addr: w.redis.Addr()})
	defer client.Close()
	const stream = "askops:{askops}:audit"
	msgs, err := client.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var edited string
	if err := client.Del(ctx, stream).Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		vals := m.Values
		if vals["kind"] == "decided" && vals["ask_id"] == id {
			vals["by"], edited = intruderID, m.ID
		}
		var flat []any
		for _, k := range []string{"seq", "prev", "kind", "ask_id", "run_id", "tool", "outcome", "by", "reason", "detail", "at"} {
			flat = append(flat, k, vals[k])
		}
		if err := client.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: m.ID, Values: flat}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if edited == "" {
		t.Fatalf("no decided event for ask %s in the stream", id)
	}
	verify := w.start(t, "verify-tampered", "audit", "-config", b.config, "verify")
	if code := verify.wait(ctx, t); code != 1 || !strings.Contains(verify.stdout(), "BROKEN") || !strings.Contains(verify.stdout(), edited) {
		t.Fatalf("bot audit verify after an edit = %d, want 1 naming event %s\n%s\n%s", code, edited, verify.stdout(), verify.stderr())
	}
	t.Logf("verify after the edit:\n%s", verify.stdout())
}

// auditStory runs `bot audit verify` (it must say intact) and `bot audit
// export -since 1h` with config, and returns the exported story of ask id
// (nil when export has none) with export's output.
func (w *world) auditStory(ctx context.Context, t testing.TB, config, id string) (*pending.AskHistory, string) {
	t.Helper()
	verify := w.start(t, "verify", "audit", "-config", config, "verify")
	if code := verify.wait(ctx, t); code != 0 || !strings.Contains(verify.stdout(), "intact") {
		t.Fatalf("bot audit verify = %d\n%s\n%s", code, verify.stdout(), verify.stderr())
	}
	export := w.start(t, "export", "audit", "export", "-since", "1h", "-config", config)
	if code := export.wait(ctx, t); code != 0 {
		t.Fatalf("bot audit export = %d\n%s", code, export.stderr())
	}
	var story *pending.AskHistory
	for _, line := range strings.Split(strings.TrimSpace(export.stdout()), "\n") {
		var h pending.AskHistory
		if err := json.Unmarshal([]byte(line), &h); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if h.AskID == id {
			story = &h
		}
	}
	return story, export.stdout()
}
