package aap

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// A provisioning replayed after the provisioner's token was rotated finds
// its instance but cannot open the credential sealed with the old token:
// it says so (409 credential_unavailable), never a 500, and creates
// nothing new.
func TestReplayAfterTheProvisionersTokenRotated(t *testing.T) {
	h := newHarness(t)
	key := recordid.New()
	body := map[string]any{"instance_name": "ci"}
	if r := h.do("POST", "/v1/instances", provToken, body, "Idempotency-Key", key); r.Status != http.StatusCreated {
		t.Fatalf("provisioning: %d %s", r.Status, r.Raw)
	}
	const rotated = "provisioner-token-for-tests-0002"
	s, err := New(Config{Asker: h.asker, Asks: h.asks, Store: h.store, Provisioners: []Provisioner{{Name: "platform", Token: rotated}},
		Window: 5 * time.Minute, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.StripPrefix("/aap", s.Handler()))
	t.Cleanup(ts.Close)
	h.url = ts.URL + "/aap"
	r := h.do("POST", "/v1/instances", rotated, body, "Idempotency-Key", key)
	if r.Status != http.StatusConflict || r.errorCode() != "credential_unavailable" {
		t.Fatalf("replay after rotation: %d %s, want 409 credential_unavailable", r.Status, r.Raw)
	}
	h.checkExchange(r)
}
