package gateway

import (
	"strings"
	"time"

	"github.com/askops/askops/internal/durationtext"

	"github.com/askops/askops/pending"
)

// grantTTL reads a decision's grant_ttl: "" is the session's life; else a
// Go duration that must be one of the configured grant durations
// (approvals.grant_durations, what Slack's "Approve for 15 min" buttons
// offer), and only with approve_session. The grant is recorded by the
// waiting side from the Ask's GrantTTL, as for a Slack click.
func (s *Service) grantTTL(text string, outcome pending.Outcome) (time.Duration, error) {
	if text == "" {
		return 0, nil
	}
	if outcome != pending.ApprovedSession {
		return 0, badRequest("grant_ttl: only with decision approve_session")
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, badRequest("grant_ttl: want a Go duration such as 15m, got %q", text)
	}
	if len(s.cfg.GrantDurations) == 0 {
		return 0, badRequest("grant_ttl: no grant durations are configured (approvals.grant_durations); leave it out for the session's")
	}
	offered := make([]string, len(s.cfg.GrantDurations))
	for i, g := range s.cfg.GrantDurations {
		if d == g {
			return d, nil
		}
		offered[i] = durationtext.Short(g)
	}
	return 0, badRequest("grant_ttl: %s is not one of approvals.grant_durations (%s)", text, strings.Join(offered, ", "))
}
