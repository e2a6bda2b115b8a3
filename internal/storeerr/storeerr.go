// Package storeerr is the one error type of askops' stores (pending,
// grants, sessions): a code that an edge maps to its own answer (an HTTP
// status, a Slack reply, an exit code), a message safe to show a user, and
// the cause, for logs only. Each store re-exports the type and its codes
// under its own name (pending.Error, grants.CodeNotFound, ...).
package storeerr

import (
	"errors"
	"fmt"
)

// Code classifies a store error.
type Code string

const (
	NotFound    Code = "not_found"   // no such record (unknown, or gone)
	Conflict    Code = "conflict"    // the record is no longer in the state the call needs (an Ask already decided)
	Invalid     Code = "invalid"     // bad input; nothing was written
	Unavailable Code = "unavailable" // the store could not be reached, or is closed
	Internal    Code = "internal"    // a bug or a corrupt record
)

// Error is a store error.
type Error struct {
	Store string // which store: "pending", "grants", "sessions"
	Code  Code
	Op    string // what was attempted, e.g. "decide"
	Msg   string // safe to show a user
	// Record is, for Conflict, the record as it now stands, in the store's
	// own type (pending: *pending.Ask), so the caller can say who was first.
	Record any
	Err    error // underlying cause, for logs
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s: %s", e.Store, e.Op, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes a bare Error of a store and a code (no Op, Msg or cause; a
// sentinel such as sessions.ErrInvalid) match every error of that store
// with that code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Msg == "" && t.Err == nil && t.Store == e.Store && t.Code == e.Code
}

// CodeOf returns err's Code, Internal for a foreign non-nil error, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return Internal
}

// Message is what a user may be shown of err: its Msg and, when there is
// one, its cause (for a command line's operator, who needs the detail; a
// chat reply shows Msg alone). A foreign error is shown whole.
func Message(err error) string {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return err.Error()
	}
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}
