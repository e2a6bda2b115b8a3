package slackui

import (
	"strings"
	"testing"
)

// Text is what every chat-ops surface posts through: nothing in it may act
// (mention, link, address) or leak a token, and readable text stays readable.
func TestTextIsInertAndRedacted(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings of the result
		not      []string // substrings that must not survive
	}{
		{"channel", "done <!channel> <!here> <!everyone>", []string{"&lt;!channel&gt;", "&lt;!here&gt;"}, []string{"<!"}},
		{"user and channel mention", "ask <@U0123ABC> in <#C0456|ops>", []string{"&lt;@U0123ABC&gt;", "&lt;#C0456|ops&gt;"}, []string{"<@", "<#"}},
		{"subteam", "<!subteam^S012|@oncall>", []string{"&lt;!subteam^S012|@oncall&gt;"}, []string{"<!subteam"}},
		{"disguised link", "see <https://evil.example/x|askops.example.com>", []string{"&lt;https://evil.example/x|askops.example.com&gt;"}, []string{"<https"}},
		{"ampersand entity", "&lt;!channel&gt;", []string{"&amp;lt;!channel&amp;gt;"}, nil},
		{"token", "use xoxb-1234-5678-abcdefghijkl and sk-abcdefghijklmnopqrstuvwxyz012345", []string{"xoxb-[REDACTED]", "sk-[REDACTED]"}, []string{"abcdefghijkl", "uvwxyz012345"}},
		{"bidi override", "rm \u202Etxt.exe", []string{`\u202e`}, []string{"\u202E"}},
		{"formatting kept", "*Done*: `make test` passed\n• one", []string{"*Done*", "`make test`", "\n• one"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in, MaxPostText)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Text(%q) = %q, want it to contain %q", tt.in, got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("Text(%q) = %q still contains %q", tt.in, got, n)
				}
			}
		})
	}
}

func TestTextCutsWithoutSplittingAnEntity(t *testing.T) {
	got := Text(strings.Repeat("<", 100), 50)
	if textLen(got) > 50 || !strings.HasSuffix(got, "&lt;…") {
		t.Fatalf("Text cut to %d units: %q", textLen(got), got)
	}
}
