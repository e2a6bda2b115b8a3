package slackui

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// twoHomes are the Homes of two replicas over w's two stores (one store
// in memory), sharing the viewers through the store.
func twoHomes(t *testing.T, w *world) (a, b *Home, stopA func()) {
	t.Helper()
	approvers := testApprovers(t)
	// The viewers are chat-ops state (sessions): one memory store beside
	// the memory world, two Redis stores on one server beside the Redis one.
	var va, vb HomeViewerStore
	if _, shared := w.asks.(*pending.RedisStore); !shared {
		m := sessions.NewMemoryStore(sessions.Options{})
		t.Cleanup(func() { _ = m.Close() })
		va, vb = m, m
	} else {
		srv := redistest.Start(t)
		open := func() HomeViewerStore {
			client, err := redisconn.Open(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			s := sessions.NewRedisStore(client, sessions.Options{})
			t.Cleanup(func() { _ = s.Close(); _ = client.Close() })
			return s
		}
		va, vb = open(), open()
	}
	mk := func(s any, v HomeViewerStore) (*Home, func()) {
		h := NewHome(HomeConfig{
			Asks: s.(HomeAsks), Viewers: v, API: w.api, Notifier: w.notifier, Approvers: approvers,
			Poll: 20 * time.Millisecond, Debounce: time.Millisecond, PublishEvery: time.Millisecond,
		})
		return h, runHome(t, h)
	}
	a, stopA = mk(w.asks, va)
	b, _ = mk(w.clicks, vb)
	return a, b, stopA
}

// openHomeWith asks req and has approverA open their Home on replica h; it
// returns the Ask once that Home shows it, alone.
func openHomeWith(t *testing.T, w *world, h *Home, req pending.Request) *waiting {
	t.Helper()
	wa := w.ask(req)
	h.Opened(approverA)
	waitHomeAsks(t, w, approverA, 1)
	return wa
}

// The replica that got app_home_opened dies: the other keeps the Home
// current, since the viewer is in the store.
func TestHomeViewerOutlivesItsReplica(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		a, _, stopA := twoHomes(t, w)
		first := openHomeWith(t, w, a, bashRequest("run-1", "s1", "terraform apply"))
		stopA() // the replica dies
		second := w.ask(bashRequest("run-2", "s1", "kubectl delete ns staging"))
		waitHomeAsks(t, w, approverA, 2) // refreshed by the other replica
		for _, wa := range []*waiting{first, second} {
			if _, err := w.clicks.Decide(t.Context(), wa.id, "denied", approverB, ""); err != nil {
				t.Fatal(err)
			}
			wa.result(t)
		}
	})
}

// Two replicas watching one viewer publish each change once.
func TestHomePublishedOnceByTwoReplicas(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		a, b, _ := twoHomes(t, w)
		wa := openHomeWith(t, w, a, bashRequest("run-1", "s1", "terraform apply"))
		// Both replicas now look, as their polls do; neither publishes
		// what was published.
		for _, h := range []*Home{a, b, a, b} {
			h.refresh(t.Context())
		}
		if n := len(w.fake.Calls("views.publish")); n != 1 {
			t.Errorf("views.publish called %d times for one Home, want 1", n)
		}
		if _, err := w.clicks.Decide(t.Context(), wa.id, "denied", approverB, ""); err != nil {
			t.Fatal(err)
		}
		wa.result(t)
	})
}
