package console

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/webpush"
)

// A Pusher given no client and no timeout (as the serve builds it) sends
// through a client bounded by the default timeout, not an unbounded one.
func TestPusherDefaultClientIsBounded(t *testing.T) {
	raw, err := webpush.NewVAPIDKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := webpush.ParseVAPIDKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPusher(PushConfig{Store: webpush.NewMemoryStore(), VAPID: webpush.VAPID{Key: k, Subject: "mailto:ops@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.cfg.Client.Timeout; got != 10*time.Second {
		t.Errorf("the default push client's timeout is %v, want 10s", got)
	}
}
