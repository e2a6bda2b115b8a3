// Package durationtext writes a duration the way askops' config file does
// and its messages quote it: 15m, 1h30m, 12h, 2s. Go's own String adds
// zero tails (12h0m0s); chat-ops, the gateway's errors and the follow-up
// texts all use this one form.
package durationtext

import (
	"strings"
	"time"
)

// Short is d without Go's zero tails, rounded to the second from a second
// up (a measured 1.5s reads 2s).
func Short(d time.Duration) string {
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
