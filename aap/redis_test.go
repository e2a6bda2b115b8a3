package aap

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// replica is one serve's AAP provider on the shared Redis: its own
// clients, its own Ask store (with its own announcement listener).
type replica struct {
	asks *pending.RedisStore
	srv  *Server
	url  string
}

func newReplica(t testing.TB, srv *redistest.Server) replica {
	t.Helper()
	client, err := redisconn.Open(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	asks, err := pending.NewRedisStore(context.Background(), client, pending.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = asks.Close() })
	s, err := New(Config{Asker: &fakeAsker{asks: asks}, Asks: asks, Store: NewRedisStore(client, rediskey.Default()),
		Provisioners: []Provisioner{{Name: "platform", Token: provToken}}, Window: 5 * time.Minute, AllowPrivateWebhooks: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.StripPrefix("/aap", s.Handler()))
	t.Cleanup(ts.Close)
	return replica{asks: asks, srv: s, url: ts.URL + "/aap"}
}

// Replicas over one real Redis: an instance made on A is known to B, a
// request made on A is long-polled on B and decided on C, and B's poll
// wakes through the Ask store's announcement. Every record is kept at
// least 168 h, and the bytes one request costs are reported.
func TestRedisReplicasAndRetention(t *testing.T) {
	srv := redistest.Start(t)
	a, b, c := newReplica(t, srv), newReplica(t, srv), newReplica(t, srv)
	h := &harness{t: t, url: a.url}
	_, cred := h.instance("replicated")
	created := h.create(cred, refund())
	id := created.str("id")
	onB := &harness{t: t, url: b.url}
	polled := make(chan reply, 1)
	go func() { polled <- onB.do("GET", "/v1/requests/"+id+"?wait=30s", cred, nil) }()
	var decided time.Time
	if _, err := c.asks.Decide(t.Context(), id, pending.Approved, "U0ANA", "fine"); err != nil {
		t.Fatal(err)
	}
	decided = time.Now()
	select {
	case r := <-polled:
		t.Logf("B's long poll answered %v after C's decision", time.Since(decided))
		if r.str("status") != "approved" || r.decision()["note"] != "fine" {
			t.Errorf("B's long poll: %s", r.Raw)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("B's long poll never woke")
	}
	// Retention: each record of the request lives at least 168 h more.
	rc, keys := askopsKeys(t, srv.URL())
	total := 0
	for _, k := range keys {
		if !strings.Contains(k, id) && !strings.Contains(k, "idem:req:") {
			continue
		}
		ttl := rc.PTTL(t.Context(), k).Val()
		if ttl < 168*time.Hour {
			t.Errorf("%s lives %s more, want at least 168 h", k, ttl)
		}
		n := int(rc.MemoryUsage(t.Context(), k).Val())
		total += n
		t.Logf("%s: %d bytes, TTL %s", k, n, ttl)
	}
	t.Logf("Redis bytes per retained request (its Ask, AAP record, decision, key): %d", total)
	if total == 0 {
		t.Error("no record of the request was found in Redis")
	}
	// The same key on another replica replays the same request.
	onC := &harness{t: t, url: c.url}
	key := recordid.NewUUID()
	first := h.do("POST", "/v1/requests", cred, refund(), "Idempotency-Key", key)
	again := onC.do("POST", "/v1/requests", cred, refund(), "Idempotency-Key", key)
	if again.Status != 200 || again.str("id") != first.str("id") {
		t.Errorf("a replay on another replica: %d %s", again.Status, again.Raw)
	}
}

// BenchmarkLongPollWakeAcrossReplicas: a request made on replica A,
// long-polled on B, decided on C (as a Slack click's handler decides on
// whichever replica Slack reached): how long after the decision B's poll
// answers. Reports the median and the 90th percentile.
func BenchmarkLongPollWakeAcrossReplicas(b *testing.B) {
	srv := redistest.Start(b)
	a, rb, c := newReplica(b, srv), newReplica(b, srv), newReplica(b, srv)
	send := func(method, url, token, key string, body string) map[string]any {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	prov := send("POST", a.url+"/v1/instances", provToken, "p", "{}")
	cred := prov["credential"].(map[string]any)["token"].(string)
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		id := send("POST", a.url+"/v1/requests", cred, recordid.NewUUID(), `{"tool":"deploy","arguments":{},"timeout":"5m"}`)["id"].(string)
		done := make(chan time.Time, 1)
		go func() {
			send("GET", rb.url+"/v1/requests/"+id+"?wait=30s", cred, "", "")
			done <- time.Now()
		}()
		if _, err := c.asks.Decide(context.Background(), id, pending.Approved, "U0ANA", ""); err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		lat = append(lat, (<-done).Sub(at))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}

// A Redis restart with requests pending: while Redis is down every
// exchange answers 503 (never a decision), polls in flight answer 503 or
// the truth, and after the restart each request is still pending and is
// decided as usual.
func TestRedisRestartWithRequestsPending(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newReplica(t, srv), newReplica(t, srv)
	h := &harness{t: t, url: a.url}
	onB := &harness{t: t, url: b.url}
	_, cred := h.instance("restarted")
	var ids []string
	for range 3 {
		ids = append(ids, h.create(cred, refund()).str("id"))
	}
	inFlight := make(chan reply, len(ids))
	for _, id := range ids {
		go func() { inFlight <- onB.do("GET", "/v1/requests/"+id+"?wait=5s", cred, nil) }()
	}
	srv.Stop()
	if r := h.do("GET", "/v1/requests/"+ids[0], cred, nil); r.Status != http.StatusServiceUnavailable || r.errorCode() != "store_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Errorf("GET with Redis down: %d %s", r.Status, r.Raw)
	}
	if r := h.create(cred, refund()); r.Status != http.StatusServiceUnavailable {
		t.Errorf("create with Redis down: %d %s", r.Status, r.Raw)
	}
	for range ids {
		r := <-inFlight
		if r.Status != http.StatusServiceUnavailable && (r.Status != 200 || r.str("status") != "pending") {
			t.Errorf("a long poll across the outage answered %d %s", r.Status, r.Raw)
		}
	}
	srv.StartAgain()
	c := newReplica(t, srv)
	for _, id := range ids {
		var r reply
		testwait.For(t, "the request to read again after the restart", func() bool {
			r = onB.do("GET", "/v1/requests/"+id, cred, nil)
			return r.Status == 200
		})
		if r.str("status") != "pending" {
			t.Fatalf("after the restart: %s", r.Raw)
		}
		polled := make(chan reply, 1)
		go func() { polled <- onB.do("GET", "/v1/requests/"+id+"?wait=30s", cred, nil) }()
		if _, err := c.asks.Decide(t.Context(), id, pending.Approved, "U0ANA", ""); err != nil {
			t.Fatal(err)
		}
		if p := <-polled; p.str("status") != "approved" {
			t.Errorf("decided after the restart, the poll answered %s", p.Raw)
		}
	}
}

// Deliveries on Redis: events recorded by a replica that then goes away
// are sent by the others, each event by one replica at a time, and each
// acknowledged event exactly once though two replicas deliver at once.
func TestRedisDeliveriesOneReplicaAtATime(t *testing.T) {
	srv := redistest.Start(t)
	a, b, c := newReplica(t, srv), newReplica(t, srv), newReplica(t, srv)
	rc, h, cred := deliveringInstance(t, a)
	const n = 20
	for range n {
		if r := h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"}); r.Status != 201 {
			t.Fatalf("create request: %d %s", r.Status, r.Raw)
		}
	}
	// A recorded every event and is gone; B and C deliver together.
	var wg sync.WaitGroup
	for _, rp := range []replica{b, c} {
		wg.Go(func() {
			for range 3 {
				if err := rp.srv.deliverDue(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, d := range rc.deliveries() {
		seen[d.id]++
	}
	if len(seen) != n {
		t.Errorf("%d events delivered, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("event %s sent %d times", id, k)
		}
	}
}

// maxAskBytes is pending's per-Ask budget (pending/memory_usage_test.go:
// maxBytesPerAsk) for an Ask whose arguments are 1 KB: an AAP request's
// Ask keeps within it; what the protocol adds beside it is reported.
const maxAskBytes = 2600

func TestRedisBytesOfAPendingRequest(t *testing.T) {
	srv := redistest.Start(t)
	a := newReplica(t, srv)
	h := &harness{t: t, url: a.url}
	_, cred := h.instance("measured")
	var random strings.Builder
	for random.Len() < 1024 {
		random.WriteString(recordid.New())
	}
	cmd := "echo " + random.String()[:1019] // hardly compresses
	id := h.create(cred, map[string]any{"tool": "Bash", "arguments": map[string]any{"command": cmd}, "timeout": "5m"}).str("id")
	rc, keys := askopsKeys(t, srv.URL())
	ask, added := 0, 0
	for _, k := range keys {
		n := int(rc.MemoryUsage(t.Context(), k).Val())
		switch {
		case strings.Contains(k, "{askops}:ask:"+id):
			ask += n
		case strings.Contains(k, "aap:req:"+id), strings.Contains(k, "aap:idem:req:"):
			added += n
		}
	}
	t.Logf("a pending request with 1 KB of arguments: its Ask %d bytes (budget %d), the AAP record and key %d bytes", ask, maxAskBytes, added)
	if ask == 0 || ask > maxAskBytes {
		t.Errorf("the Ask of an AAP request takes %d bytes, budget %d", ask, maxAskBytes)
	}
}

// askopsKeys is a client of the Redis at url (closed when the test ends)
// and every askops key it holds.
func askopsKeys(t *testing.T, url string) (redisconn.Client, []string) {
	t.Helper()
	rc, err := redisconn.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	keys, err := rc.Keys(t.Context(), "askops:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return rc, keys
}

// Count is one counter for every replica: two stores over one Redis add
// to the same count, and the counter lives only its ttl.
func TestRedisCount(t *testing.T) {
	srv := redistest.Start(t)
	var stores []*RedisStore
	for range 2 {
		rc, err := redisconn.Open(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		stores = append(stores, NewRedisStore(rc, rediskey.Default()))
	}
	for i, s := range []*RedisStore{stores[0], stores[1], stores[0]} {
		n, err := s.Count(t.Context(), "limit:create:platform:1", 2*time.Minute)
		if err != nil || n != int64(i+1) {
			t.Fatalf("count %d: %d %v, want %d", i, n, err, i+1)
		}
	}
	rc, keys := askopsKeys(t, srv.URL())
	if len(keys) != 1 {
		t.Fatalf("keys %v, want the one counter", keys)
	}
	if ttl := rc.PTTL(t.Context(), keys[0]).Val(); ttl <= time.Minute || ttl > 2*time.Minute {
		t.Errorf("the counter lives %s, want its 2 min", ttl)
	}
}

// One turn of the delivery loop's scan over Redis with 1,000 requests of a
// delivering instance waiting for a person: what every replica spends
// each ScanEvery (30 s) while nothing is decided.
func BenchmarkScanPending(b *testing.B) {
	srv := redistest.Start(b)
	a := newReplica(b, srv)
	_, h, cred := deliveringInstance(b, a)
	const n = 1000
	for range n {
		if r := h.create(cred, refund()); r.Status != 201 {
			b.Fatalf("create request: %d %s", r.Status, r.Raw)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := a.srv.scan(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/scan")
}

// A request made on A and decided on B: A hears of its end through the Ask
// store's announcement and records and sends its event at once, with no
// scan in between (the scan's period is an hour here).
func TestRedisEventRecordedWhereTheRequestWasMade(t *testing.T) {
	b, rc, h, cred := watchingPair(t, nil)
	c := h.create(cred, refund())
	if c.str("status") != "pending" {
		t.Fatalf("create request: %d %s", c.Status, c.Raw)
	}
	if _, err := b.asks.Decide(t.Context(), c.str("id"), pending.Denied, "U0ANA", "not today"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the decided request's event at the receiver", func() bool { return len(rc.deliveries()) == 1 })
	if got := rc.deliveries()[0]; !strings.Contains(string(got.body), c.str("id")) {
		t.Errorf("delivered %s, want the event of %s", got.body, c.str("id"))
	}
}

// watchingPair is two replicas over one Redis: A runs its delivery loop
// with the scan an hour away, so only the Ask store's announcements to A
// record events, and serves an instance whose receiver is rc (h and cred
// speak to A as it). wrap, if set, replaces A's Ask store with its own
// given replica B. The loop stops when the test ends.
func watchingPair(t *testing.T, wrap func(b replica, asks Asks) Asks) (b replica, rc *receiver, h *harness, cred string) {
	t.Helper()
	srv := redistest.Start(t)
	a := newReplica(t, srv)
	b = newReplica(t, srv)
	a.srv.cfg.ScanEvery = time.Hour
	if wrap != nil {
		a.srv.cfg.Asks = wrap(b, a.srv.cfg.Asks)
	}
	rc, h, cred = deliveringInstance(t, a)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- a.srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	return b, rc, h, cred
}

// wakesOnceEarly is an Ask store whose first OnEnd of each Ask wakes at
// once, as a Redis store's does when a read of the Ask fails, and whose
// later ones are the store's own.
type wakesOnceEarly struct {
	Asks
	// decidedUnheard, if set, decides the Ask just before each later OnEnd,
	// and that OnEnd never wakes: the decision's announcement came and went
	// before the watch listened.
	decidedUnheard func(id string)
	mu             sync.Mutex
	watched        map[string]int
}

func (w *wakesOnceEarly) OnEnd(id string, wake func()) (stop func()) {
	w.mu.Lock()
	w.watched[id]++
	first := w.watched[id] == 1
	w.mu.Unlock()
	if first {
		wake()
		return func() {}
	}
	if w.decidedUnheard != nil {
		w.decidedUnheard(id)
		return func() {}
	}
	return w.Asks.OnEnd(id, wake)
}

func (w *wakesOnceEarly) watches(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watched[id]
}

// A wake for a request that had not ended (the store's read failed) does
// not end its watch: the replica that made it watches it again, so a
// decision made later on another replica still sends its event at once,
// not at the next scan (an hour away here).
func TestRedisEventAfterAWakeForNothing(t *testing.T) {
	var asks *wakesOnceEarly
	b, rc, h, cred := watchingPair(t, func(_ replica, own Asks) Asks {
		asks = &wakesOnceEarly{Asks: own, watched: map[string]int{}}
		return asks
	})
	id := h.create(cred, refund()).str("id")
	testwait.For(t, "the request watched again after the wake for nothing", func() bool { return asks.watches(id) >= 2 })
	if _, err := b.asks.Decide(t.Context(), id, pending.Denied, "U0ANA", "not today"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the decided request's event at the receiver", func() bool { return len(rc.deliveries()) == 1 })
	if n := asks.watches(id); n != 2 {
		t.Errorf("the request was watched %d times, want twice (once more after the wake, not once a tick)", n)
	}
}

// A decision made between the wake for nothing and the new watch is
// announced before the watch listens: the read after watching finds it,
// and the event is sent at once all the same.
func TestRedisEventDecidedBeforeTheWatchAgain(t *testing.T) {
	_, rc, h, cred := watchingPair(t, func(b replica, own Asks) Asks {
		return &wakesOnceEarly{Asks: own, watched: map[string]int{}, decidedUnheard: func(id string) {
			if _, err := b.asks.Decide(context.Background(), id, pending.Denied, "U0ANA", "not today"); err != nil {
				t.Error(err)
			}
		}}
	})
	h.create(cred, refund())
	testwait.For(t, "the event of the request decided before the watch", func() bool { return len(rc.deliveries()) == 1 })
}

// deliveringInstance provisions, through rp, an instance whose receiver
// is rc, and returns a harness speaking to rp and the instance's
// credential.
func deliveringInstance(t testing.TB, rp replica) (rc *receiver, h *harness, cred string) {
	t.Helper()
	rc = newReceiver(t, testclock.New(time.Now()))
	rc.clock = nil // the replicas sign with the real clock
	h = &harness{t: t, url: rp.url}
	d, _ := rc.register()
	r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "r", "delivery": d}, "Idempotency-Key", "k")
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return rc, h, r.Body["credential"].(map[string]any)["token"].(string)
}
