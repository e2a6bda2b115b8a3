package slackui

import (
	"strings"

	"github.com/askops/askops/askview"
)

// The look-alike characters of a call (askview.Call finds them, for every
// surface alike) are listed in words next to the code block that shows
// them escaped (see visibleRune).

// maxLookAlikes and modalLookAlikes are how many findings a message and a
// modal list; the rest are counted.
const (
	maxLookAlikes   = 5
	modalLookAlikes = 10
)

// lookAlikeLines are the findings as mrkdwn lines for a message or modal,
// at most max of them and then how many more, never cut silently.
func lookAlikeLines(found []askview.LookAlike, max int) []string {
	var lines []string
	for i, f := range found {
		if i == max {
			lines = append(lines, "_+"+thousands(len(found)-max)+" more_")
			break
		}
		lines = append(lines, "• "+f.Where()+": "+proseText(f.What, 160)+" in "+inlineCode(redactHead(f.Word, 80), 80))
	}
	return lines
}

// lookAlikeBlockText is the warning section, or "" when there is nothing.
func lookAlikeBlockText(found []askview.LookAlike, max int) string {
	if len(found) == 0 {
		return ""
	}
	return "*:warning: Characters that may not be what they look like:*\n" + strings.Join(lookAlikeLines(found, max), "\n")
}
