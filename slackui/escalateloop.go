package slackui

import (
	"context"
	"sync"
)

// escalationLoop is an Escalation's background Run: started at most once,
// stopped and drained by Stop.
type escalationLoop struct {
	once sync.Once
	stop context.CancelFunc
	done sync.WaitGroup
}

// Start carries out due reminders and escalations through n in the
// background until Stop (once; later calls do nothing, as does a nil e).
// Serve replicas all start it; run and ask only over the in-memory store,
// where nobody else could.
func (e *Escalation) Start(n *Notifier) {
	if e == nil {
		return
	}
	e.loop.once.Do(func() {
		ctx, stop := context.WithCancel(context.Background())
		e.loop.stop = stop
		e.loop.done.Go(func() { e.Run(ctx, n) })
	})
}

// Stop ends the loop and waits for a pass in progress; none may start
// after it.
func (e *Escalation) Stop() {
	if e == nil {
		return
	}
	e.loop.once.Do(func() {})
	if e.loop.stop != nil {
		e.loop.stop()
	}
	e.loop.done.Wait()
}
