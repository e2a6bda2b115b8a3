package hook

import (
	"context"
	"fmt"
	"time"
)

// This file is the Settlers `bot hook` and `bot mcp` wrap around a serve's
// Client or the gateway's Service in this process.

// Unavailable is the Settler of a front door that could not reach askops
// at all: every call is refused with Reason.
type Unavailable struct{ Reason string }

// Settle implements Settler.
func (u Unavailable) Settle(context.Context, Call) Ask { return refused(u.Reason) }

// Bounded answers every Call within Bound (0: no bound of its own), whatever
// Next does: Next's ctx ends at Bound (a waiting Ask then ends cancelled),
// and should Next not return even then (a store call that ignores its
// context), Settle stops waiting for it a second later and refuses the
// call. Hooks use it: an agent lets a call through when its hook outlives
// the agent's timeout.
type Bounded struct {
	Next  Settler
	Bound time.Duration
}

// Settle implements Settler.
func (b Bounded) Settle(ctx context.Context, c Call) Ask {
	if b.Bound <= 0 {
		return b.Next.Settle(ctx, c)
	}
	ctx, cancel := context.WithTimeout(ctx, b.Bound)
	defer cancel()
	got := make(chan Ask, 1) // the abandoned Settle's answer is dropped
	go func() { got <- b.Next.Settle(ctx, c) }()
	t := time.NewTimer(b.Bound + time.Second)
	defer t.Stop()
	select {
	case a := <-got:
		return a
	case <-t.C:
		return refused(fmt.Sprintf("askops did not answer within %s", b.Bound))
	}
}

// WithTimeout sets Timeout on every Call that has none.
type WithTimeout struct {
	Next    Settler
	Timeout time.Duration
}

// Settle implements Settler.
func (w WithTimeout) Settle(ctx context.Context, c Call) Ask {
	if c.Timeout == 0 {
		c.Timeout = w.Timeout
	}
	return w.Next.Settle(ctx, c)
}
