package chatops

import "testing"

// The /askops pending link is the one shape internal/slacklink builds,
// and nothing that does not look like Slack's parts becomes a link.
func TestMessageLink(t *testing.T) {
	for _, c := range []struct {
		domain, channel, ts, want string
	}{
		{"acme", "C0123ABCD", "1712345678.000100", "https://acme.slack.com/archives/C0123ABCD/p1712345678000100"},
		{"acme.evil.com/x", "C0123ABCD", "1712345678.000100", ""},
		{"acme", "C0123ABCD|<x>", "1712345678.000100", ""},
		{"acme", "C0123ABCD", "now", ""},
		{"", "C0123ABCD", "1712345678.000100", ""},
	} {
		got, ok := messageLink(c.domain, c.channel, c.ts)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("messageLink(%q, %q, %q) = %q, %v; want %q", c.domain, c.channel, c.ts, got, ok, c.want)
		}
	}
}
