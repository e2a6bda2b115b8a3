package config

import (
	"fmt"
	"regexp"
	"time"
)

// EscalationLevel is one entry of approvals.escalate: who is reached, and
// how, once an Ask has waited After (counted from its creation).
type EscalationLevel struct {
	After      Duration `yaml:"after"`
	Usergroups []string `yaml:"usergroups"`
	Users      []string `yaml:"users"`
	DM         bool     `yaml:"dm"`
}

// Slack ids as approvals.escalate takes them: user ids start with U or W,
// user group ids with S. Loose past the first letter (see notAnID).
var (
	slackUserIDRe  = regexp.MustCompile(`^[UW][A-Z0-9_]+$`)
	slackGroupIDRe = regexp.MustCompile(`^S[A-Z0-9_]+$`)
)

// followupProblems checks approvals.remind_after and approvals.escalate:
// every step due before the Ask's timeout, the levels in increasing order,
// each reaching somebody by a Slack id.
func (a ApprovalsConfig) followupProblems() Problems {
	var ps Problems
	if a.RemindAfter < 0 {
		ps.add("approvals.remind_after", "must be >= 0 (0 turns the reminder off), got %s", a.RemindAfter)
	}
	if a.RemindAfter > 0 && a.Timeout > 0 && a.RemindAfter >= a.Timeout {
		ps.add("approvals.remind_after", "must be shorter than approvals.timeout (%s), got %s: the Ask would be over", a.Timeout, a.RemindAfter)
	}
	if a.FollowupLease != 0 && a.FollowupLease.D() < time.Second {
		ps.add("approvals.followup_lease", "want 0 (the default, 2m) or at least 1s: a step's Slack calls must fit in half of it, got %s", a.FollowupLease)
	}
	var prev Duration
	for i, l := range a.Escalate {
		key := fmt.Sprintf("approvals.escalate[%d]", i)
		switch {
		case l.After <= 0:
			ps.add(key+".after", "must be > 0 (counted from the Ask's creation), got %s", l.After)
		case l.After <= prev:
			ps.add(key+".after", "must be later than the level before (%s), got %s", prev, l.After)
		case a.Timeout > 0 && l.After >= a.Timeout:
			ps.add(key+".after", "must be shorter than approvals.timeout (%s), got %s: the Ask would be over", a.Timeout, l.After)
		}
		prev = max(prev, l.After)
		if len(l.Users) == 0 && len(l.Usergroups) == 0 {
			ps.add(key, "names nobody: set users or usergroups")
		}
		for j, u := range l.Users {
			if !slackUserIDRe.MatchString(u) {
				ps.add(fmt.Sprintf("%s.users[%d]", key, j), "want a Slack user id such as U0123ABCD, got %q", u)
			}
		}
		for j, g := range l.Usergroups {
			if !slackGroupIDRe.MatchString(g) {
				ps.add(fmt.Sprintf("%s.usergroups[%d]", key, j), "want a Slack user group id such as S0123ABCD, got %q", g)
			}
		}
	}
	return ps
}

// FollowupEvery is how often due steps are looked for: a tenth of the
// shortest step, between 100ms and 1s (one ZRANGEBYSCORE per replica).
func (c ApprovalsConfig) FollowupEvery() time.Duration {
	every := time.Second
	for _, d := range []Duration{c.RemindAfter} {
		if d > 0 {
			every = min(every, d.D()/10)
		}
	}
	for _, l := range c.Escalate {
		if l.After > 0 {
			every = min(every, l.After.D()/10)
		}
	}
	return max(every, 100*time.Millisecond)
}
