package gateway

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/sessions"
)

// slowOpener opens threads only once released.
type slowOpener struct {
	release chan struct{}
	titles  chan string
}

func (o *slowOpener) OpenThreadThen(ctx context.Context, title string, done func(string, string, error)) {
	o.titles <- title
	go func() {
		select {
		case <-o.release:
			done(approvalChannel, "1700000000.000100", nil)
		case <-ctx.Done():
			done("", "", ctx.Err())
		}
	}()
}

// A session's first Ask does not wait for its thread to open: it goes
// unthreaded at once; once the thread is open, the session's Asks go in it.
func TestThreadForDoesNotWaitForTheTitle(t *testing.T) {
	o := &slowOpener{release: make(chan struct{}), titles: make(chan string, 1)}
	th := newThreads(o, sessions.NewMemoryStore(sessions.Options{}), time.Hour, nil)
	c := Call{Call: hook.Call{SessionID: "sess-1", Agent: "Claude Code", Cwd: "/home/ana/src/api", By: "laptop-ana"}}
	for i := range 3 { // the session's Asks while its title is on its way
		if ch, ts := th.For(t.Context(), sessions.Key(c.By, c.SessionID), c); ch != "" || ts != "" {
			t.Fatalf("ask %d: thread %s/%s before the title was posted", i, ch, ts)
		}
	}
	if title := <-o.titles; title != "Claude Code · session sess-1 · ~/src/api · laptop-ana" {
		t.Fatalf("title %q", title)
	}
	select {
	case title := <-o.titles:
		t.Fatalf("a second title %q for the same session", title)
	default:
	}
	close(o.release)
	th.Wait()
	if ch, ts := th.For(t.Context(), sessions.Key(c.By, c.SessionID), c); ch != approvalChannel || ts != "1700000000.000100" {
		t.Fatalf("after the title: thread %s/%s, want the opened one", ch, ts)
	}
}

// POST /v1/asks returns once the Ask is recorded, even with Slack not
// answering at all: new sessions' creates wait for no thread title and no
// post.
func TestCreateReturnsWhileSlackIsSlow(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	s.slack.SetDelay("chat.postMessage", 12*time.Second)
	for i := range 5 {
		ask := bashAsk(fmt.Sprintf("make deploy-%d", i))
		ask["session_id"] = fmt.Sprintf("new-session-%d", i)
		done := make(chan reply, 1)
		go func() { done <- call(t, "POST", u+"/v1/asks", askToken, ask) }()
		select {
		case r := <-done:
			if r.Status != 201 || r.Body["status"] != "pending" {
				t.Fatalf("create %d: %d %s", i, r.Status, r.Raw)
			}
		case <-time.After(6 * time.Second): // half of Slack's delay: not waiting on it
			t.Fatalf("create %d did not return while Slack was slow", i)
		}
	}
}

// New sessions' thread titles waiting behind a slow Slack cost no
// goroutine each: a burst of new sessions parked one per title before.
func TestTitlesWaitingForSlackHoldNoGoroutineEach(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	s.slack.SetDelay("chat.postMessage", time.Second)
	create := func(i int) {
		ask := bashAsk(fmt.Sprintf("make deploy-%d", i))
		ask["session_id"] = fmt.Sprintf("new-session-%d", i)
		if r := call(t, "POST", u+"/v1/asks", askToken, ask); r.Status != 201 {
			t.Fatalf("create %d: %d %s", i, r.Status, r.Raw)
		}
	}
	create(0) // the channel's drain is now in a slow post
	before := runtime.NumGoroutine()
	const sessions = 100
	for i := 1; i <= sessions; i++ {
		create(i)
	}
	if grew := runtime.NumGoroutine() - before; grew > 10 {
		t.Fatalf("%d goroutines more with %d new sessions' titles waiting", grew, sessions)
	}
}
