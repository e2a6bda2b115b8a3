package pending

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
)

// stallReads makes a client's record reads (HGETALL, alone or pipelined)
// hang once stall is called, until the read's context ends.
type stallReads struct {
	mu      sync.Mutex
	stalled bool
}

func (h *stallReads) stall() { h.mu.Lock(); h.stalled = true; h.mu.Unlock() }

func (h *stallReads) wait(ctx context.Context, cmds ...redis.Cmder) error {
	h.mu.Lock()
	stalled := h.stalled
	h.mu.Unlock()
	for _, c := range cmds {
		if stalled && c.Name() == "hgetall" {
			<-ctx.Done()
			return ctx.Err()
		}
	}
	return nil
}

func (h *stallReads) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *stallReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.wait(ctx, cmd); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}
func (h *stallReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.wait(ctx, cmds...); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// A waiter ends on the decision's announcement alone: the decide script
// announces the record it wrote, so the waiting replica needs no read of
// the store between the click and the agent going on. Here the waiting
// store's reads hang after its first one; before record announcements
// the waiter could then only end at its deadline (or here, its context).
func TestRedisWaiterWakesOnTheAnnouncedRecord(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.URL())
	hook := &stallReads{}
	client.AddHook(hook)
	waiting, err := NewRedisStore(t.Context(), client, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = waiting.Close() })
	deciding := newRedisStore(t, srv.URL(), Options{Logger: quietLogger()})

	a, err := deciding.Create(t.Context(), sampleRequest(1), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		a   Ask
		err error
	}
	done := make(chan result, 1)
	go func() { got, err := waiting.Wait(ctx, a.ID); done <- result{got, err} }()
	// The first read (which learns the deadline) goes through; every later
	// one hangs.
	waitFor(t, "the waiter's first read", 10*time.Second, func() bool {
		waiting.waiters.mu.Lock()
		defer waiting.waiters.mu.Unlock()
		ws := waiting.waiters.m[a.ID]
		return len(ws) == 1 && len(waiting.waiters.dirty) == 0 && len(ws[0].reads) == 0
	})
	hook.stall()
	if _, err := deciding.Decide(t.Context(), a.ID, Approved, "U0APPROVER", ""); err != nil {
		t.Fatal(err)
	}
	// Liveness, not speed: the only way to end now is the announcement
	// (the reads hang and the deadline is an hour away); a cancel would
	// end it too, with the approval it would then read, so there is none.
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter did not end on the decision's announcement")
	}
	if r.err != nil || r.a.Status != Status(Approved) || r.a.DecidedBy != "U0APPROVER" {
		t.Fatalf("the waiter ended %q by %q (%v); want approved by U0APPROVER from the announcement", r.a.Status, r.a.DecidedBy, r.err)
	}
	if r.a.Request.Args != sampleRequest(1).Args || r.a.Deadline.IsZero() || r.a.DecidedAt.IsZero() {
		t.Errorf("the announced record lost fields: %+v", r.a)
	}
}

// An announcement whose record does not parse is skipped; the id alone,
// published after it, still wakes the waiter through a read.
func TestParseAnnouncedRecord(t *testing.T) {
	for _, c := range []struct {
		rec  string
		want map[string]string
	}{
		{"6:status8:approved", map[string]string{"status": "approved"}},
		{"1:a0:", map[string]string{"a": ""}},
		{"3:a\nb3:x:y", map[string]string{"a\nb": "x:y"}},
		{"", nil},
		{"6:status", nil},           // a field without its value
		{"9:status", nil},           // longer than what is left
		{"x:status8:approved", nil}, // no length
		{"-1:", nil},
	} {
		h, ok := parseAnnouncedRecord(c.rec)
		if ok != (c.want != nil) || len(h) != len(c.want) {
			t.Errorf("%q: got %v %v, want %v", c.rec, h, ok, c.want)
			continue
		}
		for k, v := range c.want {
			if h[k] != v {
				t.Errorf("%q: %q = %q, want %q", c.rec, k, h[k], v)
			}
		}
	}
}
