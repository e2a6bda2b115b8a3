package pending

import (
	"errors"

	"github.com/askops/askops/internal/storeerr"
)

// Code classifies a store error; edges map codes to user-visible replies.
// The codes and the error type are the ones every askops store returns
// (internal/storeerr).
type Code = storeerr.Code

const (
	CodeNotFound    = storeerr.NotFound    // no such Ask (unknown, or garbage-collected)
	CodeConflict    = storeerr.Conflict    // the Ask was already decided; ConflictAsk says how and by whom
	CodeInvalid     = storeerr.Invalid     // bad input: empty id, unknown outcome, ttl <= 0
	CodeUnavailable = storeerr.Unavailable // the store could not be reached
	CodeInternal    = storeerr.Internal    // a bug or corrupt record
)

// Error is the one error type the store returns (Store "pending"); for
// CodeConflict its Record is the *Ask as the first decision left it.
type Error = storeerr.Error

// ErrorCode returns err's Code, CodeInternal for a foreign non-nil error, or "" for nil.
func ErrorCode(err error) Code { return storeerr.CodeOf(err) }

// ConflictAsk returns the already-decided Ask carried by a CodeConflict error.
func ConflictAsk(err error) (Ask, bool) {
	if e, ok := errors.AsType[*Error](err); ok && e.Code == CodeConflict {
		if a, ok := e.Record.(*Ask); ok && a != nil {
			return *a, true
		}
	}
	return Ask{}, false
}
