package slackui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// PostThen shows an Ask as Post does without a goroutine waiting in the
// channel's queue: done reports where it was shown, and an Ask still
// queued when its asker stops is withdrawn and reported never shown.
func TestPostThenReportsShownOrNeverShown(t *testing.T) {
	w := newBurstWorld(t, "")
	// One post, then none for an hour, and no batching (no Asks to read):
	// the second Ask stays queued.
	n := NewNotifier(w.api, NotifierConfig{ApprovalChannel: approvals, RetryBackoff: 20 * time.Millisecond,
		PerChannelInterval: time.Hour, PerChannelBurst: 1})
	type result struct {
		channel, ts string
		err         error
	}
	post := func(ctx context.Context, command string, ttl time.Duration) (pending.Ask, chan result) {
		a, err := w.asks.Create(t.Context(), bashRequest("run-1", "sess", command), ttl)
		if err != nil {
			t.Fatal(err)
		}
		c := make(chan result, 2)
		queued := a
		n.PostThen(ctx, &queued, func(channel, ts string, err error) { c <- result{channel, ts, err} })
		return a, c
	}
	got := func(c chan result) result {
		t.Helper()
		return testwait.Receive(t, c, "PostThen's report")
	}

	_, c := post(t.Context(), "make first", time.Minute)
	r := got(c)
	if r.err != nil || r.channel != approvals || r.ts == "" {
		t.Fatalf("first: %+v", r)
	}
	if m, ok := w.fake.Message(r.channel, r.ts); !ok || !strings.Contains(m.Text+fakeslack.BlockText(m.Blocks), "make first") {
		t.Fatalf("the first Ask's message is not in Slack: %v %q", ok, m.Text)
	}

	ctx, stop := context.WithCancel(t.Context())
	_, c = post(ctx, "make second", time.Minute)
	testwait.For(t, "the second Ask to be queued", func() bool { return n.waiting(approvals) == 1 })
	stop()
	r = got(c)
	np, ok := errors.AsType[*approval.NotPosted](r.err)
	if !ok || !strings.Contains(np.Reason, "never shown") || r.ts != "" {
		t.Fatalf("second: %+v, want never shown", r)
	}
	testwait.For(t, "the queue to be empty", func() bool { return n.waiting(approvals) == 0 })
	select {
	case r := <-c:
		t.Fatalf("reported twice: %+v", r)
	default:
	}

	// Nobody stops the third: the queue gives it up shortly before its
	// deadline, so it ends never shown rather than expired.
	_, c = post(t.Context(), "make third", 2*time.Second)
	r = got(c)
	np, ok = errors.AsType[*approval.NotPosted](r.err)
	if !ok || !strings.Contains(np.Reason, "never shown") || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("third: %+v, want never shown at its give-up time", r)
	}
	testwait.For(t, "the queue to be empty", func() bool { return n.waiting(approvals) == 0 })
}
