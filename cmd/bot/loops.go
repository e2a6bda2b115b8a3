package main

import (
	"context"
	"log/slog"
	"sync"
)

// loops runs the app's background loops: each is a Run(ctx) error,
// started here and drained at Close, which cancels them all and waits for
// each to return. A loop returns nil when its ctx ends; an error is its
// giving up early, and is logged.
type loops struct {
	log *slog.Logger

	mu      sync.Mutex
	ctx     context.Context    // the loops' context, ended by stop
	cancel  context.CancelFunc // nil until the first start
	stopped bool
	started map[string]bool
	running sync.WaitGroup
}

// start runs run as the loop named name until stop, once per name; after
// stop it starts nothing.
func (l *loops) start(name string, run func(context.Context) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || l.started[name] {
		return
	}
	if l.cancel == nil {
		l.ctx, l.cancel = context.WithCancel(context.Background())
	}
	if l.started == nil {
		l.started = map[string]bool{}
	}
	l.started[name] = true
	ctx := l.ctx
	l.running.Go(func() {
		if err := run(ctx); err != nil && ctx.Err() == nil {
			l.log.Error("a background loop stopped", "loop", name, "err", err)
		}
	})
}

// stop cancels every loop and waits until each has returned.
func (l *loops) stop() {
	l.mu.Lock()
	l.stopped = true
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
	l.running.Wait()
}
