// Package consoleuser is the console's user name as a decider: what a name
// may be and how a decision taken in the console names its decider. It is
// a leaf so the config can check console.user without linking the console
// (and, through it, the round trip).
package consoleuser

import (
	"errors"
	"strings"
	"unicode"
)

// DeciderPrefix marks a decision taken in the console: the decider is
// "console:<name>".
const DeciderPrefix = "console:"

// Check refuses a name that cannot decide: empty, long, or holding what
// Slack's mrkdwn or a host suffix ("dana@build-1") would read.
func Check(name string) error {
	switch {
	case name == "":
		return errors.New("console: no user name to decide as (console.user or $USER)")
	case len(name) > 64:
		return errors.New("console: user name longer than 64 bytes")
	case strings.ContainsFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune("<>&@|*_~`", r)
	}):
		return errors.New("console: user name may not hold spaces, control characters or any of <>&@|*_~`")
	}
	return nil
}
