package config

import (
	"fmt"
	"time"
)

// Issue 12's approvals keys: self_approval and grant_durations (a rule's
// approvals is checked with the rule, by the policy engine).

// Durations is approvals.grant_durations as the notifier takes them.
func (a ApprovalsConfig) Durations() []time.Duration {
	out := make([]time.Duration, len(a.GrantDurations))
	for i, d := range a.GrantDurations {
		out[i] = d.D()
	}
	return out
}

// quorumProblems checks approvals.grant_durations: whole seconds (a
// button's action id carries seconds), at most session_ttl (a grant dies
// with its session), no repeats, at most 5 (each is a button). A rule's
// approvals are not checked against the approvers named here: escalation
// targets may decide the Asks escalated to them, so the people who can
// vote are more than this list.
func (c Config) quorumProblems() Problems {
	var ps Problems
	a := c.Approvals
	if len(a.GrantDurations) > 5 {
		ps.add("approvals.grant_durations", "at most 5 choices (each is a button), got %d", len(a.GrantDurations))
	}
	seen := map[Duration]bool{}
	for i, d := range a.GrantDurations {
		key := fmt.Sprintf("approvals.grant_durations[%d]", i)
		switch {
		case d < Duration(time.Second) || d%Duration(time.Second) != 0:
			ps.add(key, "want whole seconds, at least 1s, got %s", d)
		case a.SessionTTL > 0 && d > a.SessionTTL:
			ps.add(key, "%s is longer than approvals.session_ttl (%s): a grant dies with its session", d, a.SessionTTL)
		case seen[d]:
			ps.add(key, "%s is listed twice", d)
		}
		seen[d] = true
	}
	return ps
}
