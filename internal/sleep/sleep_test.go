package sleep

import (
	"context"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	if !For(t.Context(), time.Millisecond) {
		t.Error("a short wait on a live context did not pass")
	}
	if !For(t.Context(), 0) {
		t.Error("no wait on a live context did not pass")
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if For(ended, 0) {
		t.Error("no wait on an ended context passed")
	}
	// An hour's wait on an ended context returns at once, and false: the
	// test would time out otherwise.
	if For(ended, time.Hour) {
		t.Error("a wait on an ended context passed")
	}
}
