// Package slacklink builds the one link askops gives to a Slack message:
// the shape chat.getPermalink answers, the workspace's URL (auth.test's
// url) + /archives/CHANNEL/pTS, with ?thread_ts=…&cid=… for a reply in a
// thread. Built locally it costs no Web API call per Ask, and every place
// that shows a link (the HTTP API's message_url, `bot ask`) shows the same.
package slacklink

import (
	"net/url"
	"regexp"
	"strings"
)

// Message is the permalink of the message ts in channel, a reply in the
// thread threadTS when that is set and is not ts itself. It is "" when
// teamURL is unknown or any part does not look like what Slack sends, so a
// stored or typed value can never turn into some other link.
func Message(teamURL, channel, ts, threadTS string) string {
	u, err := url.Parse(teamURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	if !channelID.MatchString(channel) || !messageTS.MatchString(ts) {
		return ""
	}
	link := "https://" + u.Host + "/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
	if threadTS != "" && threadTS != ts && messageTS.MatchString(threadTS) {
		link += "?thread_ts=" + threadTS + "&cid=" + channel
	}
	return link
}

var (
	channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`)
	messageTS = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)
