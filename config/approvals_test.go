package config

import (
	"strings"
	"testing"
	"time"
)

// Issue 12's keys: approvals.self_approval, approvals.grant_durations and
// a rule's approvals, as the contract spells them.
func TestQuorumConfig(t *testing.T) {
	good := validYAML + `  self_approval: false
  grant_durations: [15m, 1h]
  session_ttl: 12h
policy:
  rules:
    - {tool: bash, command: "terraform apply", decision: ask, approvals: 2}
`
	c, ps := Check([]byte(good), noEnv, Serve)
	if len(ps) > 0 {
		t.Fatalf("the contract's example is refused: %v", ps)
	}
	if got := c.Approvals.Durations(); len(got) != 2 || got[0] != 15*time.Minute || got[1] != time.Hour || c.Approvals.SelfApproval {
		t.Errorf("parsed %v, self_approval %v", got, c.Approvals.SelfApproval)
	}
	for _, tc := range []struct{ yaml, want string }{
		{validYAML + "  session_ttl: 30m\n  grant_durations: [15m, 1h]\n", "approvals.grant_durations[1]: 1h0m0s is longer than approvals.session_ttl"},
		{validYAML + "  grant_durations: [15m, 15m]\n", "approvals.grant_durations[1]: 15m0s is listed twice"},
		{validYAML + "  grant_durations: [500ms]\n", "approvals.grant_durations[0]: want whole seconds"},
		{validYAML + "  grant_durations: [1m, 2m, 3m, 4m, 5m, 6m]\n", "approvals.grant_durations: at most 5"},
		{validYAML + "  self_approval: perhaps\n", "approvals.self_approval: want true or false"},
		{validYAML + "policy:\n  rules:\n    - {tool: bash, command: terraform apply, decision: ask, approvals: -1}\n",
			"policy.rules[0].approvals: must be at least 1"},
		{validYAML + "policy:\n  rules:\n    - {tool: bash, command: ls, decision: allow, approvals: 2}\n",
			"policy.rules[0].approvals: only ask rules need approvals"},
	} {
		if got := problemsOf(t, tc.yaml, noEnv, Serve); !strings.Contains(got, tc.want) {
			t.Errorf("want %q among:\n%s", tc.want, got)
		}
	}
}
