package slacklink

import "testing"

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		name, team, channel, ts, thread, want string
	}{
		{"top-level", "https://acme.slack.com/", "C0APPROVALS", "1700000000.000100", "", "https://acme.slack.com/archives/C0APPROVALS/p1700000000000100"},
		{"team url without slash", "https://acme.slack.com", "C0APPROVALS", "1700000000.000100", "", "https://acme.slack.com/archives/C0APPROVALS/p1700000000000100"},
		{"reply in a thread", "https://acme.slack.com/", "C0APPROVALS", "1700000000.000200", "1700000000.000100",
			"https://acme.slack.com/archives/C0APPROVALS/p1700000000000200?thread_ts=1700000000.000100&cid=C0APPROVALS"},
		{"thread parent itself", "https://acme.slack.com/", "C0APPROVALS", "1700000000.000100", "1700000000.000100", "https://acme.slack.com/archives/C0APPROVALS/p1700000000000100"},
		{"enterprise grid", "https://acme.enterprise.slack.com/", "G0PRIVATE", "1700000000.000100", "", "https://acme.enterprise.slack.com/archives/G0PRIVATE/p1700000000000100"},
		{"direct message", "https://acme.slack.com/", "D0ANA", "1700000000.000100", "", "https://acme.slack.com/archives/D0ANA/p1700000000000100"},
		{"team unknown", "", "C0APPROVALS", "1700000000.000100", "", ""},
		{"not https", "http://acme.slack.com/", "C0APPROVALS", "1700000000.000100", "", ""},
		{"team url with a path", "https://evil.example/x?", "C0APPROVALS", "1700000000.000100", "", ""},
		{"no message", "https://acme.slack.com/", "", "", "", ""},
		{"channel not an id", "https://acme.slack.com/", "C1/../x", "1700000000.000100", "", ""},
		{"ts not a ts", "https://acme.slack.com/", "C0APPROVALS", "1700000000.1?x=1", "", ""},
		{"bad thread left off", "https://acme.slack.com/", "C0APPROVALS", "1700000000.000200", "x&y", "https://acme.slack.com/archives/C0APPROVALS/p1700000000000200"},
	} {
		if got := Message(tc.team, tc.channel, tc.ts, tc.thread); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
