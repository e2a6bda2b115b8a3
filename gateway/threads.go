package gateway

import (
	"cmp"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ThreadOpener posts the message that opens an agent session's thread and
// says where it went: done is called once, on a goroutine of its own. A
// title waiting to be posted holds no goroutine (*slackui.Notifier queues
// it behind the channel's Asks).
type ThreadOpener interface {
	OpenThreadThen(ctx context.Context, title string, done func(channel, ts string, err error))
}

// threads gives each agent session one Slack thread: the session's first
// Ask opens it ("Claude Code · session 3f2a… · ~/src/api · laptop-ana"),
// later Asks of the session are posted in it.
//
// Opening a thread is a Slack post, paced at about one a second per
// channel with every other post, so nobody waits on it: the Ask that
// finds its session without a thread is posted unthreaded at once, and the
// thread opens in the background for the session's later Asks. (Waiting
// for it held POST /v1/asks of a new session behind every title queued
// before, and a burst of new sessions timed their creates out.) A title
// on its way costs its queue entry, not a goroutine: a burst of 500 new
// sessions parked 500 goroutines before.
type threads struct {
	opener ThreadOpener
	store  Sessions
	ttl    time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	opening map[string]bool // sessions whose thread this process is opening
	running sync.WaitGroup
}

// newThreads returns threads opening threads through opener and
// remembering them in store for ttl (the session's life).
func newThreads(opener ThreadOpener, store Sessions, ttl time.Duration, log *slog.Logger) *threads {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &threads{opener: opener, store: store, ttl: ttl, log: log, opening: map[string]bool{}}
}

// For returns the thread c's Ask goes in. Empty means unthreaded (the
// approval channel): the session has no thread yet (For starts opening it,
// and does not wait), or its thread cannot be found, which must not stop
// the Ask from being shown. For waits on no Slack call. key is the session
// as the gateway keys it (sessions.Key: namespaced by the caller); the title
// shows the id the caller sent.
func (t *threads) For(ctx context.Context, key string, c Call) (channel, ts string) {
	if key == "" {
		return "", ""
	}
	if ch, ts, ok, err := t.store.Thread(ctx, key, t.ttl); err == nil && ok {
		return ch, ts
	} else if err != nil {
		t.log.Warn("could not look up the session's thread; posting unthreaded", "session", key, "err", err)
		return "", ""
	}
	// One opening per session in this process; the session's Asks until
	// it is open go unthreaded. (Across replicas the store's claim decides.)
	t.mu.Lock()
	if t.opening[key] {
		t.mu.Unlock()
		return "", ""
	}
	t.opening[key] = true
	t.running.Add(1)
	t.mu.Unlock()
	t.opener.OpenThreadThen(ctx, threadTitle(c), func(ch, ts string, err error) {
		t.opened(context.WithoutCancel(ctx), key, ch, ts, err)
	})
	return "", ""
}

// claimTimeout bounds recording an opened thread.
const claimTimeout = 10 * time.Second

// opened records the thread just opened for the session keyed key (or
// logs why it could not be opened).
func (t *threads) opened(ctx context.Context, key, ch, ts string, err error) {
	defer t.running.Done()
	defer func() {
		t.mu.Lock()
		delete(t.opening, key)
		t.mu.Unlock()
	}()
	if err != nil {
		t.log.Warn("could not open the session's thread; its asks stay unthreaded", "session", key, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	if _, _, err := t.store.ClaimThread(ctx, key, ch, ts, t.ttl); err != nil {
		t.log.Warn("could not record the session's thread", "session", key, "err", err)
	}
}

// Wait waits for the threads being opened in the background.
func (t *threads) Wait() { t.running.Wait() }

// threadTitle is the opening message of c's session's thread.
func threadTitle(c Call) string {
	agent := c.Agent
	if agent == "" {
		agent = "Agent"
	}
	parts := []string{agent, "session " + shortID(c.SessionID)}
	if c.Cwd != "" {
		parts = append(parts, homeShort(c.Cwd))
	}
	if c.By != "" {
		parts = append(parts, c.By)
	}
	return strings.Join(parts, " · ")
}

func shortID(s string) string {
	r := []rune(s)
	if len(r) <= 8 {
		return s
	}
	return string(r[:4]) + "…"
}

var homeDir = regexp.MustCompile(`^/(?:home|Users)/[^/]+`)

// homeShort writes a home directory as ~, as the agent's user would.
func homeShort(p string) string {
	if loc := homeDir.FindStringIndex(p); loc != nil {
		return "~" + p[loc[1]:]
	}
	return p
}
