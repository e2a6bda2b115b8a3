package sessions

import (
	"fmt"

	"github.com/askops/askops/internal/storeerr"
)

// Code classifies a sessions error; edges map codes to user-visible
// replies. The codes and the error type are the ones every askops store
// returns (internal/storeerr).
type Code = storeerr.Code

const (
	CodeInvalid     = storeerr.Invalid     // an empty or malformed channel, session or run id, or a mode chat-ops may not set
	CodeUnavailable = storeerr.Unavailable // the store could not be reached, or is closed
	CodeInternal    = storeerr.Internal    // a bug or a corrupt record
)

// Error is the one error type the stores return (Store "sessions").
type Error = storeerr.Error

// ErrInvalid matches (errors.Is) every error for bad arguments.
var ErrInvalid error = &Error{Store: "sessions", Code: CodeInvalid}

// ErrorCode returns err's Code, CodeInternal for a foreign non-nil error, or "" for nil.
func ErrorCode(err error) Code { return storeerr.CodeOf(err) }

func invalid(op, format string, args ...any) error {
	return &Error{Store: "sessions", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf(format, args...)}
}

func unavailable(op string, err error, format string, args ...any) error {
	return &Error{Store: "sessions", Code: CodeUnavailable, Op: op, Msg: fmt.Sprintf(format, args...), Err: err}
}
