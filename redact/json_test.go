package redact

import (
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"nothing to hide stays byte for byte", `{ "command" : "ls -la",  "n": 1.50 }`, `{ "command" : "ls -la",  "n": 1.50 }`},
		{"token in a string", `{"command":"curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123' https://x"}`, ""},
		{"secret key", `{"path":"a","password":"hunter2","n":1.50}`, `{"n":1.50,"password":"[REDACTED]","path":"a"}`},
		{"not JSON is text", `PGPASSWORD=hunter2 psql`, ""},
		{"html stays unescaped", `{"command":"a && b <c> ghp_abcdefghijklmnopqrstuvwxyz0123"}`, `{"command":"a && b <c> ghp_[REDACTED]"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := JSON(tc.in)
			for _, secret := range []string{"ghp_abcdefghijklmnopqrstuvwxyz0123", "hunter2"} {
				if strings.Contains(got, secret) {
					t.Errorf("JSON(%q) = %q keeps %q", tc.in, got, secret)
				}
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("JSON(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
