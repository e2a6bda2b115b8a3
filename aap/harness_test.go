package aap

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/apitest"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/pending"
)

const provToken = "provisioner-token-for-tests-0001"

// fakeAsker stands in for the gateway's policy path: tools named
// allowed_tool and denied_tool are settled by "policy"; unrecordable
// fails as a store would; anything else becomes a pending Ask.
type fakeAsker struct {
	asks interface {
		Create(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, error)
	}
	mu    sync.Mutex
	calls []Call
}

func (f *fakeAsker) Ask(ctx context.Context, c Call) (pending.Ask, bool) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	switch c.Tool {
	case "allowed_tool":
		return pending.Ask{Status: pending.Status(pending.Approved), DecidedBy: PolicyDecider, DecisionReason: "allowed by rule (rules[0])"}, true
	case "denied_tool":
		return pending.Ask{Status: pending.Status(pending.Denied), DecidedBy: PolicyDecider, DecisionReason: "denied by rule (rules[1])"}, true
	case "unrecordable":
		return pending.Ask{Status: pending.Status(pending.Unavailable), DecisionReason: "the approval request could not be recorded"}, true
	}
	a, err := f.asks.Create(ctx, pending.Request{AskID: c.ID, Unleased: c.Unleased(), Keep: c.Keep, Tool: c.Tool, Args: string(c.Arguments),
		RunID: "aap:" + c.Instance, SessionID: "aap:" + c.Instance, StartedBy: "aap:" + c.Instance}, min(c.Timeout, 10*time.Minute))
	if err != nil {
		return pending.Ask{Status: pending.Status(pending.Unavailable)}, true
	}
	return a, false
}

func (f *fakeAsker) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// harness is a Server over memory stores behind a real HTTP listener.
type harness struct {
	t     testing.TB
	clock *testclock.Clock
	asks  *pending.MemoryStore
	store *MemoryStore
	asker *fakeAsker
	srv   *Server
	url   string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c := testclock.New(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	asks := pending.NewMemoryStore(pending.Options{Now: c.Now})
	h := &harness{t: t, clock: c, asks: asks, store: NewMemoryStore(c.Now), asker: &fakeAsker{asks: asks}}
	h.srv = h.server(5 * time.Minute)
	ts := httptest.NewServer(http.StripPrefix("/aap", h.srv.Handler()))
	t.Cleanup(ts.Close)
	h.url = ts.URL + "/aap"
	return h
}

// server is a Server over h's stores with its own window.
func (h *harness) server(window time.Duration) *Server {
	s, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "platform", Token: provToken}},
		Window: window, MaxTimeout: 10 * time.Minute, Now: h.clock.Now, AllowPrivateWebhooks: true})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// reply is one HTTP answer.
type reply struct{ apitest.Reply }

// errorCode is the envelope's error.code ("" when none).
func (r reply) errorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r reply) str(key string) string { s, _ := r.Body[key].(string); return s }

func (r reply) decision() map[string]any { d, _ := r.Body["decision"].(map[string]any); return d }

// do sends one request; headers are name, value pairs (an empty value
// removes the header), and checks what every response must hold.
func (h *harness) do(method, path, token string, body any, headers ...string) reply {
	h.t.Helper()
	r := reply{apitest.Do(h.t, method, h.url+path, token, body, headers...)}
	h.checkExchange(r)
	return r
}

// checkExchange holds for every response: an X-Request-ID UUID, and an
// error in the envelope naming it.
func (h *harness) checkExchange(r reply) {
	h.t.Helper()
	rid := r.Header.Get("X-Request-ID")
	if !recordid.ValidUUID(rid) {
		h.t.Errorf("X-Request-ID %q is not a UUID (status %d)", rid, r.Status)
	}
	if r.Status >= 400 {
		e, ok := r.Body["error"].(map[string]any)
		if !ok || e["request_id"] != rid || e["type"] == "" || e["code"] == "" || e["message"] == "" {
			h.t.Errorf("status %d: not the error envelope with request_id %s: %s", r.Status, rid, r.Raw)
		}
	}
}

// instance provisions an instance and returns its id and credential.
func (h *harness) instance(name string) (id, cred string) {
	h.t.Helper()
	r := h.do("POST", "/v1/instances", provToken, map[string]any{"instance_name": name}, "Idempotency-Key", recordid.New())
	if r.Status != http.StatusCreated {
		h.t.Fatalf("provisioning: %d %s", r.Status, r.Raw)
	}
	inst, _ := r.Body["instance"].(map[string]any)
	c, _ := r.Body["credential"].(map[string]any)
	id, _ = inst["id"].(string)
	cred, _ = c["token"].(string)
	if id == "" || cred == "" {
		h.t.Fatalf("provisioning answered %s", r.Raw)
	}
	return id, cred
}

// create submits a request with a fresh key.
func (h *harness) create(cred string, body any) reply {
	h.t.Helper()
	return h.do("POST", "/v1/requests", cred, body, "Idempotency-Key", recordid.NewUUID())
}

// refund is the specification's example request.
func refund() map[string]any {
	return map[string]any{"tool": "issue_refund", "arguments": map[string]any{"payment_id": "payment_123", "amount": 4900, "currency": "GBP"}, "timeout": "30m"}
}

// pendingAsks is how many Asks wait in askops.
func (h *harness) pendingAsks() int {
	h.t.Helper()
	as, err := h.asks.ListPending(h.t.Context(), pending.Filter{})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(as)
}

// storedRequests counts the request records the AAP store holds.
func (h *harness) storedRequests() int {
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	n := 0
	for k := range h.store.vals {
		if strings.HasPrefix(k, "req:") {
			n++
		}
	}
	return n
}
