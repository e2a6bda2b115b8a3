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
		{"MCP input pw", `{"host":"db","pw":"hunter2"}`, `{"host":"db","pw":"[REDACTED]"}`},
		{"nested pwd and passwd", `{"db":{"auth":{"pwd":"hunter2","passwd":"hunter2","user":"app"}}}`, `{"db":{"auth":{"passwd":"[REDACTED]","pwd":"[REDACTED]","user":"app"}}}`},
		{"JWK private members", `{"kty":"RSA","n":"AQAB01","e":"AQAB","d":"hunter2","p":"hunter2","q":"hunter2","dp":"hunter2","dq":"hunter2","qi":"hunter2"}`, `{"d":"[REDACTED]","dp":"[REDACTED]","dq":"[REDACTED]","e":"AQAB","kty":"RSA","n":"AQAB01","p":"[REDACTED]","q":"[REDACTED]","qi":"[REDACTED]"}`},
		{"JWK oct k", `{"keys":[{"kty":"oct","k":"hunter2"}]}`, `{"keys":[{"k":"[REDACTED]","kty":"oct"}]}`},
		{"d outside a JWK stays", `{"d":"2026-01-01","p":"page"}`, `{"d":"2026-01-01","p":"page"}`},
		{"client-key-data", `{"users":[{"user":{"client-key-data":"hunter2"}}]}`, `{"users":[{"user":{"client-key-data":"[REDACTED]"}}]}`},
		{"tls.key", `{"data":{"tls.crt":"LS0t","tls.key":"hunter2"}}`, `{"data":{"tls.crt":"LS0t","tls.key":"[REDACTED]"}}`},
		{"name beside its value", `{"environment":[{"name":"DB_PASSWORD","value":"hunter2"},{"name":"REGION","value":"eu"}]}`, `{"environment":[{"name":"DB_PASSWORD","value":"[REDACTED]"},{"name":"REGION","value":"eu"}]}`},
		{"SSM SecureString", `{"Parameter":{"Name":"/prod/db/conn","Type":"SecureString","Value":"hunter2"}}`, `{"Parameter":{"Name":"/prod/db/conn","Type":"SecureString","Value":"[REDACTED]"}}`},
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
