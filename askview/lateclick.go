package askview

// A click on an Ask that has already ended gets one reply, the same
// sentence on every surface a human decides on (Slack, the console), each
// in its own markup.

import (
	"time"

	"github.com/askops/askops/pending"
)

// Wording is how one surface writes the parts of a sentence about an Ask:
// Slack mentions a user and shows a date in each reader's own time zone,
// the console writes plain text.
type Wording struct {
	Person func(who string) string    // who decided ("" for no one known)
	Time   func(at time.Time) string  // when, with its preposition ("at …")
	Reason func(reason string) string // the decider's reason, made safe to show
}

// LateClickReply tells a click that came too late how the Ask ended, who ended it
// and when, and that the click changed nothing.
func LateClickReply(a pending.Ask, w Wording) string {
	when := ""
	if !a.DecidedAt.IsZero() {
		when = " " + w.Time(a.DecidedAt)
	}
	by := w.Person(a.DecidedBy)
	switch o, _ := a.Outcome(); o {
	case pending.Approved:
		return "Already approved by " + by + when + "; your click changed nothing."
	case pending.ApprovedSession:
		return "Already approved for the session by " + by + when + "; your click changed nothing."
	case pending.Denied:
		s := "Already denied by " + by + when
		if a.DecisionReason != "" {
			s += " (reason: " + w.Reason(a.DecisionReason) + ")"
		}
		return s + "; your click changed nothing."
	case pending.Expired:
		return "This request expired" + when + ": nobody decided in time, so it did not run. Your click changed nothing."
	case pending.Cancelled:
		why := "its run stopped"
		if a.DecisionReason == pending.ReasonAskerGone {
			why = pending.ReasonAskerGone
		}
		return "This request was cancelled" + when + " (" + why + "), so it did not run. Your click changed nothing."
	case pending.Unavailable:
		return "This request ended as unavailable" + when + " (askops could not carry it), so it did not run. Your click changed nothing."
	}
	return "This request is still open."
}
