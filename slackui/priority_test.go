package slackui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
)

// gatePace hands out a key's slots only as the test grants them, and
// counts the takes.
type gatePace struct {
	mu    sync.Mutex
	slots map[string]int
	takes map[string]int // by key
}

func newGatePace() *gatePace { return &gatePace{slots: map[string]int{}, takes: map[string]int{}} }

func (g *gatePace) Take(_ context.Context, key string, _ channelpace.Limit, _ channelpace.Claim) (time.Duration, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.takes[key]++
	if g.slots[key] > 0 {
		g.slots[key]--
		return 0, nil
	}
	return 5 * time.Millisecond, nil
}

func (g *gatePace) Release(context.Context, string, string) error { return nil }

func (g *gatePace) grant(key string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.slots[key] += n
}

// queued is how many posts (not Asks) wait in channel's queue.
func (n *Notifier) queued(channel string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cq := n.queues[channel]; cq != nil {
		return len(cq.posts)
	}
	return 0
}

// postTexts are the texts of the posts Slack took, in order.
func postTexts(fake *fakeslack.Server, method string) []string {
	var out []string
	for _, c := range fake.Calls(method) {
		if c.OK() || method == "chat.update" {
			out = append(out, c.Text)
		}
	}
	return out
}

// What a person must act on goes first: when the channel has a slot, a
// new Ask goes before a follow-up, and a follow-up before run status,
// whatever the order they were queued in; within a priority, first come
// first served.
func TestPostsGoByPriority(t *testing.T) {
	gate := newGatePace()
	n, fake := newTestNotifier(t, NotifierConfig{Pace: gate})
	ctx := t.Context()
	var wg sync.WaitGroup
	say := func(p Priority, text string) {
		wg.Go(func() {
			if _, _, err := n.Say(ctx, p, approvals, slack.MsgOptionText(text, false)); err != nil {
				t.Errorf("%s: %v", text, err)
			}
		})
	}
	say(PriorityStatus, "status one")
	testwait.For(t, "the first post to queue", func() bool { return n.queued(approvals) == 1 })
	say(PriorityFollowup, "reminder")
	testwait.For(t, "the reminder to queue", func() bool { return n.queued(approvals) == 2 })
	say(PriorityStatus, "status two")
	testwait.For(t, "status two to queue", func() bool { return n.queued(approvals) == 3 })
	wg.Go(func() {
		if _, _, err := n.Post(ctx, openAsk("LATE")); err != nil {
			t.Errorf("ask: %v", err)
		}
	})
	testwait.For(t, "the Ask to queue", func() bool { return n.waiting(approvals) == 1 })

	want := []string{"Approval needed", "reminder", "status one", "status two"}
	for i := range want {
		gate.grant(approvals, 1)
		testwait.For(t, fmt.Sprintf("post %d", i+1), func() bool { return len(postTexts(fake, "chat.postMessage")) == i+1 })
	}
	wg.Wait()
	got := postTexts(fake, "chat.postMessage")
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Fatalf("posts in the order %q; want %q first, then %q", got, want[0], want[1:])
		}
	}
}

// The app's edits share one budget, by priority too: an Ask joining a
// batch message before a decision's update, a decision's before a run's
// status.
func TestEditsGoByPriority(t *testing.T) {
	gate := newGatePace()
	n, fake := newTestNotifier(t, NotifierConfig{Pace: gate, MaxAttempts: 1})
	ctx := t.Context()
	var wg sync.WaitGroup
	edit := func(p Priority, text string) {
		wg.Go(func() {
			// The messages do not exist: the fake records the call and
			// answers message_not_found, which is all the order needs.
			_ = n.edit(ctx, p, false, approvals, "1.000001", slack.MsgOptionText(text, false))
		})
	}
	waiters := func() int {
		n.mu.Lock()
		defer n.mu.Unlock()
		k := 0
		for _, w := range n.edits.waiting {
			k += len(w)
		}
		return k
	}
	edit(PriorityStatus, "run status")
	testwait.For(t, "the status edit to wait", func() bool { return waiters() == 1 })
	edit(PriorityDecision, "decided")
	testwait.For(t, "the decision's edit to wait", func() bool { return waiters() == 2 })
	edit(PriorityAsk, "batch")
	testwait.For(t, "the batch edit to wait", func() bool { return waiters() == 3 })
	for i := range 3 {
		gate.grant(editKey, 1)
		testwait.For(t, fmt.Sprintf("edit %d", i+1), func() bool { return len(fake.Calls("chat.update")) == i+1 })
	}
	wg.Wait()
	got := postTexts(fake, "chat.update")
	if got[0] != "batch" || got[1] != "decided" || got[2] != "run status" {
		t.Fatalf("edits in the order %q; want the batch's, the decision's, the status'", got)
	}
	if n := len(fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("%d posts", n)
	}
}

// observedPace is a shared pace that records who tried to take what, and
// can hold one holder's takes until released.
type observedPace struct {
	channelpace.Pace
	mu     sync.Mutex
	tried  map[string]map[int]int // holder → priority → takes
	hold   string                 // holder whose takes wait for release
	openUp chan struct{}
}

func (o *observedPace) Take(ctx context.Context, key string, l channelpace.Limit, c channelpace.Claim) (time.Duration, error) {
	o.mu.Lock()
	if o.tried[c.Holder] == nil {
		o.tried[c.Holder] = map[int]int{}
	}
	o.tried[c.Holder][c.Priority]++
	held, open := o.hold == c.Holder, o.openUp
	o.mu.Unlock()
	if held {
		<-open
	}
	return o.Pace.Take(ctx, key, l, c)
}

func (o *observedPace) takes(holder string, prio Priority) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tried[holder][int(prio)]
}

// Two replicas share a channel's pace: while one has an Ask queued, the
// other's run status waits, even when the status replica asks for the
// free slot first; once the Ask is out, the status goes.
func TestReplicaYieldsToAnotherReplicasAsk(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Unix(1_800_000_000, 0).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	shared := &observedPace{Pace: channelpace.NewMemory(now), tried: map[string]map[int]int{}}
	cfg := NotifierConfig{Pace: shared, PerChannelInterval: 2 * time.Second, PerChannelBurst: 1}
	asks, fake := newTestNotifier(t, cfg)
	status := NewNotifier(slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL())), cfg)
	ctx := t.Context()

	if _, _, err := asks.Post(ctx, openAsk("FIRST")); err != nil { // spends the slot
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := status.Say(ctx, PriorityStatus, approvals, slack.MsgOptionText("run status", false)); err != nil {
			t.Errorf("status: %v", err)
		}
	})
	wg.Go(func() {
		if _, _, err := asks.Post(ctx, openAsk("SECOND")); err != nil {
			t.Errorf("ask: %v", err)
		}
	})
	testwait.For(t, "both replicas to claim the channel", func() bool {
		return shared.takes(asks.holder, PriorityAsk) > 0 && shared.takes(status.holder, PriorityStatus) > 0
	})
	// The next slot comes; the status replica looks first.
	shared.mu.Lock()
	shared.hold, shared.openUp = asks.holder, make(chan struct{})
	before := shared.tried[status.holder][int(PriorityStatus)]
	shared.mu.Unlock()
	clock.Add(int64(2 * time.Second))
	testwait.For(t, "the status replica to look at the free slot", func() bool { return shared.takes(status.holder, PriorityStatus) > before })
	shared.mu.Lock()
	shared.hold = ""
	close(shared.openUp)
	shared.mu.Unlock()
	testwait.For(t, "a second post", func() bool { return len(postTexts(fake, "chat.postMessage")) >= 2 })
	if got := postTexts(fake, "chat.postMessage"); !strings.Contains(got[1], "Approval needed") {
		t.Fatalf("the free slot went to %q; want the other replica's queued Ask", got[1])
	}
	clock.Add(int64(2 * time.Second))
	wg.Wait()
	if got := postTexts(fake, "chat.postMessage"); len(got) != 3 || got[2] != "run status" {
		t.Fatalf("posts %q; want the status last", got)
	}
}

// A persistent post (a run's answer) rides out more failures than one
// slot's retries, in slots of its own; a refusal for good ends it at once.
func TestPersistentPostIsNeverDropped(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{RetryBackoff: time.Millisecond, MaxAttempts: 2})
	fake.FailNext("chat.postMessage", 7, fakeslack.FailMode{Status: 503})
	type result struct {
		ts  string
		err error
	}
	got := make(chan result, 2)
	post := func(channel, text string, persist bool) {
		n.Enqueue(t.Context(), Post{Channel: channel, Priority: PriorityStatus, Persist: persist,
			Message: func() []slack.MsgOption { return []slack.MsgOption{slack.MsgOptionText(text, false)} }},
			func(_, ts string, err error) { got <- result{ts, err} })
	}
	post(approvals, "the answer", true)
	if r := <-got; r.err != nil || r.ts == "" {
		t.Fatalf("persistent post after 7 failures: %+v", r)
	}
	if texts := postTexts(fake, "chat.postMessage"); len(texts) != 1 || texts[0] != "the answer" {
		t.Fatalf("posted %q", texts)
	}
	fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{SlackError: "channel_not_found"})
	post("CGONE", "lost", true)
	if r := <-got; r.err == nil || !strings.Contains(r.err.Error(), "channel_not_found") {
		t.Fatalf("post to a channel that is gone: %+v, want its refusal", r)
	}
}

// A status message shows the latest state: changes while it waits for its
// slot are sent as one edit of the newest text; its last state is sent
// even through failures beyond one slot's retries.
func TestStatusMessageCoalescesAndNeverSkipsTheEnd(t *testing.T) {
	gate := newGatePace()
	gate.grant(approvals, 1)
	n, fake := newTestNotifier(t, NotifierConfig{Pace: gate, RetryBackoff: time.Millisecond, MaxAttempts: 2})
	var mu sync.Mutex
	text := "starting"
	set := func(s string) { mu.Lock(); text = s; mu.Unlock() }
	s := n.Status(t.Context(), approvals, "", func() string { mu.Lock(); defer mu.Unlock(); return text })
	channel, ts, err := s.Posted(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		set(fmt.Sprintf("step %d", i+1))
		s.Changed()
	}
	testwait.For(t, "the edit to wait for its slot", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return len(n.edits.waiting[PriorityStatus]) == 1
	})
	set("step 6")
	s.Changed()
	gate.grant(editKey, 1)
	testwait.For(t, "the edit", func() bool { return len(fake.Calls("chat.update")) == 1 })
	if got := fake.Calls("chat.update")[0].Text; got != "step 6" {
		t.Fatalf("the edit sent %q; want the newest state, step 6", got)
	}

	fake.FailNext("chat.update", 5, fakeslack.FailMode{Status: 500})
	gate.grant(editKey, 100)
	set("finished")
	if err := s.Finish(t.Context()); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	m, _ := fake.Message(channel, ts)
	if m.Text != "finished" {
		t.Fatalf("the message says %q; want its last state", m.Text)
	}
	if k := len(fake.Calls("chat.update")); k != 7 {
		t.Errorf("%d edits, want 7 (one, five failures, the last)", k)
	}
}

// A status message posted late shows the state as it is then, and its end
// is sent once (no edit for what the post already showed).
func TestStatusMessagePostedLateShowsItsLatestState(t *testing.T) {
	gate := newGatePace()
	n, fake := newTestNotifier(t, NotifierConfig{Pace: gate})
	var mu sync.Mutex
	text := "starting"
	s := n.Status(t.Context(), approvals, "1.000001", func() string { mu.Lock(); defer mu.Unlock(); return text })
	testwait.For(t, "the status to queue", func() bool { return n.queued(approvals) == 1 })
	mu.Lock()
	text = "finished"
	mu.Unlock()
	s.Changed()
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Timeout)
	defer cancel()
	go func() { done <- s.Finish(ctx) }()
	// The post's slot comes only once the state is final: granted before,
	// the post could show a state Finish then outdates (an edit the gate
	// never grants a slot for).
	testwait.For(t, "Finish to mark the state final", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.final > 0 })
	gate.grant(approvals, 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	posts := fake.Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Text != "finished" || posts[0].ThreadTS != "1.000001" {
		t.Fatalf("posts %+v; want one, in the thread, saying finished", posts)
	}
	if k := len(fake.Calls("chat.update")); k != 0 {
		t.Fatalf("%d edits after a post that showed the last state", k)
	}
}

// Run status never spends the burst a channel keeps for Asks: with a
// burst of 3, a status post goes only while 2 slots are spare, so two
// Asks arriving after it still go at once.
func TestStatusLeavesTheBurstToAsks(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: time.Hour, PerChannelBurst: 3})
	ctx := t.Context()
	if _, _, err := n.Say(ctx, PriorityStatus, approvals, slack.MsgOptionText("status one", false)); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	said := make(chan error, 1)
	go func() {
		_, _, err := n.Say(sctx, PriorityStatus, approvals, slack.MsgOptionText("status two", false))
		said <- err
	}()
	testwait.For(t, "the second status to queue", func() bool { return n.queued(approvals) == 1 })
	actx, cancelAsks := context.WithTimeout(ctx, testwait.Timeout)
	defer cancelAsks()
	for _, id := range []string{"ASK1", "ASK2"} {
		if _, _, err := n.Post(actx, openAsk(id)); err != nil {
			t.Fatalf("%s: %v (the status took the slot kept for it)", id, err)
		}
	}
	cancel()
	if err := <-said; err == nil {
		t.Error("the second status went: it spent the Asks' burst")
	}
	if got := postTexts(fake, "chat.postMessage"); len(got) != 3 || got[0] != "status one" {
		t.Fatalf("posts %q", got)
	}
}
