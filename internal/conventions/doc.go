// Package conventions holds the tests that keep askops to one convention
// per concern (STYLE.md's house habits) by reading the source itself: ids
// and secrets come from internal/recordid; log records name an Ask, a run
// and a session by the keys "ask", "run" and "session"; background loops
// are a Run(ctx) error that only cmd/bot's loops start, and no constructor
// starts a goroutine of its own; and tests wait with internal/testwait and
// move time with internal/testclock, not copies of their own. It has no
// code of its own.
package conventions
