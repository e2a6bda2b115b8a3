package chatops

import (
	"regexp"
	"strings"

	"github.com/askops/askops/askview"
)

// slackMarkup is Slack's markup in a message's text: a link or a channel
// with the text it shows (<https://x|x>, <#C1|ops>), or without (<!here>).
var slackMarkup = regexp.MustCompile(`<([^<>|]*)(?:\|([^<>]*))?>`)

// threadName is a run's Slack thread as a person knows it: by the words
// its run was asked in, as they wrote them ("thread 'deploy v1.4'"): the
// prompt's first line, Slack's markup read back as the text it shows,
// cut to 40 runes with a mark. "" for a prompt with no words.
func threadName(task string) string {
	line := ""
	for l := range strings.SplitSeq(task, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	line = slackMarkup.ReplaceAllStringFunc(line, func(m string) string {
		sub := slackMarkup.FindStringSubmatch(m)
		switch {
		case sub[2] != "" && strings.HasPrefix(sub[1], "#"):
			return "#" + sub[2]
		case sub[2] != "":
			return sub[2]
		case strings.HasPrefix(sub[1], "!"):
			return "@" + strings.TrimPrefix(sub[1], "!")
		}
		return sub[1]
	})
	line = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(line)
	line = strings.Join(strings.Fields(line), " ")
	if line == "" {
		return ""
	}
	return "thread " + askview.QuoteName(line)
}
