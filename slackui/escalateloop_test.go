package slackui

import (
	"context"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// Run carries out the follow-ups until its ctx ends (a due reminder is
// posted without anyone calling RunDue), then returns nil; the wiring
// drains it (verifyNoLeaks). A nil Escalation (no follow-ups configured)
// returns at once.
func TestEscalationRun(t *testing.T) {
	w := newEscalationWorld(t)
	a := w.post(time.Hour)
	w.clock.Advance(6 * time.Minute) // past remind_after
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.esc.Run(ctx, w.notifier) }()
	testwait.For(t, "the reminder in the Ask's thread", func() bool { return len(w.thread(a)) == 1 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run at its ctx's end = %v, want nil", err)
		}
	case <-time.After(testwait.Timeout): // liveness only
		t.Fatal("Run did not return when its ctx ended")
	}

	var none *Escalation
	if err := none.Run(t.Context(), w.notifier); err != nil {
		t.Errorf("a nil Escalation's Run = %v", err)
	}
}
