package drain

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// A group that ends is waited for; a context that ends first is reported,
// with the group still running.
func TestWait(t *testing.T) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Go(func() { <-release })

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Wait(ctx, &wg); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with the context ended and the group running = %v, want context.Canceled", err)
	}

	close(release)
	if err := Wait(t.Context(), &wg); err != nil {
		t.Fatalf("Wait for a group that ends = %v, want nil", err)
	}
}
