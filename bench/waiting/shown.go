package main

import (
	"context"
	"sync"
	"time"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/slackui"
)

// shownWatch notes when each Ask first showed its Approve button in the
// fake Slack, in its own message or in a batch message: when an approver
// could first decide it.
type shownWatch struct {
	srv *fakeslack.Server

	mu sync.Mutex
	at map[string]time.Time
}

// shownEvery is how often the watch looks: the times it gives are that
// much late at most.
const shownEvery = 250 * time.Millisecond

// watchShown watches srv until ctx ends; nil without Slack.
func watchShown(ctx context.Context, srv *fakeslack.Server) *shownWatch {
	if srv == nil {
		return nil
	}
	w := &shownWatch{srv: srv, at: map[string]time.Time{}}
	go func() {
		t := time.NewTicker(shownEvery)
		defer t.Stop()
		for {
			w.look()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *shownWatch) look() {
	now := time.Now()
	msgs := w.srv.Messages()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range msgs {
		for _, id := range fakeslack.ButtonValues(m.Blocks, slackui.ActionApprove) {
			if _, ok := w.at[id]; !ok {
				w.at[id] = now
			}
		}
	}
}

// summary is how many Asks have shown their buttons, and when the first
// and the last of them first did, after started.
func (w *shownWatch) summary(started time.Time) (n int, first, last time.Duration) {
	w.look()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, at := range w.at {
		d := at.Sub(started)
		if n == 0 || d < first {
			first = d
		}
		last = max(last, d)
		n++
	}
	return n, first, last
}
