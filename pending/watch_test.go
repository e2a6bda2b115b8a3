package pending

import (
	"context"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// watcher is a store with Watch (both implementations).
type watcher interface {
	Store
	Watch(ctx context.Context, id string) (Ask, error)
}

// Watch's contract on both stores: it wakes when another instance decides
// (the announcement, not a poll), it returns the Ask still pending when its
// ctx ends and records nothing (unlike Wait, which would cancel the Ask),
// and an unknown id is not found.
func testWatch(t *testing.T, a, b watcher) {
	ctx := t.Context()
	ask, err := a.Create(ctx, sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	got, err := a.Watch(short, ask.ID)
	cancel()
	if err != nil || got.Status != StatusPending {
		t.Fatalf("watch that gave up: %+v %v", got.Status, err)
	}
	if now, _ := b.Get(ctx, ask.ID); now.Status != StatusPending {
		t.Fatalf("a watcher giving up changed the ask: %s", now.Status)
	}
	woke := make(chan Ask, 1)
	go func() {
		w, err := a.Watch(ctx, ask.ID)
		if err != nil {
			t.Error(err)
		}
		woke <- w
	}()
	if _, err := b.Decide(ctx, ask.ID, Denied, "U1", "no"); err != nil {
		t.Fatal(err)
	}
	if w := <-woke; w.Status != Status(Denied) || w.DecidedBy != "U1" {
		t.Errorf("watch woke with %+v", w)
	}
	if _, err := a.Watch(ctx, recordid.New()); ErrorCode(err) != CodeNotFound {
		t.Errorf("unknown id: %v", err)
	}
}

func TestMemoryWatch(t *testing.T) {
	s := NewMemoryStore(Options{})
	t.Cleanup(func() { _ = s.Close() })
	testWatch(t, s, s)
}

func TestRedisWatch(t *testing.T) {
	_, a, b := twoReplicas(t)
	testWatch(t, a, b)
}
