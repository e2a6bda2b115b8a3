package grants

import (
	"fmt"

	"github.com/askops/askops/internal/storeerr"
)

// Code classifies a grants error; edges map codes to user-visible replies.
// The codes and the error type are the ones every askops store returns
// (internal/storeerr).
type Code = storeerr.Code

const (
	CodeNotFound    = storeerr.NotFound    // no such grant (unknown, revoked, or its session expired)
	CodeInvalid     = storeerr.Invalid     // bad input: a scope that fails Validate, empty session or grantor, ttl <= 0
	CodeUnavailable = storeerr.Unavailable // the store could not be reached, or is closed
	CodeInternal    = storeerr.Internal    // a bug or a corrupt record
)

// Error is the one error type the stores and scope constructors return
// (Store "grants").
type Error = storeerr.Error

// ErrorCode returns err's Code, CodeInternal for a foreign non-nil error, or "" for nil.
func ErrorCode(err error) Code { return storeerr.CodeOf(err) }

func invalid(op, format string, args ...any) error {
	return &Error{Store: "grants", Code: CodeInvalid, Op: op, Msg: fmt.Sprintf(format, args...)}
}
