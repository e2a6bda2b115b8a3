package aap

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askops/askops/internal/recordid"
)

// Bad input gets its error and stores nothing: no Ask, no request, and
// the key is not spent (the same key with a good body then creates).
func TestBadInputStoresNothing(t *testing.T) {
	h := newHarness(t)
	_, cred := h.instance("fuzzy")
	deep := strings.Repeat(`{"a":`, MaxDepth+5) + "1" + strings.Repeat("}", MaxDepth+5)
	for _, tc := range []struct {
		name   string
		body   string
		ctype  string
		status int
		code   string
	}{
		{"oversized", `{"tool":"x","arguments":{"a":"` + strings.Repeat("a", MaxBody) + `"},"timeout":"5m"}`, "application/json", 413, "body_too_large"},
		{"deep", `{"tool":"x","arguments":` + deep + `,"timeout":"5m"}`, "application/json", 400, "invalid_json"},
		{"invalid UTF-8", "{\"tool\":\"x\xff\",\"arguments\":{},\"timeout\":\"5m\"}", "application/json", 400, "invalid_json"},
		{"unknown field", `{"tool":"x","arguments":{},"timeout":"5m","delivery":{}}`, "application/json", 400, "unknown_field"},
		{"case-mismatched field", `{"TOOL":"x","arguments":{},"timeout":"5m"}`, "application/json", 400, "unknown_field"},
		{"case-mismatched twin", `{"tool":"x","Tool":"y","arguments":{},"timeout":"5m"}`, "application/json", 400, "unknown_field"},
		{"member named twice", `{"tool":"x","tool":"y","arguments":{},"timeout":"5m"}`, "application/json", 400, "invalid_json"},
		{"twice inside arguments", `{"tool":"x","arguments":{"a":1,"a":2},"timeout":"5m"}`, "application/json", 400, "invalid_json"},
		{"wrong content type", `{"tool":"x","arguments":{},"timeout":"5m"}`, "text/plain", 415, "unsupported_media_type"},
		{"form", `tool=x`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"not an object", `[1,2]`, "application/json", 400, "invalid_json"},
		{"trailing data", `{"tool":"x","arguments":{},"timeout":"5m"} {}`, "application/json", 400, "invalid_json"},
		{"empty", ``, "application/json", 400, "invalid_json"},
		{"arguments not an object", `{"tool":"x","arguments":[],"timeout":"5m"}`, "application/json", 400, "invalid_field"},
		{"no arguments", `{"tool":"x","timeout":"5m"}`, "application/json", 400, "missing_field"},
		{"empty tool", `{"tool":"","arguments":{},"timeout":"5m"}`, "application/json", 400, "invalid_field"},
		{"tool not a string", `{"tool":1,"arguments":{},"timeout":"5m"}`, "application/json", 400, "invalid_field"},
		{"bad timeout", `{"tool":"x","arguments":{},"timeout":"1.5h"}`, "application/json", 400, "invalid_field"},
		{"zero timeout", `{"tool":"x","arguments":{},"timeout":"0s"}`, "application/json", 400, "invalid_field"},
		{"context not an object", `{"tool":"x","arguments":{},"timeout":"5m","context":"s"}`, "application/json", 400, "invalid_field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := recordid.NewUUID()
			r := h.do("POST", "/v1/requests", cred, tc.body, "Idempotency-Key", key, "Content-Type", tc.ctype)
			if r.Status != tc.status || r.errorCode() != tc.code {
				t.Errorf("%d %s, want %d %s", r.Status, clip(string(r.Raw)), tc.status, tc.code)
			}
			if n := h.pendingAsks(); n != 0 {
				t.Errorf("%d Asks stored", n)
			}
			if n := h.storedRequests(); n != 0 {
				t.Errorf("%d requests stored", n)
			}
			if len(h.asker.Calls()) != 0 {
				t.Errorf("bad input reached the policy")
			}
			ok := h.do("POST", "/v1/requests", cred, `{"tool":"allowed_tool","arguments":{},"timeout":"5m"}`, "Idempotency-Key", key)
			if ok.Status != 201 {
				t.Errorf("the key was spent by bad input: %d %s", ok.Status, ok.Raw)
			}
			h.asker.mu.Lock()
			h.asker.calls = nil
			h.asker.mu.Unlock()
			h.store.mu.Lock()
			for k := range h.store.vals {
				if strings.HasPrefix(k, "req:") {
					delete(h.store.vals, k)
				}
			}
			h.store.mu.Unlock()
		})
	}
}

// httptestDo sends one request to s directly and returns the status.
func httptestDo(t *testing.T, s *Server, method, path, token string) int {
	code, _ := httptestBody(t, s, method, path, token)
	return code
}

func httptestBody(t *testing.T, s *Server, method, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}
