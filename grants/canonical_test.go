package grants_test

import (
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// An exact grant records the text the policy judges and bash runs (the
// canonical text), not the model's raw string: the Ask's Args carry the raw
// string, the agent's later calls carry the canonical one, and the grant
// must cover the latter.
func TestExactScopeIsTheCanonicalText(t *testing.T) {
	raw := "ls   -la   # list\n"
	canonical, err := policy.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := must(t)(grants.ScopeFor(bashCall(raw, "/ws")))
	if s.Command != canonical {
		t.Fatalf("scope command %q, want the canonical text %q", s.Command, canonical)
	}
	// A command where shells disagree keeps its raw text (the policy never
	// lets a grant allow it anyway).
	unsafe := "ls # x \\\nrm -rf y"
	if s := must(t)(grants.ScopeFor(bashCall(unsafe, "/ws"))); s.Command != unsafe {
		t.Errorf("scope command %q, want the raw text %q", s.Command, unsafe)
	}
}
