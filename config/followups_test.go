package config

import (
	"strings"
	"testing"
	"time"
)

// The contract, exactly as written, loads; each way of breaking it
// is reported under its key.
func TestFollowupConfig(t *testing.T) {
	contract := validYAML + `  timeout: 15m
  remind_after: 5m
  escalate:
    - {after: 10m, usergroups: [S_ONCALL], users: [], dm: true}
`
	c, ps := Check([]byte(contract), noEnv, Serve)
	if len(ps) > 0 {
		t.Fatalf("the contract's config has problems:\n%v", ps)
	}
	l := c.Approvals.Escalate
	if c.Approvals.RemindAfter.D() != 5*time.Minute || len(l) != 1 || l[0].After.D() != 10*time.Minute ||
		len(l[0].Usergroups) != 1 || l[0].Usergroups[0] != "S_ONCALL" || !l[0].DM {
		t.Errorf("parsed %+v", c.Approvals)
	}

	tests := []struct {
		name, approvals, key, msg string
	}{
		{"negative reminder", "  remind_after: -1m\n", "approvals.remind_after", ">= 0"},
		{"reminder after timeout", "  timeout: 5m\n  remind_after: 5m\n", "approvals.remind_after", "shorter than approvals.timeout"},
		{"level at zero", "  escalate:\n    - {after: 0s, users: [U1]}\n", "approvals.escalate[0].after", "must be > 0"},
		{"levels out of order", "  escalate:\n    - {after: 3m, users: [U1]}\n    - {after: 2m, users: [U2]}\n", "approvals.escalate[1].after", "later than the level before"},
		{"level after timeout", "  timeout: 5m\n  escalate:\n    - {after: 6m, users: [U1]}\n", "approvals.escalate[0].after", "shorter than approvals.timeout"},
		{"level names nobody", "  escalate:\n    - {after: 1m, users: [], dm: true}\n", "approvals.escalate[0]", "names nobody"},
		{"user is a name", "  escalate:\n    - {after: 1m, users: ['@ana']}\n", "approvals.escalate[0].users[0]", "Slack user id"},
		{"group is a user", "  escalate:\n    - {after: 1m, usergroups: [U0123]}\n", "approvals.escalate[0].usergroups[0]", "user group id"},
		{"lease too short", "  followup_lease: 10ms\n", "approvals.followup_lease", "at least 1s"},
		{"unknown level key", "  escalate:\n    - {after: 1m, users: [U1], page: true}\n", "approvals.escalate[0].page", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := Check([]byte(validYAML+tt.approvals), noEnv, Serve)
			for _, p := range ps {
				if p.Key == tt.key && strings.Contains(p.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("want %s: …%s…, got:\n%v", tt.key, tt.msg, ps)
		})
	}
}
