package recordid

import (
	"strings"
	"testing"
)

func TestNewIsValidUniqueAndFlagSafe(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := New()
		if !Valid(id) || strings.HasPrefix(id, "-") || seen[id] {
			t.Fatalf("id %q: valid %v, seen before %v", id, Valid(id), seen[id])
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "-bcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abc", "abcdefghijklmnopqrstuvwxy{"} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
}
