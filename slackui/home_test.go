package slackui

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// newHome starts a Home over w's stores (it reads the clicking side's, as
// another replica would) with short intervals, and the Approvers w uses.
func newHome(t *testing.T, w *world, debounce time.Duration) *Home {
	t.Helper()
	approvers := testApprovers(t)
	h := NewHome(HomeConfig{
		Asks: w.clicks, API: w.api, Notifier: w.notifier, Approvers: approvers,
		Poll: 50 * time.Millisecond, Debounce: debounce, PublishEvery: time.Millisecond,
	})
	runHome(t, h)
	return h
}

// runHome runs h's refresher, as the wiring does, until the returned stop
// or the test's end; stop waits for it to return.
func runHome(t *testing.T, h *Home) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the Home's Run returned %v at its ctx's end, want nil", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// homeAsks counts the Asks a published Home lists with an Approve button.
// waitHomeAsks waits until user's Home offers buttons on n Asks, and returns it.
func waitHomeAsks(t *testing.T, w *world, user string, n int) fakeslack.View {
	t.Helper()
	v, err := w.fake.WaitForHome(t.Context(), user, func(v fakeslack.View) bool { return homeAsks(v) == n })
	if err != nil {
		t.Fatalf("the Home of %s never offered %d Asks: %v", user, n, err)
	}
	return v
}

func homeAsks(v fakeslack.View) int {
	n := 0
	for _, b := range v.Request.Blocks.BlockSet {
		if ab, ok := b.(*slack.ActionBlock); ok && blocksHaveButton([]slack.Block{ab}, ActionApprove) {
			n++
		}
	}
	return n
}

func TestHomeListsDecidableAsksAndOwnRunsAndRefreshes(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		h := newHome(t, w, 20*time.Millisecond)
		ctx := t.Context()
		first := w.ask(bashRequest("run-1", "s1", "terraform apply"))

		// Opening the tab arrives as an app_home_opened event.
		env, err := w.fake.EventEnvelope(w.fake.AppHomeOpened(approverA))
		if err != nil {
			t.Fatal(err)
		}
		events := h.Events(func(context.Context, slackevents.EventsAPIEvent) { t.Error("app_home_opened reached the next handler") })
		ev, err := slackevents.ParseEvent(env, slackevents.OptionNoVerifyToken())
		if err != nil {
			t.Fatal(err)
		}
		events(ctx, ev)
		v := waitHomeAsks(t, w, approverA, 1)
		if text := fakeslack.BlockText(v.Request.Blocks.BlockSet); !strings.Contains(text, "terraform apply") || !strings.Contains(text, "Waiting for your decision:* 1") {
			t.Errorf("Home of an approver:\n%s", text)
		}
		// Every button on the Home is one the Ask's message offers.
		for _, action := range []string{ActionApprove, ActionApproveSession, ActionDeny, ActionDenyReason} {
			a, _ := w.asks.Get(ctx, first.id)
			if buttonFor(v.Request.Blocks.BlockSet, action, first.id) != w.notifier.Offers(a, action) {
				t.Errorf("Home and message disagree on %s", action)
			}
		}

		// The run's starter, not an approver, sees their run but no buttons.
		h.Opened("UOWNER")
		v, err = w.fake.WaitForHome(ctx, "UOWNER", nil)
		if err != nil {
			t.Fatal(err)
		}
		if text := fakeslack.BlockText(v.Request.Blocks.BlockSet); homeAsks(v) != 0 || !strings.Contains(text, "Your runs waiting for a decision:* 1") {
			t.Errorf("Home of the starter (%d asks with buttons):\n%s", homeAsks(v), text)
		}

		// A new Ask, then a decision: both Homes follow.
		second := w.ask(bashRequest("run-2", "s1", "kubectl delete ns staging"))
		waitHomeAsks(t, w, approverA, 2)
		if _, err := w.clicks.Decide(ctx, first.id, pending.Denied, approverB, ""); err != nil {
			t.Fatal(err)
		}
		v = waitHomeAsks(t, w, approverA, 1)
		if !buttonFor(v.Request.Blocks.BlockSet, ActionApprove, second.id) {
			t.Error("the Home lost the Ask still open")
		}
		if _, err := w.fake.WaitForHome(ctx, "UOWNER", func(v fakeslack.View) bool {
			return strings.Contains(fakeslack.BlockText(v.Request.Blocks.BlockSet), "Your runs waiting for a decision:* 1")
		}); err != nil {
			t.Fatal(err)
		}
		first.result(t)
	})
}

// TestHomeClickDecidesThatAskOnly clicks Approve on the Home: it decides
// that Ask (and updates its message); a click whose value names an Ask
// the Home does not carry changes nothing.
func TestHomeClickDecidesThatAskOnly(t *testing.T) {
	forEachStore(t, worldOptions{redis: true}, func(t *testing.T, w *world) {
		h := newHome(t, w, 20*time.Millisecond)
		ctx := t.Context()
		wa := w.ask(bashRequest("run-1", "s1", "terraform apply"))
		h.Opened(approverA)
		waitHomeAsks(t, w, approverA, 1)
		// The click's payload carries the Home as it was published, with
		// only the first Ask; its action is edited to name a second Ask.
		payload, ok := w.fake.HomeBlockActionsPayload(approverA, ActionApprove, wa.id)
		if !ok {
			t.Fatal("no Approve button on the Home")
		}
		other := w.ask(bashRequest("run-2", "s1", "rm -rf build"))
		var cb map[string]any
		if err := json.Unmarshal(payload, &cb); err != nil {
			t.Fatal(err)
		}
		cb["actions"].([]any)[0].(map[string]any)["value"] = other.id
		forged, _ := json.Marshal(cb)
		resp, err := w.fake.PostInteraction(ctx, w.url, forged)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("forged click: %v %v", resp, err)
		}
		if a, _ := w.clicks.Get(ctx, other.id); a.Status != pending.StatusPending {
			t.Fatalf("a click bound to no Home button decided %s: %+v", other.id, a)
		}

		resp, err = w.fake.PostInteraction(ctx, w.url, payload)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("click: %v %v", resp, err)
		}
		if a := wa.result(t); a.Status != pending.Status(pending.Approved) || a.DecidedBy != approverA {
			t.Fatalf("after the Home click: %+v", a)
		}
		if _, err := w.fake.WaitForMessage(ctx, wa.channel, wa.ts, func(m fakeslack.Message) bool {
			return !blocksHaveButton(m.Blocks, ActionApprove)
		}); err != nil {
			t.Errorf("the Ask's message was not updated: %v", err)
		}
		if a, _ := w.clicks.Get(ctx, other.id); a.Status != pending.StatusPending {
			t.Errorf("the other Ask changed: %+v", a)
		}
	})
}

// TestHomePublishHonoursRetryAfter: a 429 on views.publish is retried after
// Slack's Retry-After, and the Home still arrives.
func TestHomePublishHonoursRetryAfter(t *testing.T) {
	w := newWorld(t, worldOptions{maxAttempts: 3})
	w.fake.FailNext("views.publish", 1, fakeslack.FailMode{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	h := newHome(t, w, 20*time.Millisecond)
	h.Opened(approverA)
	if _, err := w.fake.WaitForHome(t.Context(), approverA, nil); err != nil {
		t.Fatal(err)
	}
	calls := w.fake.Calls("views.publish")
	if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests || !calls[1].OK() {
		t.Fatalf("views.publish calls: %+v", calls)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
		t.Errorf("retried %s after a 429 asking for 1s", gap)
	}
}

// TestHomeWithManyAsksStaysWithinLimits: 40 pending Asks fit one Home
// (fakeslack checks Slack's limits on views.publish).
func TestHomeWithManyAsksStaysWithinLimits(t *testing.T) {
	w := newWorld(t, worldOptions{})
	for i := range 40 {
		if _, err := w.asks.Create(t.Context(), bashRequest("run", "s", strings.Repeat("x", i*50)), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	h := newHome(t, w, 20*time.Millisecond)
	h.Opened(approverA)
	v, err := w.fake.WaitForHome(t.Context(), approverA, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := homeAsks(v); n != maxHomeAsks || !strings.Contains(fakeslack.BlockText(v.Request.Blocks.BlockSet), "and 25 more") {
		t.Errorf("Home lists %d Asks", n)
	}
	for _, c := range w.fake.Calls("views.publish") {
		if !c.OK() {
			t.Errorf("views.publish refused: %s", c.Error)
		}
	}
}

// noSelfApproval is an authority with a per-Ask rule, as quorum's
// self_approval: false is: nobody decides the Asks of their own runs.
type noSelfApproval struct{ *Approvers }

func (n noSelfApproval) MayDecideAsk(_ context.Context, user string, a pending.Ask) (bool, error) {
	return a.StartedBy != user, nil
}

// TestHomeHonoursPerAskAuthority: with a per-Ask rule the Home offers
// buttons only where the rule allows; the viewer's own Ask is listed under
// their runs, without buttons.
func TestHomeHonoursPerAskAuthority(t *testing.T) {
	w := newWorld(t, worldOptions{})
	own := bashRequest("run-own", "s", "terraform apply")
	own.StartedBy = approverA
	mine, err := w.asks.Create(t.Context(), own, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := w.asks.Create(t.Context(), bashRequest("run-other", "s", "make deploy"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	approvers := testApprovers(t)
	h := NewHome(HomeConfig{Asks: w.asks, API: w.api, Notifier: w.notifier, Approvers: noSelfApproval{approvers}, PublishEvery: time.Millisecond})
	runHome(t, h)
	h.Opened(approverA)
	v, err := w.fake.WaitForHome(t.Context(), approverA, nil)
	if err != nil {
		t.Fatal(err)
	}
	blocks := v.Request.Blocks.BlockSet
	if buttonFor(blocks, ActionApprove, mine.ID) || !buttonFor(blocks, ActionApprove, theirs.ID) {
		t.Errorf("buttons: own Ask %v, other's %v; want only the other's", buttonFor(blocks, ActionApprove, mine.ID), buttonFor(blocks, ActionApprove, theirs.ID))
	}
	if text := fakeslack.BlockText(blocks); !strings.Contains(text, "Your runs waiting for a decision:* 1") || !strings.Contains(text, "terraform apply") {
		t.Errorf("Home:\n%s", text)
	}
}

// TestHomeClickOnDecidedAskIsAnswered: a click on a Home that still shows
// an Ask another approver has just decided changes nothing, and the Home
// says so on top (a Home has no channel for an ephemeral).
func TestHomeClickOnDecidedAskIsAnswered(t *testing.T) {
	w := newWorld(t, worldOptions{})
	h := newHome(t, w, 20*time.Millisecond)
	w.inter.cfg.Home = h
	ctx := t.Context()
	wa := w.ask(bashRequest("run-1", "s1", "terraform apply"))
	h.Opened(approverA)
	waitHomeAsks(t, w, approverA, 1)
	payload, _ := w.fake.HomeBlockActionsPayload(approverA, ActionApprove, wa.id)
	if _, err := w.clicks.Decide(ctx, wa.id, pending.Denied, approverB, "not today"); err != nil {
		t.Fatal(err)
	}
	if resp, err := w.fake.PostInteraction(ctx, w.url, payload); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("click: %v %v", resp, err)
	}
	if a := wa.result(t); a.Status != pending.Status(pending.Denied) {
		t.Fatalf("the stale click changed the outcome: %+v", a)
	}
	if _, err := w.fake.WaitForHome(ctx, approverA, func(v fakeslack.View) bool {
		text := fakeslack.BlockText(v.Request.Blocks.BlockSet)
		return strings.Contains(text, "Already denied by <@"+approverB+">") && homeAsks(v) == 0
	}); err != nil {
		v, _ := w.fake.Home(approverA)
		t.Fatalf("the Home does not answer the click: %v\n%s", err, fakeslack.BlockText(v.Request.Blocks.BlockSet))
	}
}

// An Ask still queued for its busy channel is on the Home at once, with
// its buttons, marked and counted as not yet in the channel.
func TestHomeCountsAsksNotYetInTheirChannel(t *testing.T) {
	n, _ := newTestNotifier(t, NotifierConfig{})
	h := NewHome(HomeConfig{Notifier: n})
	shown, queued := openAsk("SHOWN"), openAsk("QUEUED")
	shown.Channel, shown.MessageTS = approvals, "1.000001"
	v := h.Render(true, []pending.Ask{shown, queued}, nil)
	text := fakeslack.BlockText(v.Blocks.BlockSet)
	if !strings.Contains(text, "Waiting for your decision:* 2 · :hourglass: 1 not yet in their channel") {
		t.Errorf("the Home's head does not count the queued Ask:\n%s", text)
	}
	if strings.Count(text, "not yet in its channel") != 1 || !buttonFor(v.Blocks.BlockSet, ActionApprove, "QUEUED") {
		t.Errorf("the queued Ask is not marked once, with its buttons:\n%s", text)
	}
}
