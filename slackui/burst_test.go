package slackui

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/batchmsg"
	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// newBurstWorld is a world whose notifier batches (it reads the Asks) and
// whose channel has a burst of 3 posts and then none for an hour: every
// Ask after the third post is shown only by batching. With redisURL the pace,
// the batches and the stores are on that Redis, clicks on a second store.
func newBurstWorld(t *testing.T, redisURL string) *world {
	t.Helper()
	verifyNoLeaks(t)
	log := testLog(t)
	w := &world{t: t}
	// Slack's own limits on: batching must stay within them.
	w.fake = fakeslack.New(t, fakeslack.Options{SigningSecret: "test-secret", RateLimits: &fakeslack.RateLimits{}})
	w.fake.SetUser(approverA, "alice")
	w.api = fakeAPI(w.fake)
	var pace channelpace.Pace
	var batches batchmsg.Store
	if client := w.openStores(redisURL, log); client != nil {
		pace, batches = channelpace.NewRedis(client, rediskey.Default()), batchmsg.NewRedis(client, rediskey.Default(), time.Hour)
	}
	w.notifier = NewNotifier(w.api, NotifierConfig{
		ApprovalChannel: approvals, Mention: "<!subteam^SAPPROVERS>",
		ScopeText: approval.ScopeText(approval.DefaultScopeFor), Logger: log,
		RetryBackoff:       20 * time.Millisecond,
		PerChannelInterval: time.Hour, PerChannelBurst: 3,
		Pace: pace, Batches: batches, Asks: w.asks,
	})
	var err error
	w.approver, err = approval.New(approval.Config{
		Asks: w.asks, Grants: w.grants, Notifiers: []approval.Notifier{w.notifier},
		Timeout: 30 * time.Second, SessionTTL: time.Hour, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	approvers, err := NewApprovers(ApproversConfig{Users: []string{approverA}})
	if err != nil {
		t.Fatal(err)
	}
	w.serveClicks(approvers, log)
	return w
}

// waiting reports how many Asks wait in channel's queue.
func (n *Notifier) waiting(channel string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cq := n.queues[channel]; cq != nil {
		return len(cq.waiting)
	}
	return 0
}

// entryHasButton reports whether the batch message's entry for askID
// carries the button actionID.
func entryHasButton(blocks []slack.Block, actionID, askID string) bool {
	return buttonFor(blocks, actionID, askID)
}

// Asks that queue up behind a channel's pace are shown together in one
// batch message, each with its own buttons; a later one joins it by an
// edit; and a click on a batch message's button decides exactly that
// button's Ask, on any store instance, and takes only its buttons away.
func TestBatchMessageButtonsDecideTheirOwnAsk(t *testing.T) {
	run := func(t *testing.T, redisURL string) {
		w := newBurstWorld(t, redisURL)
		first := w.ask(bashRequest("run-0", "sess", "make first"))
		if m, _ := w.fake.Message(first.channel, first.ts); !strings.Contains(m.Text, "Approval needed") {
			t.Fatalf("the first Ask, with a slot free, was not posted in its own message: %q", m.Text)
		}

		// While the next post is in flight, three more Asks queue up.
		w.fake.SetDelay("chat.postMessage", 300*time.Millisecond)
		for i := 1; i < 5; i++ {
			req := bashRequest(fmt.Sprintf("run-%d", i), "sess", fmt.Sprintf("make step-%d", i))
			go func() { _ = w.approver.Approve(t.Context(), req) }()
			if i == 1 {
				testwait.For(t, "the second Ask's post to be in flight", func() bool { return len(w.fake.Calls("chat.postMessage")) == 2 })
			}
		}
		testwait.For(t, "three Asks to be queued", func() bool { return w.notifier.waiting(approvals) == 3 })
		batched := map[string]*waiting{}
		testwait.For(t, "the queued Asks to be shown", func() bool {
			asks, err := w.asks.ListPending(t.Context(), pending.Filter{})
			if err != nil {
				return false
			}
			for _, a := range asks {
				if a.RunID >= "run-2" && a.MessageTS != "" {
					batched[a.RunID] = &waiting{id: a.ID, channel: a.Channel, ts: a.MessageTS}
				}
			}
			return len(batched) == 3
		})
		ts := batched["run-2"].ts
		for _, b := range batched {
			if b.ts != ts {
				t.Fatalf("queued Asks went to different messages: %+v", batched)
			}
		}
		if n := len(w.fake.Calls("chat.postMessage")); n != 3 {
			t.Fatalf("%d posts, want 3: two Asks' own and one batch message", n)
		}
		m, _ := w.fake.Message(approvals, ts)
		if !strings.Contains(m.Text, "3 approval requests waiting") {
			t.Fatalf("batch message text %q", m.Text)
		}
		for _, b := range batched {
			for _, act := range []string{ActionApprove, ActionDeny, ActionDenyReason} {
				if !entryHasButton(m.Blocks, act, b.id) {
					t.Fatalf("the batch message has no %s button for ask %s", act, b.id)
				}
			}
		}

		// No slot for an hour: a new Ask joins the batch message by an edit.
		w.fake.SetDelay("chat.postMessage", 0)
		late := w.ask(bashRequest("run-5", "sess", "make late"))
		if late.ts != ts {
			t.Fatalf("the late Ask was shown at %s, not in the batch message %s", late.ts, ts)
		}
		if m, _ := w.fake.Message(approvals, ts); !entryHasButton(m.Blocks, ActionApprove, late.id) || !strings.Contains(m.Text, "4 approval requests waiting") {
			t.Fatalf("the batch message was not edited to show the late Ask: %q", m.Text)
		}

		target := batched["run-3"]
		w.clickOn(approvals, ts, target.id, approverA, ActionApprove)
		w.clickOn(approvals, ts, late.id, approverA, ActionDeny)
		testwait.For(t, "both decisions", func() bool {
			a, _ := w.asks.Get(t.Context(), target.id)
			b, _ := w.asks.Get(t.Context(), late.id)
			return a.Status == pending.Status(pending.Approved) && b.Status == pending.Status(pending.Denied)
		})
		for _, id := range []string{batched["run-2"].id, batched["run-4"].id, first.id} {
			if a, _ := w.asks.Get(t.Context(), id); a.Status != pending.StatusPending {
				t.Fatalf("ask %s is %s: a click on another Ask's button decided it", id, a.Status)
			}
		}
		wctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := w.fake.WaitForMessage(wctx, approvals, ts, func(m fakeslack.Message) bool {
			return !entryHasButton(m.Blocks, ActionApprove, target.id) && !entryHasButton(m.Blocks, ActionApprove, late.id) &&
				entryHasButton(m.Blocks, ActionApprove, batched["run-2"].id) && entryHasButton(m.Blocks, ActionApprove, batched["run-4"].id) &&
				strings.Contains(m.Text, "2 approval requests waiting")
		}); err != nil {
			m, _ := w.fake.Message(approvals, ts)
			t.Fatalf("the batch message does not show the two decisions and the two open Asks: %v; text %q", err, m.Text)
		}
		if n := w.fake.RateLimited(); n != 0 {
			t.Fatalf("Slack answered %d calls 429", n)
		}
	}
	t.Run("memory", func(t *testing.T) { run(t, "") })
	t.Run("redis", func(t *testing.T) { run(t, redistest.Start(t).URL()) })
}

// Two replicas on one Redis share a channel's pace: the burst is spent
// once between them, so together they post no faster than Slack allows.
func TestNotifiersShareThePaceOnRedis(t *testing.T) {
	verifyNoLeaks(t)
	srv := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	replica := func() *Notifier {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { client.Close() })
		return NewNotifier(fakeAPI(fake), NotifierConfig{
			ApprovalChannel: approvals, PerChannelInterval: time.Hour, PerChannelBurst: 3,
			Pace: channelpace.NewRedis(client, rediskey.Default()),
		})
	}
	a, b := replica(), replica()
	for i, n := range []*Notifier{a, b, a} {
		if _, _, err := n.Post(t.Context(), openAsk(fmt.Sprintf("ASK%d", i))); err != nil {
			t.Fatalf("post %d of the burst: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, _, err := b.Post(ctx, openAsk("ASK3"))
	var np *approval.NotPosted
	if !errors.As(err, &np) || !strings.Contains(np.Reason, "never shown") {
		t.Fatalf("the 4th post, on the replica that posted once: %v; want it held by the shared pace and never shown", err)
	}
	if n := len(fake.Calls("chat.postMessage")); n != 3 {
		t.Fatalf("%d posts reached Slack, want the shared burst of 3", n)
	}
}

// An Ask still queued as its deadline nears ends never shown, before the
// deadline, so it is unavailable rather than expired. Post is given no
// deadline of its own here: only the Ask's can end its wait, so its
// answer shows it gave up by itself, and the give-up time is checked to
// come before the deadline (no wall-clock race: a slow machine only makes
// the answer later).
func TestQueuedAskGivesUpBeforeItsDeadline(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: time.Hour, PerChannelBurst: 1})
	if _, _, err := n.Post(t.Context(), openAsk("FIRST")); err != nil {
		t.Fatal(err)
	}
	a := openAsk("SECOND")
	a.CreatedAt = time.Now()
	a.Deadline = a.CreatedAt.Add(500 * time.Millisecond)
	_, _, err := n.Post(t.Context(), a)
	var np *approval.NotPosted
	if !errors.As(err, &np) || !strings.Contains(np.Reason, "never shown") {
		t.Fatalf("got %v, want never shown", err)
	}
	for _, life := range []time.Duration{500 * time.Millisecond, time.Minute, 24 * time.Hour} {
		b := a
		b.Deadline = b.CreatedAt.Add(life)
		at, ok := giveUpAt(b)
		if margin := b.Deadline.Sub(at); !ok || margin <= 0 || margin > time.Second {
			t.Errorf("an Ask of life %s gives up %s before its deadline (ok %v), want within the last second and before it", life, margin, ok)
		}
	}
	if n := len(fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d posts", n)
	}
}

// openThread is OpenThreadThen, waited for.
func openThread(t *testing.T, n *Notifier, title string) (channel, ts string, err error) {
	t.Helper()
	type opened struct {
		channel, ts string
		err         error
	}
	got := make(chan opened, 1)
	n.OpenThreadThen(t.Context(), title, func(channel, ts string, err error) { got <- opened{channel, ts, err} })
	o := <-got
	return o.channel, o.ts, o.err
}

// A thread's title waits while Asks are queued for the channel: no Ask
// waits behind a title.
func TestThreadTitleYieldsToQueuedAsks(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: 200 * time.Millisecond, PerChannelBurst: 1})
	if _, _, err := n.Post(t.Context(), openAsk("FIRST")); err != nil { // spends the burst
		t.Fatal(err)
	}
	posted := make(chan error, 1)
	go func() { _, _, err := n.Post(t.Context(), openAsk("QUEUED")); posted <- err }()
	testwait.For(t, "the Ask to queue", func() bool { return n.waiting(approvals) == 1 })
	if _, _, err := openThread(t, n, "Claude Code · session 3f2a…"); err != nil {
		t.Fatal(err)
	}
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	posts := fake.Calls("chat.postMessage")
	if len(posts) != 3 {
		t.Fatalf("%d posts", len(posts))
	}
	if !strings.Contains(posts[1].Text, "Approval needed") || !strings.Contains(posts[2].Text, "session 3f2a") {
		t.Fatalf("posts after the burst: %q then %q; want the queued Ask before the thread's title", posts[1].Text, posts[2].Text)
	}
}

// A title's Ask goes first even when the title is asked for first (the
// gateway asks for it just before the Ask is recorded), and titles waiting
// behind a backed-up channel hold no goroutine each.
func TestThreadTitlesQueueBehindAsksWithoutAGoroutineEach(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: 10 * time.Millisecond, PerChannelBurst: 1})
	const titles = 200
	opened := make(chan error, titles)
	open := func(i int) {
		n.OpenThreadThen(t.Context(), fmt.Sprintf("Claude Code · session s%03d", i), func(_, ts string, err error) {
			if err == nil && ts == "" {
				err = errors.New("opened with no ts")
			}
			opened <- err
		})
	}
	before := runtime.NumGoroutine()
	open(0)
	// The first title's Ask, recorded just after it was asked for.
	posted := make(chan error, 1)
	go func() { _, _, err := n.Post(t.Context(), openAsk("OPENER")); posted <- err }()
	testwait.For(t, "the Ask to queue", func() bool { return len(fake.Calls("chat.postMessage")) > 0 || n.waiting(approvals) == 1 })
	for i := 1; i < titles; i++ {
		open(i)
	}
	if grew := runtime.NumGoroutine() - before; grew > 10 {
		t.Fatalf("%d goroutines more with %d titles queued", grew, titles)
	}
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	for range titles {
		if err := <-opened; err != nil {
			t.Fatal(err)
		}
	}
	posts := fake.Calls("chat.postMessage")
	if len(posts) != titles+1 || !strings.Contains(posts[0].Text, "Approval needed") {
		t.Fatalf("%d posts, the first %q; want the Ask first, then the %d titles", len(posts), posts[0].Text, titles)
	}
	for i, p := range posts[1:] {
		if want := fmt.Sprintf("session s%03d", i); !strings.Contains(p.Text, want) {
			t.Fatalf("post %d: %q, want %q (titles in the order asked)", i+1, p.Text, want)
		}
	}
}

// A burst of long commands fits several to a batch message: each entry
// shows its call's head and a Show full button, so Slack's one post a
// second shows a dozen 1 KB Asks or more, not six. Once decided with long reasons,
// the entries still fit: the decided ones shrink to a line and the open
// one keeps its buttons.
func TestBatchEntriesOfLongCommandsAreCompact(t *testing.T) {
	n := NewNotifier(nil, NotifierConfig{ApprovalChannel: approvals, ScopeText: approval.ScopeText(approval.DefaultScopeFor)})
	deadline := time.Now().Add(time.Hour)
	var asks []pending.Ask
	for k := range 24 {
		cmd := fmt.Sprintf("make deploy-%02d %s", k, strings.Repeat("x", 1000))
		asks = append(asks, pending.Ask{Request: bashRequest("run", fmt.Sprintf("sess-%d", k), cmd),
			ID: fmt.Sprintf("ask-%02d", k), Status: pending.StatusPending, Deadline: deadline})
	}
	k, msg := n.fitBatch(nil, asks)
	if k < 12 {
		t.Fatalf("%d Asks with 1 KB commands fit one batch message, want at least 12", k)
	}
	if want := n.renderBatch(asks[:k]); fakeslack.BlockText(msg.Blocks) != fakeslack.BlockText(want.Blocks) || msg.Text != want.Text {
		t.Error("fitBatch's message is not the batch message of the Asks that fit")
	}
	if err := CheckLimits(msg.Blocks); err != nil {
		t.Fatal(err)
	}
	text := fakeslack.BlockText(msg.Blocks)
	for _, a := range asks[:k] {
		if !entryHasButton(msg.Blocks, ActionApprove, a.ID) || !entryHasButton(msg.Blocks, ActionShowFull, a.ID) {
			t.Errorf("%s's entry lacks Approve or Show full", a.ID)
		}
		if !strings.Contains(text, a.Summary[:len("make deploy-00 xxxxxxxx")]) {
			t.Errorf("%s's entry does not show the command's head", a.ID)
		}
	}

	for i := range k - 1 {
		asks[i].Status, asks[i].DecidedBy, asks[i].DecidedAt = pending.Status(pending.Denied), approverA, time.Now()
		asks[i].DecisionReason = strings.Repeat("not during the freeze ", 50)
	}
	msg = n.renderBatch(asks[:k])
	if err := CheckLimits(msg.Blocks); err != nil {
		t.Fatalf("after the decisions: %v", err)
	}
	if open := asks[k-1].ID; !entryHasButton(msg.Blocks, ActionApprove, open) {
		t.Errorf("the open Ask %s lost its buttons", open)
	}
	for _, a := range asks[:k-1] {
		if entryHasButton(msg.Blocks, ActionApprove, a.ID) {
			t.Errorf("decided %s still has Approve", a.ID)
		}
	}
	if got := fakeslack.BlockText(msg.Blocks); !strings.Contains(got, "Denied by <@"+approverA+">") {
		t.Errorf("the decided entries do not say who denied them:\n%s", got)
	}
}
