// Package conventions holds the tests that keep askops to one convention
// per concern (STYLE.md's house habits) by reading the source itself: ids
// and secrets come from internal/recordid, and log records name an Ask,
// a run and a session by the keys "ask", "run" and "session". It has no
// code of its own.
package conventions
