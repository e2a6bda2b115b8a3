package tick

import (
	"context"
	"testing"
	"time"
)

func TestEveryCallsUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			calls++
			if calls == 3 {
				cancel()
			}
		})
	}()
	<-done // Every returned: the third call's cancel ended it
	if calls != 3 {
		t.Errorf("f ran %d times after the context ended on the third; want 3", calls)
	}
}

func TestEveryReturnsAtOnceOnAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	Every(ctx, time.Hour, func() { t.Error("f ran on an ended context") })
}
