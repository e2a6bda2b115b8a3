package approval

import (
	"context"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// Launch is Start for a front door that answers before the human does
// (the HTTP Ask API), without a goroutine per waiting Ask: it records the
// Ask for req and returns it still pending, with run, which starts the
// rest of the round trip and returns at once. done is then called once,
// on a goroutine of its own, with the terminal Ask; ctx's ending (the
// front door stopping) ends the Ask cancelled as it ends Start's rest.
//
// Between the Ask being shown and its end, nothing runs for it: the store
// wakes it (pending.RedisStore.OnEnd: the decision's announcement, which
// the one listener fans out by id), a timer wakes it at its deadline, and
// ctx's ending wakes it; woken, it finishes as Start's rest does (Wait,
// which returns at once for an Ask that has ended or expires it, then the
// grant and the message updates). Every failure rule is Start's: a store
// without OnEnd, or a wake that finds the Ask still pending, waits in
// Wait as before.
func (c *Core) Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(ctx context.Context, done func(pending.Ask))) {
	req, a, release, ok := c.open(ctx, req, ttl)
	if !ok {
		failed := a
		return a, func(_ context.Context, done func(pending.Ask)) { go done(failed) }
	}
	// The one copy of the request and the Ask the round trip keeps while
	// it is queued and parked (closures capturing them would each keep
	// their own).
	t := newTrip(req, a)
	return a, func(ctx context.Context, done func(pending.Ask)) {
		finish := func(final pending.Ask) {
			release()
			done(final)
		}
		c.showThen(ctx, t, func(ended *pending.Ask) {
			switch {
			case ended != nil:
				finish(*ended)
			case ctx.Err() != nil:
				finish(c.end(ctx, t, c.wait(ctx, t))) // stopped while it was being posted
			default:
				c.park(ctx, t, func() { finish(c.end(ctx, t, c.await(ctx, t))) })
			}
		})
	}
}

// PostThen is a Notifier's Post without the wait (slackui.Notifier has
// it): done gets Post's results once, on a goroutine of its own, so an Ask
// queued behind others for a busy channel holds no goroutine. It reads *a
// until done is called, and keeps no copy: the round trip's Ask is held
// once, and left alone until every post has reported.
type PostThen interface {
	PostThen(ctx context.Context, a *pending.Ask, done func(channel, ts string, err error))
}

// showThen is show without holding a goroutine while the notifiers post:
// then runs once, on a goroutine of its own, with t shown (nil) or the
// Ask's end when nobody could be shown it.
func (c *Core) showThen(ctx context.Context, t *trip, then func(ended *pending.Ask)) {
	postCtx, endPost := c.postContext(ctx, t.a.Deadline)
	ns := c.cfg.Notifiers
	results := make([]posted, len(ns))
	errs := make([]error, len(ns))
	var mu sync.Mutex
	out := len(ns) // posts still out
	for i, n := range ns {
		results[i].notifier = n
		report := func(channel, ts string, err error) {
			mu.Lock()
			results[i].channel, results[i].ts, errs[i] = channel, ts, err
			out--
			last := out == 0
			mu.Unlock()
			if !last {
				return
			}
			endPost()
			shown, postErr := c.collect(t.a, results, errs)
			if len(shown) == 0 {
				final := c.notPosted(ctx, t.a, postErr)
				then(&final)
				return
			}
			c.saveShown(ctx, t, shown)
			then(nil)
		}
		if pt, ok := n.(PostThen); ok {
			pt.PostThen(postCtx, &t.a, report)
			continue
		}
		go func() { report(n.Post(postCtx, t.a)) }()
	}
}

// park runs then on a goroutine of its own once t's Ask may have ended:
// the store says so, its deadline passes, or ctx ends. Without a store
// that can say so, then runs here (and waits in Wait).
func (c *Core) park(ctx context.Context, t *trip, then func()) {
	e, ok := c.cfg.Asks.(pending.OnEnder)
	if !ok {
		then()
		return
	}
	p := &parked{then: then}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopEnd = e.OnEnd(t.a.ID, p.wake)
	p.stopTimer = c.cfg.AfterFunc(time.Until(t.a.Deadline), p.wake)
	p.stopCtx = context.AfterFunc(ctx, p.wake)
}

// parked is one Ask waiting without a goroutine.
type parked struct {
	once sync.Once
	then func()

	mu        sync.Mutex // held while park registers the wakes below
	stopEnd   func()
	stopTimer func() bool
	stopCtx   func() bool
}

// wake is called by the store, the timer or ctx (more than once, maybe,
// and maybe while park still registers): it must not block.
func (p *parked) wake() {
	p.once.Do(func() { go p.run() })
}

func (p *parked) run() {
	p.mu.Lock()
	p.stopEnd()
	p.stopTimer()
	p.stopCtx()
	p.mu.Unlock()
	p.then()
}
