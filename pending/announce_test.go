package pending

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
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
// (or, with replicas to wait for, the decider once WAIT confirms)
// announces the record it wrote, so the waiting replica needs no read of
// the store between the click and the agent going on. Here the waiting
// store's reads hang after its first one; before record announcements
// the waiter could then only end at its deadline (or here, its context).
// On a Sentinel set the waiter's read stands for one on the old master of
// a failover, left without its replicas: it cannot confirm, so before the
// decider announced the record there the waiter woke only once its
// client moved to the new master (1.3-2.3 s after the decision was
// confirmed, TestSentinelNoConfirmedDecisionLost).
func TestRedisWaiterWakesOnTheAnnouncedRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(*testing.T) string
	}{
		{"redis", func(t *testing.T) string { return redistest.Start(t).URL() }},
		{"sentinel", func(t *testing.T) string { return redistest.StartSentinel(t, 1).URL() }},
	} {
		t.Run(tc.name, func(t *testing.T) { waiterWakesOnTheAnnouncedRecord(t, tc.url(t)) })
	}
}

func waiterWakesOnTheAnnouncedRecord(t *testing.T, url string) {
	w := startStalledWaiter(t, url)
	if !w.deciding.replicas.on() && strings.HasPrefix(url, "redis-sentinel") {
		t.Fatal("the decider on a Sentinel set waits for no replica: the test tests nothing")
	}
	w.hook.stall()
	a, deciding, done := w.ask, w.deciding, w.done
	if _, err := deciding.Decide(t.Context(), a.ID, Approved, "U0APPROVER", ""); err != nil {
		t.Fatal(err)
	}
	// Liveness, not speed: the only way to end now is the announcement
	// (the reads hang and the deadline is an hour away); a cancel would
	// end it too, with the approval it would then read, so there is none.
	r := testwait.Receive(t, done, "the waiter to end on the decision's announcement")
	if r.err != nil || r.a.Status != Status(Approved) || r.a.DecidedBy != "U0APPROVER" {
		t.Fatalf("the waiter ended %q by %q (%v); want approved by U0APPROVER from the announcement", r.a.Status, r.a.DecidedBy, r.err)
	}
	if r.a.Request.Args != sampleRequest(1).Args || r.a.Deadline.IsZero() || r.a.DecidedAt.IsZero() {
		t.Errorf("the announced record lost fields: %+v", r.a)
	}
}

// A PUBLISH that is not askops' own never ends a wait: a record
// announcement without a signature (the format before signing, or a
// forger's), one signed under another key, or one whose signature is for
// another id is ignored, and the waiter ends on the real decision. The
// waiting store's reads hang, so an announcement is the only way it could
// end early; before signing, the forged approval below ended it.
func TestForgedAnnouncementEndsNoWait(t *testing.T) {
	w := startStalledWaiter(t, redistest.Start(t).URL())
	url, waiting, deciding, a, done, hook, key := w.url, w.waiting, w.deciding, w.ask, w.done, w.hook, w.key

	// The forged record: the real one, approved by UEVIL.
	raw := newRedisClient(t, url)
	h, err := raw.HGetAll(t.Context(), waiting.keys.ask(a.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	h["status"], h["decided_by"], h["decided_at"] = string(Approved), "UEVIL", h["created_at"]
	var body strings.Builder
	for k, v := range h {
		fmt.Fprintf(&body, "%d:%s%d:%s", len(k), k, len(v), v)
	}
	sign := func(k []byte, id string) string {
		m := hmac.New(sha1.New, []byte(hex.EncodeToString(k)))
		m.Write([]byte(id + "\n" + body.String()))
		return "s1:" + hex.EncodeToString(m.Sum(nil)) + "\n"
	}
	hook.stall()
	for name, payload := range map[string]string{
		"unsigned":          a.ID + "\n" + body.String(),
		"another key":       a.ID + "\n" + sign(AnnounceKeyFrom("xoxb-someone-else"), a.ID) + body.String(),
		"signed for an id":  a.ID + "\n" + sign(key, "other-id") + body.String(),
		"bad signature hex": a.ID + "\n" + "s1:zz\n" + body.String(),
	} {
		if err := raw.Publish(t.Context(), waiting.keys.decided, payload).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			t.Fatalf("a forged announcement (%s) ended the wait: %s by %q", name, r.a.Status, r.a.DecidedBy)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := deciding.Decide(t.Context(), a.ID, Denied, "U0APPROVER", "not now"); err != nil {
		t.Fatal(err)
	}
	if r := testwait.ReceiveWithin(t, done, 20*time.Second, "the waiter to end on the real, signed announcement"); r.err != nil || r.a.Status != Status(Denied) || r.a.DecidedBy != "U0APPROVER" {
		t.Fatalf("the waiter ended %q by %q (%v); want the real denial", r.a.Status, r.a.DecidedBy, r.err)
	}
}

// stalledWaiter is an Ask waited on by one store whose record reads hang
// once stall is called (after the waiter's first read, which learns the
// deadline), so only an announcement can end its wait; another store on
// the same Redis, with the same announcement key, decides.
type stalledWaiter struct {
	url               string // of one Redis, or of a Sentinel set
	waiting, deciding *RedisStore
	hook              *stallReads
	key               []byte
	ask               Ask
	done              chan announcedEnd
}

// announcedEnd is how the stalled waiter's Wait ended.
type announcedEnd struct {
	a   Ask
	err error
}

func startStalledWaiter(t *testing.T, url string) stalledWaiter {
	t.Helper()
	w := stalledWaiter{url: url, hook: &stallReads{}, key: AnnounceKeyFrom("xoxb-the-deployment's-bot-token"), done: make(chan announcedEnd, 1)}
	client := newRedisClient(t, w.url)
	client.AddHook(w.hook)
	var err error
	if w.waiting, err = NewRedisStore(t.Context(), client, Options{Logger: quietLogger(), AnnounceKey: w.key}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.waiting.Close() })
	w.deciding = newRedisStore(t, w.url, Options{Logger: quietLogger(), AnnounceKey: w.key})
	if w.ask, err = w.deciding.Create(t.Context(), sampleRequest(1), time.Hour); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go func() { got, err := w.waiting.Wait(ctx, w.ask.ID); w.done <- announcedEnd{got, err} }()
	testwait.Within(t, 10*time.Second, "the waiter's first read", func() bool {
		w.waiting.waiters.mu.Lock()
		defer w.waiting.waiters.mu.Unlock()
		ws := w.waiting.waiters.m[w.ask.ID]
		return len(ws) == 1 && len(w.waiting.waiters.dirty) == 0 && len(ws[0].reads) == 0
	})
	return w
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

// The padded keys the script signs with give the HMAC the listener checks,
// for the deployment's key (one block) and a longer one (hashed first).
func TestAnnouncePadsAreTheHMACKey(t *testing.T) {
	for _, key := range [][]byte{AnnounceKeyFrom("xoxb-1"), []byte(strings.Repeat("k", 40))} {
		pads := announcePads(key)
		if len(pads) != 128 {
			t.Fatalf("pads of a %d-byte key: %d bytes", len(key), len(pads))
		}
		msg := "ask_1\n6:status8:approved"
		inner := sha1.Sum([]byte(pads[:64] + msg))
		got := sha1.Sum(append([]byte(pads[64:]), inner[:]...))
		m := hmac.New(sha1.New, []byte(hex.EncodeToString(key)))
		m.Write([]byte(msg))
		if !hmac.Equal(got[:], m.Sum(nil)) {
			t.Errorf("a %d-byte key: the pads' HMAC differs from crypto/hmac's", len(key))
		}
	}
	if announceOn("decided", nil) != "decided" {
		t.Error("no key has pads")
	}
}
