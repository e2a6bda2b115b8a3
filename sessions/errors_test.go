package sessions_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
)

// TestErrorsCarryCodes: the stores' errors have the codes and the
// user-facing message every askops store's errors have, so an edge maps a
// code instead of reading text: a bad argument is CodeInvalid (and still
// ErrInvalid), an unreachable Redis CodeUnavailable.
func TestErrorsCarryCodes(t *testing.T) {
	mem := sessions.NewMemoryStore(sessions.Options{})
	err := mem.Track(t.Context(), "", "s1")
	var e *sessions.Error
	if sessions.ErrorCode(err) != sessions.CodeInvalid || !errors.Is(err, sessions.ErrInvalid) || !errors.As(err, &e) || e.Msg != "empty channel" {
		t.Errorf("empty channel: %v (code %q)", err, sessions.ErrorCode(err))
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: every call is refused
	st := sessions.NewRedisStore(newRedisClient(t, addr), sessions.Options{})
	t.Cleanup(func() { _ = st.Close() })
	err = st.SetMode(t.Context(), "C1", policy.ModeNever, "U1")
	if sessions.ErrorCode(err) != sessions.CodeUnavailable || errors.Is(err, sessions.ErrInvalid) ||
		!errors.As(err, &e) || !strings.HasPrefix(e.Msg, "could not set the mode") || e.Err == nil {
		t.Errorf("unreachable Redis: %v (code %q)", err, sessions.ErrorCode(err))
	}
}
