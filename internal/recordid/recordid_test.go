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

func TestKindsHaveOnePrefixAndOldSpellingsStayValid(t *testing.T) {
	for range 1000 {
		if id := NewRun(); !strings.HasPrefix(id, RunPrefix) || !ValidRun(id) || !Valid(strings.TrimPrefix(id, RunPrefix)) {
			t.Fatalf("NewRun() = %q", id)
		}
		if id := NewSession(); !strings.HasPrefix(id, SessionPrefix) || !ValidSession(id) {
			t.Fatalf("NewSession() = %q", id)
		}
		if s := Secret(); !ValidSecret(s) {
			t.Fatalf("Secret() = %q", s)
		}
	}
	cases := []struct {
		id        string
		run, sess bool
	}{
		// Spellings earlier releases stored.
		{"run_0123456789abcdef", true, false}, // the agent runner's
		{"run-0123456789abcdef", true, false}, // chat-ops'
		{"ask-0123456789abcdef", true, false}, // bot ask's
		{"mcp-0123456789abcdef", false, true}, // bot mcp's
		// Not ids of these kinds.
		{"", false, false},
		{"run_", false, false},
		{"run-1", false, false},
		{"run-0123456789ABCDEF", false, false},
		{"run:0123456789abcdef", false, false},
		{"ses_0123456789abcdef", false, false},
		{"abcdefghijklmnopqrstuvwxyz", false, false}, // an Ask's
		{"run_abcdefghijklmnopqrstuvwxy{", false, false},
	}
	for _, c := range cases {
		if got := ValidRun(c.id); got != c.run {
			t.Errorf("ValidRun(%q) = %v, want %v", c.id, got, c.run)
		}
		if got := ValidSession(c.id); got != c.sess {
			t.Errorf("ValidSession(%q) = %v, want %v", c.id, got, c.sess)
		}
	}
	for _, bad := range []string{"", "short", strings.Repeat("a", 42), strings.Repeat("+", 43)} {
		if ValidSecret(bad) {
			t.Errorf("ValidSecret(%q) = true", bad)
		}
	}
}

func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewUUID()
		if !ValidUUID(id) || seen[id] || id[14] != '4' {
			t.Fatalf("NewUUID() = %q: not a fresh v4 UUID", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "7AB8C8EC-7B2D-4FD6-9B52-752F9515EB71", "7ab8c8ec7b2d4fd69b52752f9515eb71", "7ab8c8ec-7b2d-4fd6-9b52-752f9515eb7g", "{ab8c8ec-7b2d-4fd6-9b52-752f9515eb71"} {
		if ValidUUID(bad) {
			t.Errorf("ValidUUID(%q) = true", bad)
		}
	}
}
