package slackui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askops/askops/askview"
)

// Secrets in a tool's JSON arguments are found after decoding (so JSON
// escapes cannot hide them) and secret-named keys are hidden whole.
func TestRedactJSONArguments(t *testing.T) {
	a := sampleAsk()
	a.Tool = "http_request"
	a.Args = `{"url":"https://u:p4ss@x.example","headers":{"X-Api-Key":"abc","Authorization":"Bearer abcdefgh12345678","Cookie":"sid=0xDEADBEEF"},"auth":{"authorization":"rawtoken42"},"body":"{\"password\":\"hunter2\"}","client_secret":{"nested":"ghp_0123456789abcdefghij0123"},"pem":"-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----"}`
	got := askview.Of(a, 0).Text()
	for _, secret := range []string{"p4ss", "abc\"", "abcdefgh12345678", "hunter2", "0123456789abcdefghij0123", "AAAA", "DEADBEEF", "rawtoken42"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q survives in\n%s", secret, got)
		}
	}
	if !strings.Contains(got, `"X-Api-Key": "[REDACTED]"`) {
		t.Errorf("secret-named key not hidden:\n%s", got)
	}

	cmd := sampleAsk()
	cmd.Args = `{"command":"curl -H \"Authorization: Bearer abcdefgh12345678\" https://x"}`
	if got := askview.Of(cmd, 0).Command; got != `curl -H "Authorization: Bearer [REDACTED]" https://x` {
		t.Errorf("command: %q", got)
	}
	// Arguments that are not JSON are still redacted as text.
	raw := sampleAsk()
	raw.Args = "not json PASSWORD=hunter2"
	if got := askview.Of(raw, 0).Text(); got != "not json PASSWORD=[REDACTED]" {
		t.Errorf("raw args: %q", got)
	}
}

func BenchmarkRenderAsk(b *testing.B) {
	a := sampleAsk()
	a.Args = `{"command":"` + strings.Repeat("echo hello world && ", 200) + `true"}`
	o := RenderOptions{Now: testNow, GrantScope: testScope}
	for b.Loop() {
		RenderAsk(a, o)
	}
}

// BenchmarkRenderAskHuge renders a 100 KB command full of secret-like words
// (every rule's prefilter passes), the worst case for redaction.
func BenchmarkRenderAskHuge(b *testing.B) {
	a := sampleAsk()
	cmd := strings.Repeat("TOKEN=abc curl -u a:b https://u:p@x/?password=1 -H 'Authorization: Bearer abcdefgh12345678' && ", 1100)
	a.Args = string(must(json.Marshal(map[string]string{"command": cmd})))
	o := RenderOptions{Now: testNow, GrantScope: testScope}
	b.SetBytes(int64(len(cmd)))
	for b.Loop() {
		RenderAsk(a, o)
	}
}
