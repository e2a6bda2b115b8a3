// Package drain waits for the goroutines a value owns when it shuts down,
// for no longer than its shutdown may take: the agent's runner and
// chat-ops both end that way.
package drain

import (
	"context"
	"sync"
)

// Wait waits until wg's goroutines have all ended, and returns nil, or
// until ctx ends first, and returns ctx's error. A Wait on a WaitGroup
// cannot be abandoned: when ctx ends first, the goroutine waiting on wg
// lives on until the group is done.
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
