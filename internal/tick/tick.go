// Package tick runs the body of a background loop at a fixed period until
// its context ends: the one shape of every upkeep loop (lease renewal, the
// replica count, a settings re-check, due follow-ups), so each says only
// what it does at a tick.
package tick

import (
	"context"
	"time"
)

// Every calls f at each tick of period until ctx ends. f runs in the
// caller's goroutine, so a slow f delays the next tick rather than
// overlapping it; the first call comes one period after the start, and
// none starts once ctx has ended. The ticker is stopped when Every returns.
func Every(ctx context.Context, period time.Duration, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil {
				return // both were ready: an ended context wins
			}
			f()
		}
	}
}
