package askview

import (
	"time"
	"unicode/utf8"

	"github.com/askops/askops/pending"
)

// This file is how a session is named to a person (issue 24): by what
// they know it by, and when it started ("this Claude Code session in
// ~/src/api, started 14:02"). The name is worked out by the door the
// Ask came in by; the start is kept as a time, and each surface words it
// for its reader (Slack in each reader's own zone, the console in the
// browser's); what here is plain text, for the places that have no
// reader's zone (the confirmation dialogs, logs), says UTC.

// QuoteName is a name a person wrote (a session id they chose, a
// thread's first words) in quotes, cut to 40 runes with a mark: long
// enough to recognise, short enough to stay a name.
func QuoteName(s string) string {
	const most = 40
	if utf8.RuneCountInString(s) > most {
		s = s[:ByteOffset(s, most-1)] + cutMark
	}
	return "'" + s + "'"
}

// ClockOnly is how long before an Ask its session's start is told by the
// time of day alone ("14:02"); an earlier start adds the date ("Dec 1
// 14:02"), so a session open since yesterday does not read as today's.
const ClockOnly = 12 * time.Hour

// TimeOnly reports whether a session that started at started is told by
// the time of day alone on an Ask made at asked.
func TimeOnly(started, asked time.Time) bool {
	return asked.IsZero() || asked.Sub(started) < ClockOnly
}

// StartedText is started in plain text, in UTC: "14:02 UTC", or
// "Dec 1 14:02 UTC" when the Ask was made ClockOnly or more later.
func StartedText(started, asked time.Time) string {
	if TimeOnly(started, asked) {
		return started.UTC().Format("15:04 UTC")
	}
	return started.UTC().Format("Jan 2 15:04 UTC")
}

// SessionText is a session's name with its start in plain text:
// "this Claude Code session in ~/src/api, started 14:02 UTC"; the name
// alone when the start is unknown, "" without a name.
func SessionText(name string, started, asked time.Time) string {
	if name == "" || started.IsZero() {
		return name
	}
	return name + ", started " + StartedText(started, asked)
}

// Session is the name and the start a's session is shown with, as its
// Ask stored them (pending.Shown): "" and zero when it does not say.
func Session(a pending.Ask) (name string, started time.Time) {
	if a.Shown == nil || a.Shown.Session == "" {
		return "", time.Time{}
	}
	if a.Shown.Started > 0 {
		started = time.Unix(a.Shown.Started, 0)
	}
	return a.Shown.Session, started
}
