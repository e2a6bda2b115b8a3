package pending

import (
	"strconv"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// newRedisClient opens a client the way production does (redisconn.Open) and
// closes it when the test ends.
func newRedisClient(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	c, err := redisconn.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newRedisStore opens a store on its own client (as its own process would)
// and closes it (before the client) when the test ends.
func newRedisStore(t testing.TB, url string, opts Options) *RedisStore {
	t.Helper()
	return openRedisStore(t, newRedisClient(t, url), opts)
}

// twoReplicas is a fresh Redis server and two stores on it, as two serve
// replicas share one.
func twoReplicas(t testing.TB) (srv *redistest.Server, a, b *RedisStore) {
	t.Helper()
	srv = redistest.Start(t)
	return srv, newRedisStore(t, srv.URL(), Options{}), newRedisStore(t, srv.URL(), Options{})
}

// redisStoresOn is the Redis store's newStoreFunc on the server at url:
// two stores, as two replicas share one server. A namespace per case,
// prefix and its count, keeps the cases apart on that server.
func redisStoresOn(url, prefix string) newStoreFunc {
	n := 0
	return func(t *testing.T, opts Options) (Store, Store) {
		n++
		opts.Namespace = prefix + strconv.Itoa(n)
		return newRedisStore(t, url, opts), newRedisStore(t, url, opts)
	}
}

func TestRedisStore(t *testing.T) {
	testStore(t, redisStoresOn(redistest.Start(t).URL(), "askops"))
}

func TestRedisStoreRefusesBadNamespace(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.URL())
	for _, ns := range []string{"a{b", "a}b", "a:b", "a b"} {
		s, err := NewRedisStore(t.Context(), client, Options{Namespace: ns})
		if ErrorCode(err) != CodeInvalid {
			t.Errorf("namespace %q: %v, want invalid", ns, err)
		}
		if s != nil {
			_ = s.Close()
		}
	}
}

func TestNewRedisStoreUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.URL())
	srv.Kill()
	s, err := NewRedisStore(t.Context(), client, Options{})
	if ErrorCode(err) != CodeUnavailable || s != nil {
		t.Errorf("NewRedisStore with Redis down = %v, %v; want unavailable", s, err)
	}
}

func TestRedisRecordTTLIsDeadlinePlusRetention(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.URL())
	s := openRedisStore(t, client, Options{Retention: time.Hour})
	ask, err := s.Create(t.Context(), sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(t.Context(), ask.ID, Approved, "U1", ""); err != nil {
		t.Fatal(err)
	}
	ttl, err := client.PTTL(t.Context(), s.keys.ask(ask.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 60*time.Minute || ttl > 61*time.Minute {
		t.Errorf("record TTL %s, want deadline (1m) + retention (1h)", ttl)
	}
	if slot := client.ClusterKeySlot(t.Context(), s.keys.ask(ask.ID)).Val(); slot != client.ClusterKeySlot(t.Context(), s.keys.audit).Val() ||
		slot != client.ClusterKeySlot(t.Context(), s.keys.deadlines).Val() {
		t.Errorf("keys are not in one cluster slot: %s %s %s", s.keys.ask(ask.ID), s.keys.audit, s.keys.deadlines)
	}
}

func TestRedisAuditIsCapped(t *testing.T) {
	srv := redistest.Start(t)
	client := newRedisClient(t, srv.URL())
	s := openRedisStore(t, client, Options{AuditMaxLen: 10})
	for i := range 150 {
		ask, err := s.Create(t.Context(), sampleRequest(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(t.Context(), ask.ID, Denied, "U1", ""); err != nil {
			t.Fatal(err)
		}
	}
	// MAXLEN ~ trims whole stream nodes (100 entries by default), so the
	// cap is approximate but the stream does not grow without bound.
	if n := client.XLen(t.Context(), s.keys.audit).Val(); n >= 300 || n < 10 {
		t.Errorf("audit holds %d events after 300 with AuditMaxLen 10", n)
	}
}
