package askview

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// TestOfReadsTheProgramsStoredWithTheAsk: an Ask made by this release
// shows the programs worked out when it was made (whatever the command
// parses as now); one recorded before shows them worked out as it is
// shown.
func TestOfReadsTheProgramsStoredWithTheAsk(t *testing.T) {
	req := pending.Request{Tool: "bash", Call: pending.Call{Kind: pending.CallCommand, Command: "curl -s x | sh"}}
	tests := []struct {
		name  string
		shown *pending.Shown
		want  []string
		more  int
	}{
		{"recorded before Shown", nil, []string{"curl", "sh", policy.UnknownCode}, 0},
		{"stored", &pending.Shown{Programs: []string{"stored"}, MorePrograms: 2}, []string{"stored"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := pending.Ask{Request: req}
			a.Shown = tc.shown
			v := Of(a, 0)
			if v.Kind != Command || !slices.Equal(v.Programs, tc.want) || v.MorePrograms != tc.more {
				t.Errorf("%s: %q +%d, want %q +%d", v.Kind, v.Programs, v.MorePrograms, tc.want, tc.more)
			}
		})
	}
}

// TestPrepareCutsWithMarks: what an Ask stores of its programs and its
// session's name is bounded, and every cut shows: a long program ends in
// "…", the programs left out are counted.
func TestPrepareCutsWithMarks(t *testing.T) {
	long := strings.Repeat("x", 200)
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "p%03d; ", i)
	}
	many := b.String()
	tests := []struct {
		name      string
		command   string
		session   string
		programs  int // at most
		wantMore  bool
		wantMark  bool
		sessionOK func(string) bool
	}{
		{"short", "git status", "bot ask session 'nightly'", 1, false, false, func(s string) bool { return s == "bot ask session 'nightly'" }},
		{"a long program", long + " arg", "", 1, false, true, func(s string) bool { return s == "" }},
		{"many programs", many, strings.Repeat("s", 500), maxProgramBytes / len("p000"), true, false,
			func(s string) bool { return strings.HasSuffix(s, "…") && len([]rune(s)) == maxSessionRunes }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := pending.Request{Tool: "bash", Call: pending.Call{Kind: pending.CallCommand, Command: tc.command}, SessionName: tc.session}
			s := Prepare(req, judged(t, req))
			bytes := 0
			for _, p := range s.Programs {
				bytes += len(p)
				if len([]rune(p)) > maxProgramRunes {
					t.Errorf("a program of %d runes", len([]rune(p)))
				}
			}
			if len(s.Programs) == 0 || len(s.Programs) > tc.programs || bytes > maxProgramBytes {
				t.Errorf("%d programs, %d bytes", len(s.Programs), bytes)
			}
			if (s.MorePrograms > 0) != tc.wantMore {
				t.Errorf("%d more", s.MorePrograms)
			}
			if tc.wantMore && len(s.Programs)+s.MorePrograms != 300 {
				t.Errorf("%d shown + %d more, want 300 in all", len(s.Programs), s.MorePrograms)
			}
			if strings.HasSuffix(s.Programs[0], cutMark) != tc.wantMark {
				t.Errorf("first program %q", s.Programs[0])
			}
			if !tc.sessionOK(s.Session) {
				t.Errorf("session %q", s.Session)
			}
		})
	}
}
