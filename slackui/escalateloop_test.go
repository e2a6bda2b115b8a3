package slackui

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// Start runs the follow-ups in the background (a due reminder is posted
// without anyone calling RunDue); a second Start starts nothing; Stop
// drains the loop (verifyNoLeaks) and may be called again. A nil
// Escalation (no follow-ups configured) does nothing either way.
func TestEscalationStartStop(t *testing.T) {
	w := newEscalationWorld(t)
	a := w.post(time.Hour)
	w.clock.Advance(6 * time.Minute) // past remind_after
	w.esc.Start(w.notifier)
	w.esc.Start(w.notifier)
	testwait.For(t, "the reminder in the Ask's thread", func() bool { return len(w.thread(a)) == 1 })
	w.esc.Stop()
	w.esc.Stop()

	var none *Escalation
	none.Start(w.notifier)
	none.Stop()
}

// A Stop before any Start means no loop will ever start: Close may run
// before the wiring got to Start.
func TestEscalationStopBeforeStart(t *testing.T) {
	w := newEscalationWorld(t)
	w.esc.Stop()
	w.esc.Start(w.notifier)
	if w.esc.loop.stop != nil {
		t.Error("Start after Stop started the loop")
	}
}
