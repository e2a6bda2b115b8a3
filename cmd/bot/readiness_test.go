package main

import (
	"context"
	"errors"
	"testing"
	"time"
)

// /readyz asks Slack at most once per TTL, and Socket Mode down is not
// ready.
func TestReadinessCachesSlack(t *testing.T) {
	now := time.Unix(1000, 0)
	calls := 0
	slackErr := errors.New("invalid_auth")
	r := &readiness{
		Now: func() time.Time { return now }, TTL: 10 * time.Second,
		Store: func(context.Context) error { return nil },
		Slack: func(context.Context) error { calls++; return slackErr },
	}
	if p := r.check(t.Context()); len(p) != 1 || p[0] != "slack: invalid_auth" {
		t.Fatalf("problems %q", p)
	}
	slackErr = nil
	r.check(t.Context())
	if calls != 1 {
		t.Fatalf("auth.test called %d times within the TTL", calls)
	}
	now = now.Add(10 * time.Second)
	if p := r.check(t.Context()); len(p) != 0 || calls != 2 {
		t.Fatalf("after the TTL: problems %q, calls %d", p, calls)
	}
	// Socket Mode down is not ready, whatever auth.test says.
	r.Socket = func() error { return errors.New("socket mode is not connected") }
	if p := r.check(t.Context()); len(p) != 1 || p[0] != "slack: socket mode is not connected" {
		t.Fatalf("socket down: problems %q", p)
	}
}
