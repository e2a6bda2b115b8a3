package askview

import (
	"testing"

	"github.com/askops/askops/pending"
)

// TestRisky holds which words of a command a surface keeps in sight: the
// words of the policy's reason and rule, and the few that are always
// risky, never the plain words a reason is written in.
func TestRisky(t *testing.T) {
	r := riskyOf("git push --force of HEAD (may be a protected branch)", `rules[2] ask bash "kubectl delete"`, []pending.Effect{
		{Kind: EffectNetwork, Text: "Network: releases.example.com, an unknown host (git push to origin)"},
		{Kind: EffectDeletes, Text: "Deletes .git/hooks (inside .git), build"},
	})
	for _, tc := range []struct {
		word string
		want bool
	}{
		{"--force", true}, {"'--force';", true}, {"HEAD", true}, {"kubectl", true},
		{"DROP", true}, {"drop", true}, {"-rf", true}, {"sudo", true},
		{"https://releases.example.com/v2", true}, {".git/hooks", true}, {"origin", false}, {"build", true},
		{"the", false}, {"of", false}, {"a", false}, {"echo", false}, {"", false}, {`"`, false},
	} {
		if got := r.Has(tc.word); got != tc.want {
			t.Errorf("Has(%q) = %v, want %v", tc.word, got, tc.want)
		}
	}
}
