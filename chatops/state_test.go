package chatops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
)

// brokenSessions is a session store whose every call fails, as with Redis down.
type brokenSessions struct{}

var errStoreDown = errors.New("redis: connection refused")

func (brokenSessions) Track(context.Context, string, string) error { return errStoreDown }
func (brokenSessions) Sessions(context.Context, string) ([]string, error) {
	return nil, errStoreDown
}
func (brokenSessions) SetMode(context.Context, string, policy.Mode, string) error {
	return errStoreDown
}
func (brokenSessions) Mode(context.Context, string) (sessions.ModeSetting, bool, error) {
	return sessions.ModeSetting{}, false, errStoreDown
}
func (brokenSessions) HandleStops(context.Context, sessions.Stopper) (func(), error) {
	return nil, errStoreDown
}
func (brokenSessions) Stop(context.Context, string, string) (sessions.StopResult, error) {
	return sessions.StopResult{}, errStoreDown
}
func (brokenSessions) FirstEvent(context.Context, string) bool { return true }

// TestChatOpsFailClosedWhenTheSessionStoreFails: a run whose channel mode
// cannot be read starts in mode never (its approvers may have said so), and
// its per-call read reports the failure, which the agent answers by keeping
// the mode; the replies say nothing happened.
func TestChatOpsFailClosedWhenTheSessionStoreFails(t *testing.T) {
	ctx := t.Context()
	o := newTestOps(t, testOptions{sessions: brokenSessions{}, noNew: true})
	if m := o.startMode(ctx, "COPS"); m != policy.ModeNever {
		t.Errorf("start mode with the store down = %q, want never", m)
	}
	if m, err := o.modeFor("COPS")(ctx); err == nil || m != "" {
		t.Errorf("per-call mode with the store down = %q, %v; want an error", m, err)
	}
	if r := o.stop(ctx, "run-1", "U1").(*SlashReply); !strings.Contains(r.Text, "Could not pass on the stop request") {
		t.Errorf("stop reply with the store down: %q", r.Text)
	}
	// New itself refuses: this process could not answer stop requests.
	if _, err := New(ctx, o.cfg); err == nil || !strings.Contains(err.Error(), "redis.url") {
		t.Errorf("New with the store down: %v", err)
	}
}

// TestChatOpsModeReadsTheChannel: a run starts with its channel's mode, or
// the configured one ("") when none is set, and reads it again per call.
func TestChatOpsModeReadsTheChannel(t *testing.T) {
	ctx := t.Context()
	st := sessions.NewMemoryStore(sessions.Options{TTL: time.Hour})
	o := newTestOps(t, testOptions{sessions: st})
	if m := o.startMode(ctx, "COPS"); m != "" {
		t.Errorf("start mode with none set = %q, want the configured one", m)
	}
	perCall := o.modeFor("COPS")
	if err := st.SetMode(ctx, "COPS", policy.ModeNever, "U1"); err != nil {
		t.Fatal(err)
	}
	if m := o.startMode(ctx, "COPS"); m != policy.ModeNever {
		t.Errorf("start mode = %q, want never", m)
	}
	if m, err := perCall(ctx); err != nil || m != policy.ModeNever {
		t.Errorf("per-call mode after set = %q, %v", m, err)
	}
	if m, err := o.modeFor("COTHER")(ctx); err != nil || m != "" {
		t.Errorf("another channel's mode = %q, %v", m, err)
	}
}
