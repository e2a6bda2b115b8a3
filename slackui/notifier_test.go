package slackui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
)

func newTestNotifier(t *testing.T, cfg NotifierConfig) (*Notifier, *fakeslack.Server) {
	t.Helper()
	verifyNoLeaks(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	api := fakeAPI(fake)
	if cfg.ApprovalChannel == "" {
		cfg.ApprovalChannel = approvals
	}
	if cfg.PerChannelInterval == 0 {
		cfg.PerChannelInterval = 20 * time.Millisecond
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 10 * time.Millisecond
	}
	return NewNotifier(api, cfg), fake
}

func openAsk(id string) pending.Ask {
	return pending.Ask{
		Request: bashRequest("run-"+id, "sess", "make deploy"),
		ID:      id, Status: pending.StatusPending,
		CreatedAt: time.Now(), Deadline: time.Now().Add(time.Minute),
	}
}

// A burst of Asks to one channel is queued at the channel's pace, none
// dropped.
func TestNotifierPacesBurstPerChannel(t *testing.T) {
	const interval, burst = 150 * time.Millisecond, 2
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: interval, PerChannelBurst: burst})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := range 5 {
		wg.Go(func() {
			_, _, err := n.Post(t.Context(), openAsk(fmt.Sprintf("ASK%d", i)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	posts := fake.Calls("chat.postMessage")
	if len(posts) != 5 {
		t.Fatalf("%d posts reached Slack, want all 5", len(posts))
	}
	// The first `burst` go at once, then one per interval.
	for k, p := range posts {
		slot := time.Duration(max(0, k-(burst-1))) * interval
		if p.At.Before(start.Add(slot)) {
			t.Fatalf("post %d reached Slack %s after the burst began, before its slot at %s", k, p.At.Sub(start), slot)
		}
	}
	if last := posts[len(posts)-1].At.Sub(start); last < time.Duration(len(posts)-burst)*interval {
		t.Fatalf("the last post went after %s: the pace did not hold", last)
	}
}

// A queued post gives up when its caller does.
func TestNotifierQueuedPostHonoursContext(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{PerChannelInterval: time.Hour, PerChannelBurst: 1})
	if _, _, err := n.Post(t.Context(), openAsk("FIRST")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := n.Post(ctx, openAsk("SECOND")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued post returned %v, want the context's error", err)
	}
	if n := len(fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d posts", n)
	}
}

func TestNotifierErrorsThatRetryingCannotFix(t *testing.T) {
	for _, code := range []string{"channel_not_found", "not_in_channel", "invalid_auth"} {
		t.Run(code, func(t *testing.T) {
			n, fake := newTestNotifier(t, NotifierConfig{})
			fake.FailNext("chat.postMessage", 10, fakeslack.FailMode{SlackError: code})
			_, _, err := n.Post(t.Context(), openAsk("X"))
			var se slack.SlackErrorResponse
			if !errors.As(err, &se) || se.Err != code {
				t.Fatalf("err = %v, want Slack's %s", err, code)
			}
			if got := len(fake.Calls("chat.postMessage")); got != 1 {
				t.Fatalf("%d attempts, want 1", got)
			}
		})
	}
}

func TestNotifierRetryBudget(t *testing.T) {
	tests := []struct {
		name     string
		fail     fakeslack.FailMode
		failures int
		wantErr  bool
		wantTry  int
	}{
		{"5xx then ok", fakeslack.FailMode{Status: http.StatusServiceUnavailable}, 2, false, 3},
		{"5xx beyond budget", fakeslack.FailMode{Status: http.StatusInternalServerError}, 10, true, 4},
		{"slack internal_error then ok", fakeslack.FailMode{SlackError: "internal_error"}, 1, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, fake := newTestNotifier(t, NotifierConfig{MaxAttempts: 4})
			fake.FailNext("chat.postMessage", tt.failures, tt.fail)
			_, ts, err := n.Post(t.Context(), openAsk("X"))
			if (err != nil) != tt.wantErr || (err == nil && ts == "") {
				t.Fatalf("Post = %q, %v; want error %v", ts, err, tt.wantErr)
			}
			if got := len(fake.Calls("chat.postMessage")); got != tt.wantTry {
				t.Fatalf("%d attempts, want %d", got, tt.wantTry)
			}
		})
	}
}

// A Retry-After longer than the Notifier may wait fails the post (so the
// Ask resolves unavailable) instead of leaving it unseen for that long.
func TestNotifierRetryAfterBeyondMaxWaitFails(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{MaxRetryWait: 500 * time.Millisecond})
	fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{Status: http.StatusTooManyRequests, RetryAfter: 30 * time.Second})
	_, _, err := n.Post(t.Context(), openAsk("X"))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want the rate limit", err)
	}
}

func TestNotifierUpdateExpired(t *testing.T) {
	n, fake := newTestNotifier(t, NotifierConfig{})
	var asks []pending.Ask
	for _, id := range []string{"A1", "A2"} {
		a := openAsk(id)
		ch, ts, err := n.Post(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		a.Channel, a.MessageTS = ch, ts
		a.Status, a.DecidedAt = pending.Status(pending.Expired), time.Now()
		asks = append(asks, a)
	}
	unposted := openAsk("A3")
	unposted.Status = pending.Status(pending.Expired)
	n.UpdateExpired(t.Context(), append(asks, unposted))
	for _, a := range asks {
		m, ok := fake.Message(a.Channel, a.MessageTS)
		if !ok || m.Updates != 1 || blocksHaveButton(m.Blocks, ActionApprove) {
			t.Fatalf("message of %s: updates %d, buttons %v", a.ID, m.Updates, blocksHaveButton(m.Blocks, ActionApprove))
		}
	}
	if got := len(fake.Calls("chat.update")); got != 2 {
		t.Fatalf("%d updates, want 2 (an unposted ask has no message)", got)
	}
}

// The sweeper expires what no waiter will and updates those messages; it
// cancels an Ask whose asker stopped waiting (its lease lapsed: a killed
// hook, a dead serve) and the message loses its buttons and says why.
func TestSweepUpdatesExpiredMessages(t *testing.T) {
	for _, kind := range []string{"memory", "redis"} {
		for _, c := range []struct {
			name   string
			ttl    time.Duration // the Ask's
			held   bool          // held, then let go: its lease lapses
			want   pending.Outcome
			reason string // in the message
		}{
			{"expired", 50 * time.Millisecond, false, pending.Expired, "nobody decided"},
			{"asker gone", 10 * time.Minute, true, pending.Cancelled, "the agent stopped waiting"},
		} {
			t.Run(kind+"/"+c.name, func(t *testing.T) { testSweep(t, kind, c.ttl, c.held, c.want, c.reason) })
		}
	}
}

func testSweep(t *testing.T, kind string, ttl time.Duration, held bool, want pending.Outcome, reason string) {
	n, fake := newTestNotifier(t, NotifierConfig{})
	opts := pending.Options{LeaseTTL: 100 * time.Millisecond}
	var store pending.Store
	if kind == "redis" {
		store, _ = redisAsks(t, redistest.Start(t).URL(), opts)
	} else {
		mem := pending.NewMemoryStore(opts)
		t.Cleanup(func() { mem.Close() })
		store = mem
	}
	ctx := t.Context()
	a, err := store.Create(ctx, bashRequest("run-sweep", "sess", "ls"), ttl)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		store.Hold(ctx, a.ID)()
	}
	ch, ts, err := n.Post(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetMessage(ctx, a.ID, ch, ts); err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		_ = approval.Sweep{Store: store, Messages: n, Every: 20 * time.Millisecond, Now: time.Now}.Run(sctx)
		close(done)
	}()
	defer func() { stop(); <-done }()
	if _, err := fake.WaitForMessage(ctx, ch, ts, func(m fakeslack.Message) bool {
		return m.Updates == 1 && !blocksHaveButton(m.Blocks, ActionApprove) && strings.Contains(string(m.RawBlocks), reason)
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := store.Get(ctx, a.ID)
	if got.Status != pending.Status(want) {
		t.Fatalf("swept ask is %s, want %s", got.Status, want)
	}
}
