package approval

import (
	"context"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// Launch is the round trip, the one way every front door asks: it records
// an Ask for req whose deadline is ttl from now (ttl <= 0 or past the
// configured Timeout means Timeout) and returns it still pending, with
// run, which starts the rest of the round trip (show, wait, grant,
// update) and returns at once; run must be called exactly once. done is
// then called once, on a goroutine of its own, with the terminal Ask. If
// the Ask cannot be recorded, the returned Ask is already terminal
// (unavailable), done gets it too, and run may be left uncalled.
//
// The Ask lives only while its asker waits: it is held (its lease
// renewed) while ctx lives and until done is called. A front door whose
// asker waits elsewhere (an API client, which holds it with its long
// polls) passes a ctx that ends when it has answered; once nobody holds
// the Ask, the lease sweep on any replica ends it cancelled. run's ctx
// ending (the run stopped, the front door stopping) ends the Ask
// cancelled.
//
// Between the Ask being shown and its end, nothing runs for it: the store
// wakes it (pending.RedisStore.OnEnd: the decision's announcement, which
// the one listener fans out by id), a timer wakes it at its deadline, and
// ctx's ending wakes it; woken, it finishes (WaitFor, which returns at
// once for an Ask that has ended or expires it, then the grant and the
// message updates). Every failure rule holds: nobody shown → unavailable,
// deadline → expired, run stopped → cancelled, store failed →
// unavailable; a store without OnEnd, or a wake that finds the Ask still
// pending, waits in WaitFor.
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

// showThen hands t's Ask to every notifier at once, holding no goroutine
// while they post, and saves where it was shown: then runs once, on a
// goroutine of its own, with t shown (nil) or the Ask's end when nobody
// could be shown it.
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
		n.PostThen(postCtx, &t.a, report)
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
