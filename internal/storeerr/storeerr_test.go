package storeerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodesMessagesAndSentinels(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	err := fmt.Errorf("wrapped: %w", &Error{Store: "sessions", Code: Unavailable, Op: "track", Msg: "could not record the session", Err: cause})
	if CodeOf(err) != Unavailable || CodeOf(nil) != "" || CodeOf(cause) != Internal {
		t.Errorf("codes: %q %q %q", CodeOf(err), CodeOf(nil), CodeOf(cause))
	}
	if got := err.Error(); got != "wrapped: sessions: track: could not record the session: dial tcp: refused" {
		t.Errorf("Error() = %q", got)
	}
	if got := Message(err); got != "could not record the session: dial tcp: refused" {
		t.Errorf("Message = %q", got)
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not reachable")
	}
	if !errors.Is(err, &Error{Store: "sessions", Code: Unavailable}) {
		t.Error("a store-and-code sentinel does not match")
	}
	for _, other := range []*Error{{Store: "grants", Code: Unavailable}, {Store: "sessions", Code: Invalid}, {Store: "sessions", Code: Unavailable, Msg: "x"}} {
		if errors.Is(err, other) {
			t.Errorf("%+v matches", other)
		}
	}
}
