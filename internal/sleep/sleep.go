// Package sleep waits out a back-off or a pace slot without outliving the
// work it belongs to: the wait ends early when that work's context ends.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, whichever comes first, and reports
// whether d passed. A d of zero or less passes at once unless ctx has
// already ended. The timer is stopped either way, so an early end leaks
// nothing.
func For(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
