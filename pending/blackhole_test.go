package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedisListenerSurvivesSilentDrop: the listener's connection stops
// carrying anything without being closed. The listener must notice (PING,
// then replace the connection) and the waiters must still get decisions
// announced while it was deaf.
func TestRedisListenerSurvivesSilentDrop(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.StartBlackhole(t, srv.Addr())
	o, err := redisconn.ParseURL("redis://" + proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	// Short timeouts so the waiters' own pool connections, blackholed too,
	// are abandoned quickly.
	o.ReadTimeout, o.WriteTimeout, o.DialTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	viaProxy := redis.NewUniversalClient(o)
	t.Cleanup(func() { _ = viaProxy.Close() })
	a, err := NewRedisStore(t.Context(), viaProxy, Options{ListenerIdle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b := newRedisStore(t, srv.URL(), Options{})

	const n = 20
	asks, results := startWaiters(t, a, n, 15*time.Second)
	proxy.Drop()
	won := make([]Ask, n)
	for i, ask := range asks {
		if won[i], err = b.Decide(t.Context(), ask.ID, Approved, "U_BOB", ""); err != nil {
			t.Fatal(err)
		}
	}
	for i, ask := range asks {
		checkWokeWithDecision(t, i, ask, resultWithin(t, i, ask, results), won[i])
	}
}
