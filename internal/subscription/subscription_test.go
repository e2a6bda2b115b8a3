package subscription_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/subscription"
	"github.com/askops/askops/internal/testwait"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-redis probes a server that refused every dial once a second
		// from a goroutine that exits at its next wake-up after the client
		// is closed (pool.go tryDial); it is the library's, not a leak of ours.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	)
}

const channel = "test:{t}:events"

func newClient(t *testing.T, addr string) redis.UniversalClient {
	t.Helper()
	c := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{addr},
		ContextTimeoutEnabled: true,
		// Short, so that connections through a blackhole are given up
		// quickly and a restarted server is found again soon.
		DialTimeout:  300 * time.Millisecond,
		ReadTimeout:  300 * time.Millisecond,
		WriteTimeout: 300 * time.Millisecond,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recorder collects what a Subscription hands its handlers and logs.
type recorder struct {
	messages chan string
	resubs   atomic.Int32

	mu   sync.Mutex
	logs []string
}

func newRecorder() *recorder { return &recorder{messages: make(chan string, 100)} }

func (r *recorder) handlers(withResubscribed bool) subscription.Handlers {
	h := subscription.Handlers{Message: func(_ context.Context, p string) { r.messages <- p }}
	if withResubscribed {
		h.Resubscribed = func() { r.resubs.Add(1) }
	}
	return h
}

func (r *recorder) logger() *slog.Logger { return slog.New(recordingHandler{r}) }

func (r *recorder) logged(part string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.logs {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

type recordingHandler struct{ r *recorder }

func (h recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordingHandler) Handle(_ context.Context, rec slog.Record) error {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	h.r.logs = append(h.r.logs, rec.Message)
	return nil
}
func (h recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordingHandler) WithGroup(string) slog.Handler      { return h }

// publish publishes payload, retrying while the publisher's own connection
// recovers, and returns how many subscribers Redis delivered it to.
func publish(t *testing.T, c redis.UniversalClient, payload string) int64 {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int64
		if n, err = c.Publish(t.Context(), channel, payload).Result(); err == nil {
			return n
		}
	}
	t.Fatalf("publish %q: %v", payload, err)
	return 0
}

func expectMessage(t *testing.T, r *recorder, want string) {
	t.Helper()
	select {
	case got := <-r.messages:
		if got != want {
			t.Fatalf("message %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("message %q never arrived", want)
	}
}

func subscribe(t *testing.T, c redis.UniversalClient, r *recorder, opts subscription.Options, withResubscribed bool) *subscription.Subscription {
	t.Helper()
	opts.Logger = r.logger()
	s, err := subscription.Subscribe(t.Context(), c, channel, opts, r.handlers(withResubscribed))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Once Subscribe returns, the subscription exists: a message published
// right after it is delivered, in order with the following ones.
func TestSubscribeDeliversFromTheStart(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder()
	subscribe(t, newClient(t, srv.Addr()), r, subscription.Options{}, true)
	pub := newClient(t, srv.Addr())
	for _, p := range []string{"a", "b", "c"} {
		if n := publish(t, pub, p); n != 1 {
			t.Fatalf("publish %q reached %d subscribers right after Subscribe returned, want 1", p, n)
		}
	}
	for _, p := range []string{"a", "b", "c"} {
		expectMessage(t, r, p)
	}
	if n := r.resubs.Load(); n != 0 {
		t.Errorf("Resubscribed ran %d times without any drop", n)
	}
}

func TestSubscribeFails(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	if _, err := subscription.Subscribe(t.Context(), c, channel, subscription.Options{}, subscription.Handlers{}); err == nil {
		t.Error("Subscribe without a Message handler succeeded")
	}
	srv.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	r := newRecorder()
	if s, err := subscription.Subscribe(ctx, c, channel, subscription.Options{Logger: r.logger()}, r.handlers(true)); err == nil {
		_ = s.Close()
		t.Error("Subscribe with Redis down succeeded")
	}
}

// A dropped connection is redialled and resubscribed, Resubscribed runs
// (messages published meanwhile are lost), and messages flow again. Without
// a Resubscribed handler the subscription recovers all the same.
func TestSubscriptionSurvivesDrops(t *testing.T) {
	cases := []struct {
		name             string
		drop             func(t *testing.T, srv *redistest.Server)
		withResubscribed bool
		retryAtOnce      bool
	}{
		{"CLIENT KILL", killPubSub, true, true},
		{"CLIENT KILL, backoff first", killPubSub, true, false},
		{"CLIENT KILL, no Resubscribed handler", killPubSub, false, false},
		{"Redis restart", func(_ *testing.T, srv *redistest.Server) { srv.Restart() }, true, true},
		{"Redis restart, backoff first", func(_ *testing.T, srv *redistest.Server) { srv.Restart() }, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			r := newRecorder()
			subscribe(t, newClient(t, srv.Addr()), r, subscription.Options{RetryAtOnce: c.retryAtOnce}, c.withResubscribed)
			pub := newClient(t, srv.Addr())
			publish(t, pub, "before")
			expectMessage(t, r, "before")

			c.drop(t, srv)
			testwait.Within(t, 10*time.Second, "the resubscription", func() bool { return r.logged("resubscribed") })
			if c.withResubscribed {
				if n := r.resubs.Load(); n < 1 {
					t.Fatalf("Resubscribed ran %d times after the drop", n)
				}
			}
			// Resubscribed runs once Redis has confirmed the new
			// subscription, so the next message must arrive.
			if n := publish(t, pub, "after"); n != 1 {
				t.Fatalf("publish after the resubscription reached %d subscribers, want 1", n)
			}
			expectMessage(t, r, "after")
			if !r.logged("lost its connection") {
				t.Error("the lost connection was not logged")
			}
		})
	}
}

func killPubSub(t *testing.T, srv *redistest.Server) {
	t.Helper()
	reply, err := srv.Do("CLIENT", "KILL", "TYPE", "pubsub")
	if err != nil || reply == ":0" {
		t.Fatalf("CLIENT KILL TYPE pubsub: %q %v", reply, err)
	}
}

// A connection that silently stops carrying anything (half-open) is not
// noticed by go-redis; the subscription must PING it, give up on it after
// two silent idle periods, and subscribe on a new one.
func TestSubscriptionReplacesSilentConnection(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.StartBlackhole(t, srv.Addr())
	r := newRecorder()
	subscribe(t, newClient(t, proxy.Addr()), r, subscription.Options{Idle: 100 * time.Millisecond}, true)
	pub := newClient(t, srv.Addr())
	publish(t, pub, "before")
	expectMessage(t, r, "before")

	proxy.Drop()
	publish(t, pub, "lost") // into the blackhole
	testwait.Within(t, 10*time.Second, "the replacement", func() bool { return r.resubs.Load() >= 1 })
	if !r.logged("silent, replacing its connection") {
		t.Error("the replacement was not logged")
	}
	publish(t, pub, "after")
	expectMessage(t, r, "after")
}

// Close ends the loop even while it is backing off from an unreachable
// Redis (goleak checks that nothing is left), and a second Close is harmless.
func TestCloseWhileRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder()
	s, err := subscription.Subscribe(t.Context(), newClient(t, srv.Addr()), channel, subscription.Options{Logger: r.logger()}, r.handlers(true))
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	testwait.Within(t, 10*time.Second, "the loop to notice", func() bool { return r.logged("lost its connection") })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Renew moves the subscription to a new connection at once (a failover's
// new master) and runs Resubscribed, so whatever the old connection missed
// is re-read; messages keep arriving on the new one, and the old one is
// gone from the server.
func TestRenewMovesToANewConnection(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder()
	c := newClient(t, srv.Addr())
	s := subscribe(t, c, r, subscription.Options{}, true)
	pub := newClient(t, srv.Addr())
	if n := publish(t, pub, "before"); n != 1 {
		t.Fatalf("before Renew %d subscribers", n)
	}
	expectMessage(t, r, "before")
	s.Renew()
	testwait.Within(t, 10*time.Second, "the resubscription after Renew", func() bool { return r.resubs.Load() == 1 })
	if n := publish(t, pub, "after"); n != 1 {
		t.Fatalf("after Renew %d subscribers, want exactly the new connection", n)
	}
	expectMessage(t, r, "after")
}
