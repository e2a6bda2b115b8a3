package config

import (
	"strings"
	"testing"

	"github.com/askops/askops/bound"
)

// agent.bound and gateway.bound_bash: defaults, and each bad value refused
// naming its key.
func TestBoundKeys(t *testing.T) {
	c, err := Parse([]byte(validYAML), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.Bound.Mode != string(bound.Required) || c.Agent.Bound.Writable != nil || len(c.Agent.Bound.Hosts) != 0 || c.Gateway.BoundBash {
		t.Errorf("defaults: %+v, bound_bash %v; want mode required, default writable paths, no hosts, bound_bash off", c.Agent.Bound, c.Gateway.BoundBash)
	}
	good := validYAML + "agent:\n  bound:\n    mode: best-effort\n    writable: [~/.cache, /var/cache/build]\n    hosts: [proxy.golang.org]\ngateway:\n  bound_bash: true\n"
	if got := problemsOf(t, good, noEnv, CheckConfig); got != "" {
		t.Fatalf("a good bound is refused: %s", got)
	}
	c, _ = Parse([]byte(good), noEnv)
	if c.Agent.Bound.Mode != "best-effort" || len(c.Agent.Bound.Writable) != 2 || c.Agent.Bound.Hosts[0] != "proxy.golang.org" || !c.Gateway.BoundBash {
		t.Errorf("parsed %+v, bound_bash %v", c.Agent.Bound, c.Gateway.BoundBash)
	}
	empty, _ := Parse([]byte(validYAML+"agent:\n  bound:\n    writable: []\n"), noEnv)
	if empty.Agent.Bound.Writable == nil {
		t.Error("writable: [] reads as unset; want an empty list (nothing writable but the workspace and the private temp)")
	}
	for _, tc := range []struct{ yaml, want string }{
		{"agent:\n  bound:\n    mode: sometimes\n", `agent.bound.mode: unknown mode "sometimes"`},
		{"agent:\n  bound:\n    writable: [relative/dir]\n", "agent.bound.writable[0]: want an absolute path"},
		{"agent:\n  bound:\n    writable: [/tmp, /]\n", "agent.bound.writable[1]: \"/\" would make every file writable"},
		{"agent:\n  bound:\n    hosts: [\"https://x.example\"]\n", "agent.bound.hosts[0]: want a host name"},
		{"gateway:\n  bound_bash: sure\n", "gateway.bound_bash: want true or false"},
	} {
		if got := problemsOf(t, validYAML+tc.yaml, noEnv, CheckConfig); !strings.Contains(got, tc.want) {
			t.Errorf("%q: problems %q, want %q", tc.yaml, got, tc.want)
		}
	}
}
