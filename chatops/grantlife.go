package chatops

import (
	"fmt"
	"time"

	"github.com/askops/askops/grants"
)

// grantLife says how long g has left at now, for /askops grants: a
// time-boxed grant ("Approve for 15 min") by its own end, a session grant
// by its session's, which activity pushes back.
func grantLife(g grants.Grant, now time.Time) string {
	switch {
	case g.Standing():
		return "until revoked"
	case g.ExpiresAt.IsZero():
		return "for this session"
	}
	left := max(0, g.ExpiresAt.Sub(now))
	at := fmt.Sprintf("<!date^%d^{time}|%s>", g.ExpiresAt.Unix(), g.ExpiresAt.UTC().Format("15:04 UTC"))
	if !g.Until.IsZero() && !g.Until.After(g.ExpiresAt) {
		return fmt.Sprintf("time-boxed: %s left (until %s)", grants.DurationText(left), at)
	}
	return fmt.Sprintf("for this session: %s left unless the session is active (until %s)", grants.DurationText(left), at)
}
