package slackui

import (
	"strings"
	"testing"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// The Why, Where and Who lines list the fields that say something: a
// field of spaces alone (an agent's blank reason) leaves its line out
// rather than showing an empty "Why:".
func TestDetailLinesLeaveBlankFieldsOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		wantWhy string
	}{
		{"a reason", "the rules ask before rm", "*Why:* the rules ask before rm"},
		{"no reason", "", ""},
		{"spaces alone", "   \t ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := pending.Ask{Request: pending.Request{Tool: "bash", Reason: tc.reason, Workspace: "/srv/app"}}
			lines, _ := detailLines(a, askview.Of(a, 0), 1)
			want := []string{"*Where:* workspace `/srv/app`"}
			if tc.wantWhy != "" {
				want = append([]string{tc.wantWhy}, want...)
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("lines %q, want %q", lines, want)
			}
		})
	}
}
