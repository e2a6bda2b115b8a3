package grants

import (
	"errors"
	"fmt"
)

// Code classifies a grants error; edges map codes to user-visible replies.
type Code string

const (
	CodeNotFound    Code = "not_found"   // no such grant (unknown, revoked, or its session expired)
	CodeInvalid     Code = "invalid"     // bad input: a scope that fails Validate, empty session or grantor, ttl <= 0
	CodeUnavailable Code = "unavailable" // the store could not be reached, or is closed
	CodeInternal    Code = "internal"    // a bug or a corrupt record
)

// Error is the one error type the stores and scope constructors return.
type Error struct {
	Code Code
	Op   string // what was attempted, e.g. "record", "scope"
	Msg  string // safe to show a user
	Err  error  // underlying cause, for logs
}

func (e *Error) Error() string {
	s := fmt.Sprintf("grants: %s: %s", e.Op, e.Msg)
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

func invalid(op, format string, args ...any) error {
	return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf(format, args...)}
}
