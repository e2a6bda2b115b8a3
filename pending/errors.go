package pending

import (
	"errors"
	"fmt"
)

// Code classifies a store error; edges map codes to user-visible replies.
type Code string

const (
	CodeNotFound    Code = "not_found"   // no such Ask (unknown, or garbage-collected)
	CodeConflict    Code = "conflict"    // the Ask was already decided; Error.Ask says how and by whom
	CodeInvalid     Code = "invalid"     // bad input: empty id, unknown outcome, ttl <= 0
	CodeUnavailable Code = "unavailable" // the store could not be reached
	CodeInternal    Code = "internal"    // a bug or corrupt record
)

// Error is the one error type the store returns.
type Error struct {
	Code Code
	Op   string // the Store method, e.g. "decide"
	Msg  string // safe to show a user
	Ask  *Ask   // for CodeConflict: the record as the first decision left it
	Err  error  // underlying cause, for logs
}

func (e *Error) Error() string {
	s := fmt.Sprintf("pending: %s: %s", e.Op, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns err's Code, CodeInternal for a foreign non-nil error, or "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ConflictAsk returns the already-decided Ask carried by a CodeConflict error.
func ConflictAsk(err error) (Ask, bool) {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeConflict && e.Ask != nil {
		return *e.Ask, true
	}
	return Ask{}, false
}
