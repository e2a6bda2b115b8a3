package console

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// Live is the console's notifier in the approval round trip: every Ask the
// core shows, and every outcome it brings its notifiers in step with, wakes
// the open pages, which fetch the re-rendered list. It posts nothing
// anywhere, so Post never fails: an Ask shown only in the console is shown
// (the list holds every pending Ask, for whoever signs in).
//
// A wake-up carries no data, so a page that missed some (a slow reader)
// loses nothing: the next fetch shows the state as it stands.
type Live struct {
	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	closed bool
	done   chan struct{}
	// posted, when set, is told of each new Ask (the console's Web Push);
	// it must not block.
	posted func(pending.Ask)
}

// NewLive returns a Live with no pages listening.
func NewLive() *Live {
	return &Live{subs: map[chan struct{}]struct{}{}, done: make(chan struct{})}
}

// PostThen wakes the open pages, and has a pushed to the devices that
// asked for it; the console's messages need no address. done is told on a
// goroutine of its own, as approval.Notifier says.
func (l *Live) PostThen(_ context.Context, a *pending.Ask, done func(channel, ts string, err error)) {
	l.wake()
	l.mu.Lock()
	posted := l.posted
	l.mu.Unlock()
	if posted != nil {
		posted(*a)
	}
	go done("", "", nil)
}

// onPost has f told of each new Ask from now on.
func (l *Live) onPost(f func(pending.Ask)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.posted = f
}

// Update wakes the open pages: a's state changed.
func (l *Live) Update(ctx context.Context, a pending.Ask) error {
	l.wake()
	return nil
}

// UpdateExpired wakes the open pages after a sweep expired asks (the shape
// of approval.ExpiredUpdater, so the wiring can chain it).
func (l *Live) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	if len(asks) > 0 {
		l.wake()
	}
}

// wake signals every listener without blocking: each has room for one
// pending signal, and more collapse into it.
func (l *Live) wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe registers a listener; the returned func unregisters it. ok is
// false once the console is closed.
func (l *Live) subscribe() (ch chan struct{}, unsubscribe func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, false
	}
	ch = make(chan struct{}, 1)
	l.subs[ch] = struct{}{}
	return ch, func() {
		l.mu.Lock()
		delete(l.subs, ch)
		l.mu.Unlock()
	}, true
}

// close ends every event stream (a server shutdown waits for open
// requests, and a stream would otherwise never end).
func (l *Live) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// heartbeat keeps proxies and the browser from dropping an idle stream.
const heartbeat = 25 * time.Second

// serveEvents is GET /events: a server-sent event "changed" whenever the
// list may have changed, and one at once, so a page that rendered before
// it subscribed catches up.
func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request, _ *session) {
	rc := http.NewResponseController(w)
	ch, unsubscribe, ok := c.cfg.Live.subscribe()
	if !ok {
		http.Error(w, "the console is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer unsubscribe()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	send := func(s string) bool {
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 2000\nevent: changed\ndata: \n\n") {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.cfg.Live.done:
			return
		case <-tick.C:
			if !send(": heartbeat\n\n") {
				return
			}
		case <-ch:
			if !send("event: changed\ndata: \n\n") {
				return
			}
		}
	}
}
