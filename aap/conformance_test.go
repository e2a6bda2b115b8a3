package aap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
)

// One test per provider requirement of the specification's
// 8_security.md ("A conforming provider must: …"), numbered as there.

func TestSpec8Provider01AuthenticateAndAuthorize(t *testing.T) {
	h := newHarness(t)
	_, credA := h.instance("a")
	_, credB := h.instance("b")
	mine := h.create(credA, refund())
	if mine.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", mine.Status, mine.Raw)
	}
	id := mine.str("id")
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"no credential", "GET", "/v1/requests/" + id, "", nil, 401},
		{"unknown credential", "GET", "/v1/requests/" + id, "aap_nobody", nil, 401},
		{"a provisioner token makes no request", "POST", "/v1/requests", provToken, refund(), 403},
		{"a provisioner token reads no request", "GET", "/v1/requests/" + id, provToken, nil, 403},
		{"an instance credential manages no instance", "POST", "/v1/instances", credA, map[string]any{}, 403},
		{"another instance's request is unknown", "GET", "/v1/requests/" + id, credB, nil, 404},
		{"another instance cannot cancel it", "DELETE", "/v1/requests/" + id, credB, nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.token, tc.body, "Idempotency-Key", recordid.New())
			if r.Status != tc.status {
				t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, r.Status, r.Raw, tc.status)
			}
		})
	}
	// A credential is read from the Authorization header only: in the URL
	// it is refused, never used.
	r := h.do("GET", "/v1/requests/"+id+"?access_token="+credA, "", nil)
	if r.Status != http.StatusBadRequest || r.errorCode() != "credential_in_url" {
		t.Errorf("credential in the URL: %d %s", r.Status, r.Raw)
	}
	if strings.Contains(string(r.Raw), credA) {
		t.Errorf("an error repeats the credential: %s", r.Raw)
	}
	if a, _ := h.asks.Get(t.Context(), id); a.Status != pending.StatusPending {
		t.Errorf("refused calls changed the request: %s", a.Status)
	}
}

func TestSpec8Provider02CreateRetrieveLongPollCancel(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("poller")
	c := h.create(cred, refund())
	if c.Status != http.StatusCreated || c.str("status") != "pending" || c.decision() != nil {
		t.Fatalf("create: %d %s", c.Status, c.Raw)
	}
	id := c.str("id")
	// The request is the Ask of the same id: what the Ask API lists.
	if a, err := h.asks.Get(t.Context(), id); err != nil || a.Tool != "issue_refund" {
		t.Fatalf("the Ask %s: %+v, %v", id, a, err)
	}
	if r := h.do("GET", "/v1/requests/"+id, cred, nil); r.Status != 200 || r.str("status") != "pending" {
		t.Fatalf("get: %d %s", r.Status, r.Raw)
	}
	// A long poll answers with the decision made while it waits (or just
	// before it began: it reads the Ask after it starts watching).
	polled := make(chan reply, 1)
	go func() { polled <- h.do("GET", "/v1/requests/"+id+"?wait=30s", cred, nil) }()
	if _, err := h.asks.Decide(t.Context(), id, pending.Denied, "U0ANA", "use the refunds queue"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-polled:
		if r.Status != 200 || r.str("status") != "denied" || r.decision()["note"] != "use the refunds queue" {
			t.Errorf("long poll answered %d %s", r.Status, r.Raw)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the long poll did not answer the decision")
	}
	// Cancellation: a pending request ends cancelled, in-flight polls
	// return it, and a repeat returns the same.
	c2 := h.create(cred, refund())
	id2 := c2.str("id")
	go func() { polled <- h.do("GET", "/v1/requests/"+id2+"?wait=30s", cred, nil) }()
	d := h.do("DELETE", "/v1/requests/"+id2, cred, nil)
	if d.Status != 200 || d.str("status") != "cancelled" || d.decision()["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", d.Status, d.Raw)
	}
	select {
	case r := <-polled:
		if r.str("status") != "cancelled" {
			t.Errorf("the long poll of a cancelled request answered %s", r.Raw)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the long poll did not end at cancellation")
	}
	if again := h.do("DELETE", "/v1/requests/"+id2, cred, nil); again.Status != 200 || string(again.Raw) != string(d.Raw) {
		t.Errorf("repeated cancel: %d %s, want the same %s", again.Status, again.Raw, d.Raw)
	}
	if a, _ := h.asks.Get(t.Context(), id2); a.Status != pending.Status(pending.Cancelled) {
		t.Errorf("the Ask of the cancelled request is %s", a.Status)
	}
	// A wait over 30 s is capped, not refused; a malformed one is refused.
	if r := h.do("GET", "/v1/requests/"+id+"?wait=5m", cred, nil); r.Status != 200 {
		t.Errorf("wait=5m: %d %s", r.Status, r.Raw)
	}
	for _, bad := range []string{"0s", "-1s", "1.5s", "30", "1d", "abc"} {
		if r := h.do("GET", "/v1/requests/"+id+"?wait="+bad, cred, nil); r.Status != 400 {
			t.Errorf("wait=%s: %d, want 400", bad, r.Status)
		}
	}
}

func TestSpec8Provider03IdempotencyKeys(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("retrier")
	key := recordid.NewUUID()
	first := h.do("POST", "/v1/requests", cred, `{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900},"timeout":"30m"}`, "Idempotency-Key", key)
	if first.Status != 201 {
		t.Fatalf("create: %d %s", first.Status, first.Raw)
	}
	// The same parsed fields, other whitespace and member order: a replay.
	again := h.do("POST", "/v1/requests", cred, "{ \"timeout\": \"30m\", \"arguments\": {\"amount\": 4900, \"payment_id\": \"payment_123\"},\n\"tool\":\"issue_refund\" }", "Idempotency-Key", key)
	if again.Status != 200 || again.str("id") != first.str("id") {
		t.Errorf("replay: %d %s, want 200 with id %s", again.Status, again.Raw, first.str("id"))
	}
	other := h.do("POST", "/v1/requests", cred, `{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":9900},"timeout":"30m"}`, "Idempotency-Key", key)
	if other.Status != 409 || other.errorCode() != "idempotency_conflict" {
		t.Errorf("changed input, same key: %d %s", other.Status, other.Raw)
	}
	if now := h.do("GET", "/v1/requests/"+first.str("id"), cred, nil); !strings.Contains(string(now.Raw), `"amount":4900`) {
		t.Errorf("the conflicting submission changed the original: %s", now.Raw)
	}
	if n := len(h.asker.Calls()); n != 1 {
		t.Errorf("%d Asks were judged for one key, want 1", n)
	}
	// Keys are the instance's: another instance's same key is its own.
	_, cred2 := h.instance("other")
	if r := h.do("POST", "/v1/requests", cred2, refund(), "Idempotency-Key", key); r.Status != 201 {
		t.Errorf("the same key from another instance: %d %s", r.Status, r.Raw)
	}
	// A replay of a request that ended returns it terminal.
	if _, err := h.asks.Decide(t.Context(), first.str("id"), pending.Approved, "U0ANA", ""); err != nil {
		t.Fatal(err)
	}
	ended := h.do("POST", "/v1/requests", cred, `{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900},"timeout":"30m"}`, "Idempotency-Key", key)
	if ended.Status != 200 || ended.str("status") != "approved" {
		t.Errorf("replay after approval: %d %s", ended.Status, ended.Raw)
	}
	if r := h.do("POST", "/v1/requests", cred, refund()); r.Status != 400 || r.errorCode() != "missing_idempotency_key" {
		t.Errorf("no Idempotency-Key: %d %s", r.Status, r.Raw)
	}
}

func TestSpec8Provider04OneTerminalOutcome(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("racer")
	seen := map[string]int{}
	for i := range 20 {
		c := h.create(cred, refund())
		id := c.str("id")
		if i%2 == 1 {
			h.clock.Advance(30 * time.Minute) // past the deadline: expiry may win too, and approvals come late
		}
		var wg sync.WaitGroup
		var cancelled reply
		wg.Go(func() { _, _ = h.asks.Decide(t.Context(), id, pending.Approved, "U0ANA", "") })
		wg.Go(func() { _, _ = h.asks.Decide(t.Context(), id, pending.Denied, "U0BEN", "") })
		wg.Go(func() { cancelled = h.do("DELETE", "/v1/requests/"+id, cred, nil) })
		wg.Go(func() { _, _ = h.asks.Sweep(t.Context(), h.clock.Now()) })
		wg.Wait()
		a, err := h.asks.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := map[pending.Status]string{pending.Status(pending.Approved): "approved", pending.Status(pending.Denied): "denied",
			pending.Status(pending.Expired): "expired", pending.Status(pending.Cancelled): "cancelled"}[a.Status]
		if a.DecisionReason == reasonDeadlineAt {
			// The DELETE found the request past its deadline_at and
			// expired it (Server.expire): askops' Ask ends cancelled,
			// the request expired.
			want = "expired"
		}
		seen[want]++
		for range 3 {
			if r := h.do("GET", "/v1/requests/"+id, cred, nil); r.str("status") != want {
				t.Fatalf("round %d: the Ask ended %s, the request reads %s", i, a.Status, r.Raw)
			}
		}
		switch {
		case want == "cancelled" && cancelled.Status != 200, want != "cancelled" && (cancelled.Status != 409 || cancelled.errorCode() != "already_terminal"):
			t.Fatalf("round %d: ended %s, DELETE answered %d %s", i, want, cancelled.Status, cancelled.Raw)
		}
	}
	t.Logf("outcomes over the rounds: %v", seen)
}

func TestSpec8Provider05ExpireAtDeadline(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("slow")
	c := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "1m"})
	if c.str("deadline_at") != "2026-09-16T12:01:00Z" {
		t.Errorf("deadline_at %q, want created_at + 1m", c.str("deadline_at"))
	}
	h.clock.Advance(time.Minute)
	if _, err := h.asks.Sweep(t.Context(), h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	r := h.do("GET", "/v1/requests/"+c.str("id"), cred, nil)
	if r.str("status") != "expired" || r.decision()["expires_at"] != nil {
		t.Errorf("after the deadline: %s", r.Raw)
	}
	// A person's click after the deadline does not approve it.
	if _, err := h.asks.Decide(t.Context(), c.str("id"), pending.Approved, "U0ANA", ""); err == nil {
		t.Error("an expired request was approved")
	}
	// A timeout longer than askops' limit is shortened, never lengthened.
	long := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "24h"})
	if long.str("timeout") != "24h" || long.str("deadline_at") != "2026-09-16T12:11:00Z" {
		t.Errorf("timeout 24h: timeout %q deadline_at %q, want 24h and askops' 10m", long.str("timeout"), long.str("deadline_at"))
	}
}

// A request the policy settles at create still has the window it was
// given (deadline_at after created_at, shortened to askops' limit):
// adapters refuse an answer whose deadline is not after its creation.
func TestDecidedAtCreateKeepsItsWindow(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("policy")
	for _, tc := range []struct{ tool, timeout, deadline string }{
		{"allowed_tool", "1m", "2026-09-16T12:01:00Z"},
		{"denied_tool", "90s", "2026-09-16T12:01:30Z"},
		{"allowed_tool", "24h", "2026-09-16T12:10:00Z"},
	} {
		r := h.create(cred, map[string]any{"tool": tc.tool, "arguments": map[string]any{}, "timeout": tc.timeout})
		if r.str("created_at") != "2026-09-16T12:00:00Z" || r.str("deadline_at") != tc.deadline || r.str("timeout") != tc.timeout {
			t.Errorf("%s %s: %s, want deadline_at %s", tc.tool, tc.timeout, r.Raw, tc.deadline)
		}
		if again := h.do("GET", "/v1/requests/"+r.str("id"), cred, nil); again.str("deadline_at") != tc.deadline {
			t.Errorf("%s %s read again: %s", tc.tool, tc.timeout, again.Raw)
		}
	}
}

func TestSpec8Provider06ConsistentStates(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("shapes")
	p := h.create(cred, refund())
	allowed := h.create(cred, map[string]any{"tool": "allowed_tool", "arguments": map[string]any{}, "timeout": "5m"})
	denied := h.create(cred, map[string]any{"tool": "denied_tool", "arguments": map[string]any{}, "timeout": "5m"})
	for _, r := range []reply{p, allowed, denied} {
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Raw)
		}
		checkShape(t, r)
	}
	if allowed.str("status") != "approved" || !strings.Contains(allowed.decision()["note"].(string), "askops policy") ||
		!strings.Contains(allowed.decision()["note"].(string), "rules[0]") {
		t.Errorf("a policy allow: %s", allowed.Raw)
	}
	if denied.str("status") != "denied" || !strings.Contains(denied.decision()["note"].(string), "askops policy") {
		t.Errorf("a policy deny: %s", denied.Raw)
	}
	if h.pendingAsks() != 1 {
		t.Errorf("%d Asks pending, want only the one the policy asked about", h.pendingAsks())
	}
	// Unknown paths and methods answer in the envelope too.
	if r := h.do("GET", "/v1/nothing", cred, nil); r.Status != 404 {
		t.Errorf("unknown path: %d", r.Status)
	}
	if r := h.do("PUT", "/v1/requests/"+p.str("id"), cred, nil); r.Status != 405 {
		t.Errorf("PUT: %d", r.Status)
	}
	// askops' store unreachable is a 503, never a denial.
	r := h.create(cred, map[string]any{"tool": "unrecordable", "arguments": map[string]any{}, "timeout": "5m"})
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || r.Body["status"] != nil {
		t.Errorf("store down: %d %s", r.Status, r.Raw)
	}
}

// checkShape holds the ApprovalRequest's invariants.
func checkShape(t *testing.T, r reply) {
	t.Helper()
	for _, k := range []string{"id", "tool", "timeout", "status", "created_at", "deadline_at"} {
		if r.str(k) == "" {
			t.Errorf("%s missing: %s", k, r.Raw)
		}
	}
	for _, k := range []string{"created_at", "deadline_at"} {
		if _, err := time.Parse(time.RFC3339, r.str(k)); err != nil || !strings.HasSuffix(r.str(k), "Z") {
			t.Errorf("%s %q is not a UTC RFC 3339 timestamp", k, r.str(k))
		}
	}
	d := r.decision()
	if r.str("status") == "pending" {
		if d != nil {
			t.Errorf("a pending request has a decision: %s", r.Raw)
		}
		return
	}
	if d == nil || d["status"] != r.str("status") {
		t.Fatalf("terminal request without its decision: %s", r.Raw)
	}
	exp, hasExp := d["expires_at"].(string)
	if (r.str("status") == "approved") != hasExp {
		t.Errorf("expires_at present %v for status %s", hasExp, r.str("status"))
	}
	if hasExp {
		e, _ := time.Parse(time.RFC3339, exp)
		at, _ := time.Parse(time.RFC3339, d["decided_at"].(string))
		if !e.After(at) {
			t.Errorf("expires_at %s not after decided_at %s", exp, d["decided_at"])
		}
	}
}

func TestSpec8Provider07ImmutableToolAndArguments(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("exact")
	body := `{"tool":"issue_refund","arguments":{"zeta":1,"Alpha":[1,2.50,{"k":null}],"amount":4900},"timeout":"30m"}`
	c := h.do("POST", "/v1/requests", cred, body, "Idempotency-Key", "k1")
	want := `"arguments":{"zeta":1,"Alpha":[1,2.50,{"k":null}],"amount":4900}`
	if !strings.Contains(string(c.Raw), want) {
		t.Errorf("arguments not as submitted:\n%s\nwant %s", c.Raw, want)
	}
	if calls := h.asker.Calls(); len(calls) != 1 || string(calls[0].Arguments) != `{"zeta":1,"Alpha":[1,2.50,{"k":null}],"amount":4900}` || calls[0].Tool != "issue_refund" {
		t.Errorf("judged %+v", calls)
	}
	h.do("POST", "/v1/requests", cred, strings.Replace(body, "4900", "1", 1), "Idempotency-Key", "k1")
	if r := h.do("GET", "/v1/requests/"+c.str("id"), cred, nil); !strings.Contains(string(r.Raw), want) {
		t.Errorf("arguments changed by a conflicting replay: %s", r.Raw)
	}
}

func TestSpec8Provider08InstanceLifecycle(t *testing.T) {
	h := newHarness(t)
	key := recordid.NewUUID()
	c := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "codex-chris-laptop"}, "Idempotency-Key", key)
	if c.Status != 201 {
		t.Fatalf("provision: %d %s", c.Status, c.Raw)
	}
	inst := c.Body["instance"].(map[string]any)
	id := inst["id"].(string)
	cred := c.Body["credential"].(map[string]any)["token"].(string)
	if !recordid.ValidUUID(id) || inst["name"] != "codex-chris-laptop" {
		t.Errorf("instance %s", c.Raw)
	}
	replay := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "codex-chris-laptop"}, "Idempotency-Key", key)
	if replay.Status != 200 || string(replay.Raw) != string(c.Raw) {
		t.Errorf("replay: %d %s, want 200 and the same instance and credential", replay.Status, replay.Raw)
	}
	if r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "other"}, "Idempotency-Key", key); r.Status != 409 || r.errorCode() != "idempotency_conflict" {
		t.Errorf("changed input: %d %s", r.Status, r.Raw)
	}
	g := h.do("GET", "/v1/instances/"+id, provToken, nil)
	if g.Status != 200 || strings.Contains(string(g.Raw), cred) || g.str("name") != "codex-chris-laptop" {
		t.Errorf("get: %d %s", g.Status, g.Raw)
	}
	u := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "codex-chris-desktop"}, "Idempotency-Key", "u1")
	if u.Status != 200 || u.str("name") != "codex-chris-desktop" {
		t.Errorf("update: %d %s", u.Status, u.Raw)
	}
	if r := h.create(cred, refund()); r.Status != 201 {
		t.Errorf("the credential after a rename: %d", r.Status)
	}
	// The credential is stored hashed: no record holds it.
	h.store.mu.Lock()
	for k, v := range h.store.vals {
		if strings.Contains(string(v.val), cred) || strings.Contains(k, cred) {
			t.Errorf("the store keeps the credential in %s", k)
		}
	}
	h.store.mu.Unlock()
	if r := h.do("POST", "/v1/instances", provToken, map[string]any{"delivery": map[string]any{"type": "socket"}}, "Idempotency-Key", "d1"); r.Status != 400 || r.errorCode() != "unsupported_delivery_type" {
		t.Errorf("delivery of another type: %d %s", r.Status, r.Raw)
	}
	// Another provisioner's instance is unknown.
	other, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "other", Token: "another-provisioner-token-000"}}, Window: time.Minute, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptestDo(t, other, "GET", "/v1/instances/"+id, "another-provisioner-token-000")
	if rec != 404 {
		t.Errorf("another provisioner reads the instance: %d", rec)
	}
}

func TestSpec8Provider09Retention(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("keeper")
	key := recordid.NewUUID()
	c := h.do("POST", "/v1/requests", cred, refund(), "Idempotency-Key", key)
	if _, err := h.asks.Decide(t.Context(), c.str("id"), pending.Denied, "U0ANA", "no"); err != nil {
		t.Fatal(err)
	}
	// 168 h after the decision (and after the deadline), the request, its
	// decision and its key still answer.
	h.clock.Advance(30*time.Minute + 168*time.Hour)
	if _, err := h.asks.Sweep(t.Context(), h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if r := h.do("GET", "/v1/requests/"+c.str("id"), cred, nil); r.Status != 200 || r.str("status") != "denied" {
		t.Errorf("168 h later: %d %s", r.Status, r.Raw)
	}
	if r := h.do("POST", "/v1/requests", cred, refund(), "Idempotency-Key", key); r.Status != 200 || r.str("id") != c.str("id") {
		t.Errorf("the key 168 h later: %d %s", r.Status, r.Raw)
	}
	if _, err := h.asks.Get(t.Context(), c.str("id")); err != nil {
		t.Errorf("askops' Ask is gone 168 h after its decision: %v", err)
	}
}

func TestSpec8Provider10FixedExpiresAt(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("fixed")
	c := h.create(cred, refund())
	id := c.str("id")
	h.clock.Advance(2 * time.Minute)
	if _, err := h.asks.Decide(t.Context(), id, pending.Approved, "U0ANA", "the duplicate charge is confirmed"); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Minute) // read later than the decision
	first := h.do("GET", "/v1/requests/"+id, cred, nil)
	d := first.decision()
	if d["decided_at"] != "2026-09-16T12:02:00Z" || d["expires_at"] != "2026-09-16T12:07:00Z" || d["note"] != "the duplicate charge is confirmed" {
		t.Errorf("approved decision %s, want decided 12:02, expires 12:07 (5m window), the approver's reason as note", first.Raw)
	}
	// Later reads, a replay, and a serve with another window all agree.
	h.clock.Advance(time.Hour)
	later := h.server(time.Hour)
	if code, body := httptestBody(t, later, "GET", "/v1/requests/"+id, cred); code != 200 || !strings.Contains(body, `"expires_at":"2026-09-16T12:07:00Z"`) {
		t.Errorf("read again by a serve with another window: %d %s", code, body)
	}
	if again := h.do("GET", "/v1/requests/"+id, cred, nil); string(again.Raw) != string(first.Raw) {
		t.Errorf("a later read differs:\n%s\n%s", again.Raw, first.Raw)
	}
}

func TestSpec8Provider11DeleteInstance(t *testing.T) {
	h := newHarness(t)
	id, cred := h.instance("retired")
	waiting := h.create(cred, refund())
	done := h.create(cred, refund())
	if _, err := h.asks.Decide(t.Context(), done.str("id"), pending.Approved, "U0ANA", ""); err != nil {
		t.Fatal(err)
	}
	if r := h.do("GET", "/v1/requests/"+done.str("id"), cred, nil); r.str("status") != "approved" {
		t.Fatalf("approved: %s", r.Raw)
	}
	if r := h.do("DELETE", "/v1/instances/"+id, provToken, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if r := h.do("GET", "/v1/requests/"+waiting.str("id"), cred, nil); r.Status != 401 {
		t.Errorf("the deleted instance's credential: %d, want 401", r.Status)
	}
	if a, _ := h.asks.Get(t.Context(), waiting.str("id")); a.Status != pending.Status(pending.Cancelled) || a.DecisionReason != reasonInstanceDeleted {
		t.Errorf("its pending request: %s %q, want cancelled", a.Status, a.DecisionReason)
	}
	if a, _ := h.asks.Get(t.Context(), done.str("id")); a.Status != pending.Status(pending.Approved) {
		t.Errorf("its approved request became %s", a.Status)
	}
	if r := h.do("GET", "/v1/instances/"+id, provToken, nil); r.Status != 404 {
		t.Errorf("get after delete: %d", r.Status)
	}
	if r := h.do("DELETE", "/v1/instances/"+id, provToken, nil); r.Status != 204 {
		t.Errorf("repeated delete: %d", r.Status)
	}
	if r := h.do("DELETE", "/v1/instances/"+recordid.NewUUID(), provToken, nil); r.Status != 404 {
		t.Errorf("delete unknown: %d", r.Status)
	}
}

func TestSpec8Provider12RetrySafeUpdatesAndDeletes(t *testing.T) {
	h := newHarness(t)
	key := recordid.NewUUID()
	c := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "one"}, "Idempotency-Key", key)
	id := c.Body["instance"].(map[string]any)["id"].(string)
	first := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "two"}, "Idempotency-Key", "p1")
	h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "three"}, "Idempotency-Key", "p2")
	replay := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "two"}, "Idempotency-Key", "p1")
	if replay.Status != 200 || string(replay.Raw) != string(first.Raw) {
		t.Errorf("update replay: %d %s, want the original %s", replay.Status, replay.Raw, first.Raw)
	}
	if g := h.do("GET", "/v1/instances/"+id, provToken, nil); g.str("name") != "three" {
		t.Errorf("a replay overwrote the later update: %s", g.Raw)
	}
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "four"}, "Idempotency-Key", "p1"); r.Status != 409 {
		t.Errorf("changed update, same key: %d", r.Status)
	}
	h.do("DELETE", "/v1/instances/"+id, provToken, nil)
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, map[string]any{"instance_name": "two"}, "Idempotency-Key", "p1"); r.Status != 404 {
		t.Errorf("update replay after deletion: %d, want 404", r.Status)
	}
	if r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": "one"}, "Idempotency-Key", key); r.Status != 409 || r.errorCode() != "instance_deleted" {
		t.Errorf("provisioning replay after deletion: %d %s", r.Status, r.Raw)
	}
	if r := h.do("GET", "/v1/instances/"+id, provToken, nil); r.Status != 404 {
		t.Errorf("the deleted instance came back: %d", r.Status)
	}
}

// flakyMembers is a store whose next change of a set fails, as Redis
// failing between two steps of an update does.
type flakyMembers struct {
	Store
	fail atomic.Bool
}

func (f *flakyMembers) AddMember(ctx context.Context, key, member string) error {
	if f.fail.CompareAndSwap(true, false) {
		return errors.New("connection reset")
	}
	return f.Store.AddMember(ctx, key, member)
}

func (f *flakyMembers) RemoveMember(ctx context.Context, key, member string) error {
	if f.fail.CompareAndSwap(true, false) {
		return errors.New("connection reset")
	}
	return f.Store.RemoveMember(ctx, key, member)
}

// An update that failed part way (the store down after the instance was
// written) gives its idempotency key back: the provisioner's retry with
// the same key and input completes it at once, rather than being told
// for a minute that the failed attempt is still in progress.
func TestUpdateRetriedAfterAStoreFailure(t *testing.T) {
	h := newHarness(t)
	store := &flakyMembers{Store: h.store}
	srv, err := New(Config{Asker: h.asker, Asks: h.asks, Store: store, Provisioners: []Provisioner{{Name: "platform", Token: provToken}},
		Window: time.Minute, Now: h.clock.Now, AllowPrivateWebhooks: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.StripPrefix("/aap", srv.Handler()))
	t.Cleanup(ts.Close)
	h.url = ts.URL + "/aap"
	rc := newReceiver(t, h.clock)
	id, _ := h.asyncInstance(rc)
	store.fail.Store(true)
	patch := map[string]any{"instance_name": "async", "delivery": nil}
	if r := h.do("PATCH", "/v1/instances/"+id, provToken, patch, "Idempotency-Key", "p1"); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("update with the store failing: %d %s, want 503", r.Status, r.Raw)
	}
	r := h.do("PATCH", "/v1/instances/"+id, provToken, patch, "Idempotency-Key", "p1")
	if r.Status != http.StatusOK {
		t.Fatalf("the retry: %d %s, want 200", r.Status, r.Raw)
	}
	if members, err := h.store.Members(t.Context(), deliveringKey); err != nil || slices.Contains(members, id) {
		t.Errorf("delivering instances after the retry removed delivery: %v %v", members, err)
	}
}

// A serve going away (Stop) ends the long polls in progress with the
// request's current state, so the adapter polls again elsewhere; nothing
// is decided by it.
func TestStopEndsLongPolls(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("rolling")
	id := h.create(cred, refund()).str("id")
	polled := make(chan reply, 1)
	go func() { polled <- h.do("GET", "/v1/requests/"+id+"?wait=30s", cred, nil) }()
	// Stop may come before the poll starts watching: either way it answers
	// without waiting out its 30 s, which the bound below would notice.
	h.srv.Stop()
	select {
	case r := <-polled:
		if r.Status != 200 || r.str("status") != "pending" {
			t.Errorf("a poll ended by Stop: %d %s", r.Status, r.Raw)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not end the long poll")
	}
	if a, _ := h.asks.Get(t.Context(), id); a.Status != pending.StatusPending {
		t.Errorf("Stop decided the request: %s", a.Status)
	}
}

// Approval creation is limited per provisioning account, across the
// replicas that share the store: past the limit a 429 with Retry-After,
// nothing recorded.
func TestCreationRateLimit(t *testing.T) {
	h := newHarness(t)
	replica := func() *Server {
		s, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "platform", Token: provToken}},
			Window: time.Minute, Now: h.clock.Now, CreatesPerMinute: 2})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	limited, other := replica(), replica()
	_, cred := h.instance("busy")
	var codes []int
	for _, s := range []*Server{limited, other, other} {
		code, _ := httptestJSON(t, s, "POST", "/v1/requests", cred, refund())
		codes = append(codes, code)
	}
	if codes[0] != 201 || codes[1] != 201 || codes[2] != http.StatusTooManyRequests {
		t.Errorf("statuses %v, want 201 201 429", codes)
	}
	if n := h.pendingAsks(); n != 2 {
		t.Errorf("%d Asks, want the 2 under the limit", n)
	}
	h.clock.Advance(time.Minute)
	if code, _ := httptestJSON(t, limited, "POST", "/v1/requests", cred, refund()); code != 201 {
		t.Errorf("a minute later: %d", code)
	}
}

// An MCP server's tool arrives as the specification's adapters send it,
// tool and server apart: askops takes server, hands it to the Asker,
// returns it as sent (the adapters refuse an answer without it), and
// counts it in the idempotency key's input. Empty is refused.
func TestMCPServerMember(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("claude")
	key := recordid.NewUUID()
	body := `{"tool":"create_issue","server":"github","arguments":{"title":"x"},"timeout":"5m"}`
	first := h.do("POST", "/v1/requests", cred, body, "Idempotency-Key", key)
	if first.Status != 201 || first.str("server") != "github" || first.str("tool") != "create_issue" {
		t.Fatalf("create: %d %s, want 201 echoing tool and server", first.Status, first.Raw)
	}
	checkShape(t, first)
	if calls := h.asker.Calls(); len(calls) != 1 || calls[0].Server != "github" || calls[0].Tool != "create_issue" {
		t.Errorf("the Asker got %+v, want tool create_issue of server github", calls)
	}
	if r := h.do("GET", "/v1/requests/"+first.str("id"), cred, nil); r.str("server") != "github" {
		t.Errorf("read: %s, want server as sent", r.Raw)
	}
	if r := h.do("POST", "/v1/requests", cred, body, "Idempotency-Key", key); r.Status != 200 || r.str("id") != first.str("id") {
		t.Errorf("replay: %d %s", r.Status, r.Raw)
	}
	other := `{"tool":"create_issue","server":"gitlab","arguments":{"title":"x"},"timeout":"5m"}`
	if r := h.do("POST", "/v1/requests", cred, other, "Idempotency-Key", key); r.Status != 409 || r.errorCode() != "idempotency_conflict" {
		t.Errorf("another server, same key: %d %s", r.Status, r.Raw)
	}
	for _, bad := range []string{
		`{"tool":"create_issue","server":"","arguments":{},"timeout":"5m"}`,
		`{"tool":"create_issue","server":7,"arguments":{},"timeout":"5m"}`,
		`{"tool":"create_issue","Server":"github","arguments":{},"timeout":"5m"}`,
	} {
		if r := h.create(cred, bad); r.Status != 400 {
			t.Errorf("%s: %d %s, want 400", bad, r.Status, r.Raw)
		}
	}
	if r := h.create(cred, refund()); r.Status != 201 || strings.Contains(string(r.Raw), `"server"`) {
		t.Errorf("a request without server: %d %s, want no server member", r.Status, r.Raw)
	}
}

// 4_requests.md, Deadlines and Cancellation: "If the request is still
// pending at its deadline, the provider records expired. It must not
// approve a pending request after that deadline." deadline_at is whole
// seconds and askops' Ask deadline is not (its store's clock has
// microseconds), so the Ask outlives deadline_at by up to a second: a read,
// a click or a DELETE in that moment must find the request expired.
func TestSpec4PendingAtDeadlineAtIsExpired(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("subsecond")
	h.clock.Advance(400 * time.Millisecond) // the Ask's deadline is then 12:01:00.4
	read := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "1m"})
	click := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "1m"})
	withdraw := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "1m"})
	if read.str("deadline_at") != "2026-09-16T12:01:00Z" {
		t.Fatalf("deadline_at %q, want 12:01:00Z", read.str("deadline_at"))
	}
	h.clock.Advance(time.Minute - 200*time.Millisecond) // 12:01:00.2: past deadline_at, the Asks still pending in askops

	// A read at the deadline expires it; a click after that is refused.
	r := h.do("GET", "/v1/requests/"+read.str("id"), cred, nil)
	if r.str("status") != "expired" || r.decision()["decided_at"] != "2026-09-16T12:01:00Z" || r.decision()["expires_at"] != nil {
		t.Errorf("read after deadline_at: %s", r.Raw)
	}
	if _, err := h.asks.Decide(t.Context(), read.str("id"), pending.Approved, "U0ANA", ""); err == nil {
		t.Error("a click after the read approved an expired request")
	}
	// A click that lands in askops before any read is not an approval.
	if _, err := h.asks.Decide(t.Context(), click.str("id"), pending.Approved, "U0ANA", "late"); err != nil {
		t.Fatal(err)
	}
	r = h.do("GET", "/v1/requests/"+click.str("id"), cred, nil)
	if r.str("status") != "expired" || r.decision()["expires_at"] != nil || r.decision()["decided_at"] != "2026-09-16T12:01:00Z" {
		t.Errorf("approved after deadline_at: %s", r.Raw)
	}
	if again := h.do("GET", "/v1/requests/"+click.str("id"), cred, nil); string(again.Raw) != string(r.Raw) {
		t.Errorf("read again: %s, first %s", again.Raw, r.Raw)
	}
	// A DELETE after the deadline finds it expired: 409 already_terminal.
	if d := h.do("DELETE", "/v1/requests/"+withdraw.str("id"), cred, nil); d.Status != http.StatusConflict || d.errorCode() != "already_terminal" {
		t.Errorf("DELETE after deadline_at: %d %s", d.Status, d.Raw)
	}
	if r := h.do("GET", "/v1/requests/"+withdraw.str("id"), cred, nil); r.str("status") != "expired" {
		t.Errorf("after the DELETE: %s", r.Raw)
	}
	// Before deadline_at nothing changes: pending, and a click approves.
	early := h.create(cred, map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "1m"})
	if r := h.do("GET", "/v1/requests/"+early.str("id"), cred, nil); r.str("status") != "pending" {
		t.Errorf("before deadline_at: %s", r.Raw)
	}
	if _, err := h.asks.Decide(t.Context(), early.str("id"), pending.Approved, "U0ANA", ""); err != nil {
		t.Fatal(err)
	}
	if r := h.do("GET", "/v1/requests/"+early.str("id"), cred, nil); r.str("status") != "approved" {
		t.Errorf("approved in time: %s", r.Raw)
	}
}

// 5_http.md, Conventions ("The schema defines their accepted format"):
// the schema's string fields are not nullable. encoding/json leaves a
// string unset for null, which took agent_reasoning: null as "" and
// answered a request with a member it was never sent.
func TestSpec5NullIsNotAString(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("nulls")
	for _, body := range []string{
		`{"tool":null,"arguments":{},"timeout":"5m"}`,
		`{"tool":"x","arguments":{},"timeout":null}`,
		`{"tool":"x","arguments":{},"timeout":"5m","agent_reasoning":null}`,
		`{"tool":"x","server":null,"arguments":{},"timeout":"5m"}`,
	} {
		r := h.do("POST", "/v1/requests", cred, body, "Idempotency-Key", recordid.NewUUID())
		if r.Status != http.StatusBadRequest || r.errorCode() != "invalid_field" {
			t.Errorf("%s: %d %s, want 400 invalid_field", body, r.Status, r.Raw)
		}
	}
	if n := h.storedRequests(); n != 0 {
		t.Errorf("%d requests stored", n)
	}
	r := h.do("POST", "/v1/instances", provToken, `{"instance_name":null}`, "Idempotency-Key", recordid.NewUUID())
	if r.Status != http.StatusBadRequest {
		t.Errorf("instance_name null: %d %s", r.Status, r.Raw)
	}
}
