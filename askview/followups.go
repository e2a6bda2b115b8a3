package askview

import (
	"strings"
	"time"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/redact"
)

// Followup is one follow-up tried on an Ask nobody decided in time: the
// reminder in its thread, or an escalation level.
type Followup struct {
	// Did is what was done: pending.EventReminded or
	// pending.EventEscalated.
	Did pending.EventKind
	// Users and Groups are who it reached, as Slack ids: user ids, and
	// user group ids (those starting with "S") apart, so that each surface
	// can show a group as a group. A reminder reaches the approvers, whom
	// the surfaces do not name again.
	Users, Groups []string
	// After is when it was due, counted from the Ask's creation.
	After time.Duration
}

// followups are the follow-ups recorded on a, oldest first. An escalation
// that reached nobody is left out: its step was dropped (its level was no
// longer configured), not tried. Steps of other names are left out too.
func followups(a pending.Ask) []Followup {
	var out []Followup
	for _, e := range a.Followups.Entries() {
		f := Followup{Did: e.Kind(), After: e.After}
		for t := range strings.SplitSeq(e.To, ",") {
			switch t = redact.Secrets(t); {
			case t == "":
			case strings.HasPrefix(t, "S"):
				f.Groups = append(f.Groups, t)
			default:
				f.Users = append(f.Users, t)
			}
		}
		switch {
		case f.Did == "":
			continue
		case f.Did == pending.EventEscalated && len(f.Users)+len(f.Groups) == 0:
			continue
		}
		out = append(out, f)
	}
	return out
}
