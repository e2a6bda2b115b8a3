package aap

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/pending"
)

// receiver is a webhook receiver as the specification describes one: it
// knows its registrations' secrets, verifies every signature, timestamp
// and id, answers the challenge only for an expected registration, and
// records what it accepted. fail scripts its next answers.
type receiver struct {
	t     testing.TB
	clock *testclock.Clock
	srv   *httptest.Server
	mu    sync.Mutex
	regs  map[string]string // registration id -> secret
	inst  map[string]string // instance id -> registration id, once verified
	got   []delivered
	fail  []int // statuses to answer next, in order (then 204)
	retry string
	bare  bool // answer verification with a bare 200
}

type delivered struct {
	id, ts, sig string
	body        []byte
}

func newReceiver(t testing.TB, c *testclock.Clock) *receiver {
	r := &receiver{t: t, clock: c, regs: map[string]string{}, inst: map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// failNext makes the receiver answer its next n deliveries with status.
func (r *receiver) failNext(n, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = make([]int, n)
	for i := range r.fail {
		r.fail[i] = status
	}
}

// register installs a fresh registration and returns its delivery input.
func (r *receiver) register() (map[string]any, string) {
	var key [32]byte
	_, _ = rand.Read(key[:])
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key[:])
	reg := recordid.NewUUID()
	r.mu.Lock()
	r.regs[reg] = secret
	r.mu.Unlock()
	return map[string]any{"type": "webhook", "url": r.srv.URL + "/aap/events", "registration_id": reg, "signing_secret": secret}, secret
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var msg map[string]string
	if json.Unmarshal(body, &msg) != nil || msg["id"] != req.Header.Get("webhook-id") {
		http.Error(w, "malformed", 400)
		return
	}
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	now := time.Now()
	if r.clock != nil {
		now = r.clock.Now()
	}
	if d := now.Sub(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		http.Error(w, "stale", http.StatusUnauthorized)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	reg := msg["registration_id"]
	if msg["type"] == "request.resolved" {
		reg = r.inst[msg["instance_id"]]
	}
	secret, ok := r.regs[reg]
	if !ok || !validSignature(secret, req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), body, req.Header.Get("webhook-signature")) {
		http.Error(w, "unknown registration or bad signature", http.StatusUnauthorized)
		return
	}
	if msg["type"] == "webhook.verification" {
		if r.bare {
			w.WriteHeader(200)
			return
		}
		r.inst[msg["instance_id"]] = reg
		writeJSON(w, 200, map[string]string{"challenge": msg["challenge"]})
		return
	}
	r.got = append(r.got, delivered{id: req.Header.Get("webhook-id"), ts: req.Header.Get("webhook-timestamp"), sig: req.Header.Get("webhook-signature"), body: body})
	if len(r.fail) > 0 {
		status := r.fail[0]
		r.fail = r.fail[1:]
		if r.retry != "" {
			w.Header().Set("Retry-After", r.retry)
		}
		w.WriteHeader(status)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// validSignature verifies a Standard Webhooks v1 signature in constant time.
func validSignature(secret, id, ts string, body []byte, header string) bool {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(header) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

func (r *receiver) deliveries() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivered(nil), r.got...)
}

// asyncInstance provisions an instance with rc's receiver.
func (h *harness) asyncInstance(rc *receiver) (id, cred string) {
	h.t.Helper()
	d, _ := rc.register()
	r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "async", "delivery": d}, "Idempotency-Key", recordid.NewUUID())
	if r.Status != http.StatusCreated {
		h.t.Fatalf("provisioning with a receiver: %d %s", r.Status, r.Raw)
	}
	return r.Body["instance"].(map[string]any)["id"].(string), r.Body["credential"].(map[string]any)["token"].(string)
}

// turn is one turn of the delivery loop.
func (h *harness) turn() {
	h.t.Helper()
	if err := h.srv.scan(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	if err := h.srv.deliverDue(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
}

// One test per asynchronous provider requirement of 8_security.md.

func TestSpec8Async01VerifyReceiverBeforeCommitting(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	d, secret := rc.register()
	r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "a", "delivery": d}, "Idempotency-Key", "k")
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	inst := r.Body["instance"].(map[string]any)
	got := inst["delivery"].(map[string]any)
	if got["type"] != "webhook" || got["url"] != d["url"] || got["registration_id"] != d["registration_id"] || strings.Contains(string(r.Raw), secret) {
		t.Errorf("created instance %s", r.Raw)
	}
	rc.mu.Lock()
	verified := rc.inst[inst["id"].(string)] == d["registration_id"]
	rc.mu.Unlock()
	if !verified {
		t.Error("the receiver never verified the registration for this instance")
	}
	if g := h.do("GET", "/v1/instances/"+inst["id"].(string), provToken, nil); strings.Contains(string(g.Raw), secret) || g.Body["delivery"] == nil {
		t.Errorf("instance read: %s", g.Raw)
	}
	if again := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "a", "delivery": d}, "Idempotency-Key", "k"); again.Status != 200 || string(again.Raw) != string(r.Raw) {
		t.Errorf("replay: %d %s", again.Status, again.Raw)
	}
}

func TestSpec8Async02FailedVerificationCommitsNothing(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	rc.bare = true // a bare 200 is no verification
	d, secret := rc.register()
	r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "a", "delivery": d}, "Idempotency-Key", "k")
	if r.Status != 422 || r.errorCode() != "webhook_verification_failed" || strings.Contains(string(r.Raw), secret) {
		t.Fatalf("create with a receiver that does not echo: %d %s", r.Status, r.Raw)
	}
	h.store.mu.Lock()
	for k := range h.store.vals {
		if strings.HasPrefix(k, "inst:") || strings.HasPrefix(k, "cred:") {
			t.Errorf("a failed verification left %s", k)
		}
	}
	h.store.mu.Unlock()
	rc.bare = false
	if r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "a", "delivery": d}, "Idempotency-Key", "k"); r.Status != 201 {
		t.Fatalf("retry with the same key once the receiver answers: %d %s", r.Status, r.Raw)
	}
	// A failed replacement changes nothing, the name included.
	id, _ := h.asyncInstance(rc)
	rc.bare = true
	d2, _ := rc.register()
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "renamed", "delivery": d2}, "Idempotency-Key", "u"); r.Status != 422 {
		t.Errorf("failed replacement: %d %s", r.Status, r.Raw)
	}
	if g := h.do("GET", "/v1/instances/"+id, provToken, nil); g.str("name") != "async" || g.Body["delivery"].(map[string]any)["registration_id"] == d2["registration_id"] {
		t.Errorf("after a failed replacement: %s", g.Raw)
	}
}

func TestSpec8Async03NotificationWithEveryDecision(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	id, cred := h.asyncInstance(rc)
	decided := h.create(cred, refund())
	cancelled := h.create(cred, refund())
	immediate := h.create(cred, map[string]any{"tool": "denied_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.clock.Advance(time.Minute)
	if _, err := h.asks.Decide(t.Context(), decided.str("id"), pending.Approved, "U0ANA", ""); err != nil {
		t.Fatal(err)
	}
	h.do("DELETE", "/v1/requests/"+cancelled.str("id"), cred, nil)
	h.turn() // the scan records the approval nobody has read yet
	h.turn()
	got := map[string]map[string]string{}
	for _, d := range rc.deliveries() {
		var m map[string]string
		_ = json.Unmarshal(d.body, &m)
		got[m["request_id"]] = m
	}
	for _, rq := range []reply{decided, cancelled, immediate} {
		m, ok := got[rq.str("id")]
		if !ok {
			t.Errorf("no notification for %s (%s)", rq.str("id"), rq.str("status"))
			continue
		}
		read := h.do("GET", "/v1/requests/"+rq.str("id"), cred, nil)
		if m["type"] != "request.resolved" || m["instance_id"] != id || m["created_at"] != read.decision()["decided_at"] || m["id"] != eventID(rq.str("id")) {
			t.Errorf("event %v for %s", m, read.Raw)
		}
	}
	// Reading and replaying make no new event.
	n := len(rc.deliveries())
	h.do("GET", "/v1/requests/"+decided.str("id"), cred, nil)
	h.turn()
	if len(rc.deliveries()) != n {
		t.Errorf("a read made another delivery: %d, want %d", len(rc.deliveries()), n)
	}
}

func TestSpec8Async04SignedStableAcrossRetries(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	_, cred := h.asyncInstance(rc)
	rc.fail = []int{500, 502}
	c := h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	for range 3 {
		h.turn()
		h.clock.Advance(time.Hour) // past any back-off
	}
	ds := rc.deliveries()
	if len(ds) != 3 {
		t.Fatalf("%d attempts, want 3 (two failures, then the acknowledgement)", len(ds))
	}
	for _, d := range ds[1:] {
		if d.id != ds[0].id || string(d.body) != string(ds[0].body) {
			t.Errorf("a retry changed the event: %s %s, first %s %s", d.id, d.body, ds[0].id, ds[0].body)
		}
		if d.ts == ds[0].ts || d.sig == ds[0].sig {
			t.Errorf("a retry reused the attempt's timestamp or signature")
		}
	}
	if !strings.Contains(string(ds[0].body), c.str("id")) {
		t.Errorf("event %s is not the request's", ds[0].body)
	}
	h.turn()
	if len(rc.deliveries()) != 3 {
		t.Error("an acknowledged event was sent again")
	}
}

func TestSpec8Async05RetryScheduleAndWindow(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	_, cred := h.asyncInstance(rc)
	rc.fail, rc.retry = []int{503}, "600"
	h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.turn()
	h.clock.Advance(599 * time.Second)
	h.turn()
	if n := len(rc.deliveries()); n != 1 {
		t.Fatalf("%d attempts before Retry-After passed, want 1", n)
	}
	h.clock.Advance(2 * time.Second)
	h.turn()
	if n := len(rc.deliveries()); n != 2 {
		t.Fatalf("%d attempts after Retry-After, want 2", n)
	}
	// A receiver that never acknowledges: retries end 168 h after the decision.
	rc2 := newReceiver(t, h.clock)
	_, cred2 := h.asyncInstance(rc2)
	rc2.failNext(10000, 500)
	h.create(cred2, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	for range 400 {
		h.turn()
		h.clock.Advance(time.Hour)
	}
	n := len(rc2.deliveries())
	if n < 10 || n > 170 {
		t.Errorf("%d attempts over 400 h, want back-off capped at an hour within the 168 h window", n)
	}
	last := rc2.deliveries()[n-1]
	ts, _ := strconv.ParseInt(last.ts, 10, 64)
	var ev map[string]string
	_ = json.Unmarshal(last.body, &ev)
	created, _ := time.Parse(time.RFC3339, ev["created_at"])
	if time.Unix(ts, 0).Sub(created) >= DeliveryWindow {
		t.Errorf("an attempt at %s, past the window ending %s", time.Unix(ts, 0).UTC(), created.Add(DeliveryWindow))
	}
}

// An attempt begun in the window's last AttemptTimeout ends with the
// window (7_async.md: every attempt ends by the retry deadline): its
// request carries the deadline of the time left, not AttemptTimeout.
func TestSpec7AttemptEndsByTheRetryDeadline(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	_, cred := h.asyncInstance(rc)
	rc.failNext(1000, 500)
	h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.turn() // the first attempt, refused
	var mu sync.Mutex
	var left []time.Duration // the time each attempt's request had, when it was sent
	h.srv.hooks.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if d, ok := r.Context().Deadline(); ok {
			mu.Lock()
			left = append(left, time.Until(d))
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	const timeLeft = 3 * time.Second
	h.clock.Advance(DeliveryWindow - timeLeft) // the decision was at create, on this clock
	h.turn()
	mu.Lock()
	defer mu.Unlock()
	if len(left) != 1 {
		t.Fatalf("%d attempts in the window's last %s, want 1", len(left), timeLeft)
	}
	if left[0] > timeLeft {
		t.Errorf("the last attempt may run %s, past the retry deadline %s away", left[0].Round(time.Millisecond), timeLeft)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSpec8Async06ReplacementTakesQueuedNotifications(t *testing.T) {
	h := newHarness(t)
	old := newReceiver(t, h.clock)
	id, cred := h.asyncInstance(old)
	old.fail = []int{500, 500, 500}
	h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.turn()
	first := old.deliveries()[0]
	replacement := newReceiver(t, h.clock)
	d, _ := replacement.register()
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"delivery": d}, "Idempotency-Key", "move"); r.Status != 200 {
		t.Fatalf("replace: %d %s", r.Status, r.Raw)
	}
	h.clock.Advance(time.Hour)
	h.turn()
	got := replacement.deliveries()
	if len(got) != 1 || got[0].id != first.id || string(got[0].body) != string(first.body) {
		t.Fatalf("the replacement received %d, want the queued event unchanged", len(got))
	}
	// Removing delivery ends it: no more events.
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"delivery": nil}, "Idempotency-Key", "rm"); r.Status != 200 || r.Body["delivery"] != nil {
		t.Fatalf("remove: %d %s", r.Status, r.Raw)
	}
	h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.turn()
	if len(replacement.deliveries()) != 1 || len(old.deliveries()) != 1 {
		t.Error("an event was sent after delivery was removed")
	}
}

func TestSpec8Async07GraceRetention(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	_, cred := h.asyncInstance(rc)
	rc.failNext(1000, 500)
	key := recordid.NewUUID()
	c := h.do("POST", "/v1/requests", cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"}, "Idempotency-Key", key)
	for range 170 { // retries run to the end of the window
		h.turn()
		h.clock.Advance(time.Hour)
	}
	// 168 h + 22 h after the decision: delivery ended ~22 h ago, and the
	// request, its key and its event are still kept.
	h.clock.Advance(20 * time.Hour)
	if r := h.do("GET", "/v1/requests/"+c.str("id"), cred, nil); r.Status != 200 {
		t.Errorf("the request within the grace period: %d", r.Status)
	}
	if r := h.do("POST", "/v1/requests", cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"}, "Idempotency-Key", key); r.Status != 200 || r.str("id") != c.str("id") {
		t.Errorf("its key within the grace period: %d %s", r.Status, r.Raw)
	}
	if _, ok, _ := h.store.Get(t.Context(), ntfKey(eventID(c.str("id")))); !ok {
		t.Error("its event is gone within the grace period")
	}
}

func TestSpec8Async08DestinationRestrictions(t *testing.T) {
	h := newHarness(t)
	strict, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "platform", Token: provToken}},
		Window: time.Minute, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, h.clock)
	d, _ := rc.register()
	for _, tc := range []struct{ url, code string }{
		{rc.srv.URL + "/x", "invalid_webhook_url"},                // plain http
		{"https://127.0.0.1/x", "invalid_webhook_url"},            // loopback
		{"https://10.1.2.3/x", "invalid_webhook_url"},             // private
		{"https://169.254.169.254/latest", "invalid_webhook_url"}, // metadata
		{"https://[::1]/x", "invalid_webhook_url"},                // IPv6 loopback
		{"https://[fd00::1]/x", "invalid_webhook_url"},            // IPv6 unique local
		{"https://user:pw@example.com/x", "invalid_webhook_url"},
		{"https://example.com/x#frag", "invalid_webhook_url"},
		{"https://localhost:1/x", "webhook_verification_failed"}, // a name: refused at dial, on the address
	} {
		dd := map[string]any{"type": "webhook", "url": tc.url, "registration_id": d["registration_id"], "signing_secret": d["signing_secret"]}
		code, body := httptestJSON(t, strict, "POST", "/v1/instances", provToken, map[string]any{"delivery": dd})
		if !strings.Contains(body, `"code":"`+tc.code+`"`) {
			t.Errorf("%s: %d %s, want %s", tc.url, code, body, tc.code)
		}
	}
	if n := len(rc.deliveries()); n != 0 {
		t.Errorf("%d messages reached a refused destination", n)
	}
	// Verifications are limited per provisioner.
	limited := false
	for range verifyPerMinute + 1 {
		d, _ := rc.register()
		r := h.do("POST", "/v1/instances", provToken, map[string]any{"delivery": d}, "Idempotency-Key", recordid.NewUUID())
		limited = limited || r.Status == http.StatusTooManyRequests
	}
	if !limited {
		t.Errorf("%d verifications in a minute were all made", verifyPerMinute+1)
	}
}

// Messages to one receiver host are limited per minute across instances
// and replicas: the verification counts, a delivery over the limit waits
// for the next minute (not counted as a failed attempt), and a
// verification over it is refused with 429.
func TestAsyncPerHostLimit(t *testing.T) {
	h := newHarness(t)
	replica := func() *Server {
		s, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "platform", Token: provToken}},
			Window: time.Minute, Now: h.clock.Now, AllowPrivateWebhooks: true, HostMessagesPerMinute: 3})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := replica(), replica()
	rc := newReceiver(t, h.clock)
	d, _ := rc.register()
	code, body := httptestJSON(t, a, "POST", "/v1/instances", provToken, map[string]any{"delivery": d})
	if code != http.StatusCreated {
		t.Fatalf("provision: %d %s", code, body)
	}
	var prov struct {
		Credential struct{ Token string } `json:"credential"`
	}
	_ = json.Unmarshal([]byte(body), &prov)
	for range 3 {
		if code, body := httptestJSON(t, a, "POST", "/v1/requests", prov.Credential.Token, map[string]any{"tool": "denied_tool", "arguments": map[string]any{}, "timeout": "5m"}); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	turn := func(s *Server) {
		if err := s.scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := s.deliverDue(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	verified := len(rc.deliveries())
	turn(a)
	turn(b)
	if got := len(rc.deliveries()) - verified; got != 2 {
		t.Errorf("%d events delivered in the verification's minute, want 2 (3 messages a minute, both replicas counting together)", got)
	}
	d2, _ := rc.register()
	if code, body := httptestJSON(t, b, "POST", "/v1/instances", provToken, map[string]any{"delivery": d2}); code != http.StatusTooManyRequests || !strings.Contains(body, "destination_rate_limited") {
		t.Errorf("a fourth message to the host in a minute: %d %s", code, body)
	}
	h.clock.Advance(time.Minute)
	turn(b)
	if got := len(rc.deliveries()) - verified; got != 3 {
		t.Errorf("%d events delivered a minute later, want all 3", got)
	}
}

// Deleting the instance ends its delivery and sends no cancellations.
func TestAsyncDeletionEndsDelivery(t *testing.T) {
	h := newHarness(t)
	rc := newReceiver(t, h.clock)
	id, cred := h.asyncInstance(rc)
	rc.fail = []int{500}
	h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	h.create(cred, refund()) // pending: cancelled by the deletion, unnotified
	h.turn()
	h.do("DELETE", "/v1/instances/"+id, provToken, nil)
	h.clock.Advance(time.Hour)
	h.turn()
	if n := len(rc.deliveries()); n != 1 {
		t.Errorf("%d deliveries, want only the attempt before the deletion", n)
	}
}

func httptestJSON(t *testing.T, s *Server, method, path, token string, body any) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(string(jsonBytes(body))))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", recordid.NewUUID())
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// The destination check is made on the address actually dialled: a name
// that resolves to loopback is refused at connect time, whatever its URL.
func TestWebhookClientRefusesNonPublicAtDial(t *testing.T) {
	rc := newReceiver(t, testclock.New(time.Now()))
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":")+1:]
	for _, u := range []string{"http://localhost:" + port + "/x", rc.srv.URL + "/x"} {
		resp, err := webhookClient(false).Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: connected to a loopback receiver", u)
		} else if !strings.Contains(err.Error(), "non-public address") {
			t.Errorf("%s: %v, want the destination check's refusal", u, err)
		}
	}
	resp, err := webhookClient(true).Get(rc.srv.URL + "/x")
	if err != nil {
		t.Fatalf("allowed private receivers: %v", err)
	}
	resp.Body.Close()
}

// A request decided by a person just before its instance's receiver is
// replaced, its event not yet recorded (the delivery loop records it on
// its next turn), still gets its event, at the replacement: delivery
// never stopped, so the decision was made whilst delivery was configured.
func TestReplacementKeepsEventsNotYetRecorded(t *testing.T) {
	h := newHarness(t)
	old := newReceiver(t, h.clock)
	id, cred := h.asyncInstance(old)
	c := h.create(cred, refund())
	if c.str("status") != "pending" {
		t.Fatalf("create: %s", c.Raw)
	}
	h.clock.Advance(time.Second)
	if _, err := h.asks.Decide(t.Context(), c.str("id"), pending.Denied, "U0ANA", "not today"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Second)
	replacement := newReceiver(t, h.clock)
	d, _ := replacement.register()
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"delivery": d}, "Idempotency-Key", "move"); r.Status != 200 {
		t.Fatalf("replace: %d %s", r.Status, r.Raw)
	}
	h.turn()
	if got := replacement.deliveries(); len(got) != 1 || !strings.Contains(string(got[0].body), c.str("id")) {
		t.Fatalf("the replacement received %d events, want the decided request's one", len(got))
	}
	if n := len(old.deliveries()); n != 0 {
		t.Errorf("the replaced receiver received %d events", n)
	}
}
