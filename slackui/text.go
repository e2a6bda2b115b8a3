package slackui

import (
	"github.com/askops/askops/redact"
)

// MaxPostText is what askops puts into the text field of one plain message
// (no blocks), in UTF-16 units: under Slack's 40,000 with room for the
// markup askops adds around it.
const MaxPostText = 38000

// Text is the one way text askops did not write itself — a model's answer,
// an error, a task, a run label, anything a user typed — reaches a Slack
// message, status edit, ephemeral or slash-command reply: secrets are
// redacted first (so the patterns see the raw text), then &, < and > become
// entities so nothing in it can mention (<!channel>, <@U…>), link (a
// disguised <https://evil|askops.example.com>) or address anybody, and
// invisible or bidi-control characters are shown as \u escapes. Ordinary
// formatting (*bold*, `code`, lists) is kept: a final answer stays readable.
// The result is cut to max units with "…", never inside an entity.
//
// Mentions and dates askops builds itself (<@U123> for who decided,
// <!date^…>) are added around the result, never passed through it.
func Text(s string, max int) string {
	c := cutter{budget: max - 1}
	c.write(redact.Secrets(s), func(_, r rune) string { return escapeRune(r) })
	out := c.b.String()
	if c.omitted > 0 {
		out += ellipsis
	}
	return out
}

// Person shows who did something: a Slack user id as a mention askops
// builds itself (Slack renders the name), anything else (a name given to
// `bot grants`, "askops") through Text, so it cannot pose as markup.
func Person(who string) string {
	switch {
	case isSlackUserID(who):
		return "<@" + who + ">"
	case who == "":
		return "someone"
	}
	return Text(who, 80)
}
