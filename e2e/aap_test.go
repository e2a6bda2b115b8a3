package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	aapexample "github.com/askops/askops/examples/aap"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

const aapProvisionerToken = "e2e-aap-provisioner-token-5d1e"

// aapBlock turns the AAP provider on, with its provisioner's token read
// from the environment as issue 36's contract says.
const aapBlock = `aap:
  enabled: true
  provisioners:
    - name: platform
      token_env: ASKOPS_AAP_PROVISIONER
  execution_window: 5m
  allow_private_webhooks: false
`

// aapDo is one exchange with a built serve's AAP API.
func aapDo(ctx context.Context, t *testing.T, method, url, token, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if !recordid.ValidUUID(resp.Header.Get("X-Request-ID")) {
		t.Errorf("%s %s: X-Request-ID %q", method, url, resp.Header.Get("X-Request-ID"))
	}
	return resp.StatusCode, resp.Header, m
}

// AAP across three built replicas on one Redis: a request made on A is
// long-polled on B and decided by a Slack click delivered to C; B's poll
// answers with the approval. Then bad input against the binary, and the
// adapter-side example approved by a click.
func TestAAPAcrossReplicas(t *testing.T) {
	t.Setenv("ASKOPS_AAP_PROVISIONER", aapProvisionerToken)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	s := settings{Extra: aapBlock}
	a := w.serve(ctx, t, "aap-a", s)
	b := w.serve(ctx, t, "aap-b", s)
	c := w.serve(ctx, t, "aap-c", s)

	code, _, prov := aapDo(ctx, t, "POST", a.base+"/aap/v1/instances", aapProvisionerToken, `{"instance_name":"e2e-adapter"}`, "Idempotency-Key", "e2e-prov")
	if code != http.StatusCreated {
		t.Fatalf("provision on A: %d %v\n%s", code, prov, tail(a.stderr(), 4000))
	}
	cred := prov["credential"].(map[string]any)["token"].(string)

	var seen []fakeslack.Message
	var latencies []time.Duration
	for i := range 5 {
		body := fmt.Sprintf(`{"tool":"Bash","arguments":{"command":"terraform apply -target=module.db%d"},"timeout":"60s","context":{"session_id":"e2e","cwd":%q}}`, i, w.ws)
		code, _, created := aapDo(ctx, t, "POST", a.base+"/aap/v1/requests", cred, body, "Idempotency-Key", recordid.NewUUID())
		if code != http.StatusCreated || created["status"] != "pending" {
			t.Fatalf("create on A: %d %v", code, created)
		}
		id := created["id"].(string)
		polled := make(chan map[string]any, 1)
		go func() {
			_, _, p := aapDo(ctx, t, "GET", b.base+"/aap/v1/requests/"+id+"?wait=30s", cred, "")
			polled <- p
		}()
		m := w.waitOpenAsk(ctx, t, fmt.Sprintf("module.db%d", i), seen...)
		seen = append(seen, m)
		if got := askID(m.Blocks); got != id {
			t.Fatalf("the Slack Ask %s, want the request's id %s", got, id)
		}
		clicked := time.Now()
		w.clickOn(ctx, t, c, m, approverID, slackui.ActionApprove)
		select {
		case p := <-polled:
			latencies = append(latencies, time.Since(clicked))
			if p["status"] != "approved" {
				t.Fatalf("B's long poll: %v", p)
			}
		case <-ctx.Done():
			t.Fatal("B's long poll never answered")
		}
	}
	slices.Sort(latencies)
	t.Logf("click on C -> long poll on B answered (built binaries, including the click's own request): %v, p50 %v", latencies, latencies[len(latencies)/2])

	// Bad input against the binary: each its error, in the envelope.
	for _, tc := range []struct {
		name, body, ctype string
		status            int
	}{
		{"case-mismatched field", `{"TOOL":"Bash","arguments":{},"timeout":"5m"}`, "application/json", 400},
		{"unknown field", `{"tool":"Bash","arguments":{},"timeout":"5m","extra":1}`, "application/json", 400},
		{"wrong content type", `{"tool":"Bash","arguments":{},"timeout":"5m"}`, "text/plain", 415},
		{"invalid UTF-8", "{\"tool\":\"B\xffash\",\"arguments\":{},\"timeout\":\"5m\"}", "application/json", 400},
		{"oversized", `{"tool":"Bash","arguments":{"a":"` + strings.Repeat("a", 1<<20) + `"},"timeout":"5m"}`, "application/json", 413},
	} {
		code, _, e := aapDo(ctx, t, "POST", a.base+"/aap/v1/requests", cred, tc.body, "Idempotency-Key", recordid.NewUUID(), "Content-Type", tc.ctype)
		if code != tc.status || e["error"] == nil {
			t.Errorf("%s: %d %v, want %d in the envelope", tc.name, code, e, tc.status)
		}
	}
	if code, _, _ := aapDo(ctx, t, "GET", a.base+"/aap/v1/requests/"+recordid.NewUUID()+"?token="+cred, "", ""); code != http.StatusBadRequest {
		t.Errorf("a credential in the URL: %d, want 400", code)
	}

	// The adapter-side example against B, approved by a click on C.
	client := aapexample.Client{BaseURL: b.base + "/aap", Credential: cred}
	type result struct {
		out aapexample.Outcome
		err error
	}
	got := make(chan result, 1)
	go func() {
		out, err := client.Approve(ctx, "Bash", map[string]any{"command": "terraform apply -target=module.example"}, time.Minute, func() error { return nil })
		got <- result{out, err}
	}()
	m := w.waitOpenAsk(ctx, t, "module.example", seen...)
	w.click(ctx, t, c.base, m, approverID, slackui.ActionApprove)
	r := <-got
	if r.err != nil || !r.out.Ran || r.out.Status != "approved" {
		t.Errorf("the example adapter: %+v %v", r.out, r.err)
	}
}

// e2eReceiver is a webhook receiver for one registration: it verifies
// each signature, answers the verification challenge, and records the
// events it acknowledges; while failing it answers 503.
type e2eReceiver struct {
	srv     *httptest.Server
	reg     string
	secret  string
	mu      sync.Mutex
	failing bool
	events  []map[string]string
}

func newE2EReceiver(t *testing.T) *e2eReceiver {
	var key [32]byte
	_, _ = rand.Read(key[:])
	r := &e2eReceiver{reg: recordid.NewUUID(), secret: "whsec_" + base64.StdEncoding.EncodeToString(key[:])}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mac := hmac.New(sha256.New, key[:])
		mac.Write([]byte(req.Header.Get("webhook-id") + "." + req.Header.Get("webhook-timestamp") + "."))
		mac.Write(body)
		if !hmac.Equal([]byte(req.Header.Get("webhook-signature")), []byte("v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		if m["type"] == "webhook.verification" && m["registration_id"] == r.reg {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": m["challenge"]})
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.failing {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.events = append(r.events, m)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *e2eReceiver) got(request string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e["request_id"] == request {
			n++
		}
	}
	return n
}

// Async mode through built binaries: an instance with a verified
// receiver; a request made on A and approved by a Slack click on B is
// notified, signed; an event queued while the receiver fails outlives
// the replicas that recorded it and is sent by a replica started after.
func TestAAPAsyncAcrossReplicas(t *testing.T) {
	t.Setenv("ASKOPS_AAP_PROVISIONER", aapProvisionerToken)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	s := settings{Extra: strings.Replace(aapBlock, "allow_private_webhooks: false", "allow_private_webhooks: true", 1)}
	a := w.serve(ctx, t, "async-a", s)
	b := w.serve(ctx, t, "async-b", s)
	rc := newE2EReceiver(t)
	delivery := fmt.Sprintf(`{"instance_name":"async","delivery":{"type":"webhook","url":%q,"registration_id":%q,"signing_secret":%q}}`, rc.srv.URL+"/events", rc.reg, rc.secret)
	code, _, prov := aapDo(ctx, t, "POST", a.base+"/aap/v1/instances", aapProvisionerToken, delivery, "Idempotency-Key", "async-prov")
	if code != http.StatusCreated {
		t.Fatalf("provision with a receiver: %d %v\n%s", code, prov, tail(a.stderr(), 4000))
	}
	cred := prov["credential"].(map[string]any)["token"].(string)

	body := fmt.Sprintf(`{"tool":"Bash","arguments":{"command":"terraform apply -target=module.async"},"timeout":"60s","context":{"cwd":%q}}`, w.ws)
	_, _, created := aapDo(ctx, t, "POST", a.base+"/aap/v1/requests", cred, body, "Idempotency-Key", recordid.NewUUID())
	id, _ := created["id"].(string)
	m := w.waitOpenAsk(ctx, t, "module.async")
	w.click(ctx, t, b.base, m, approverID, slackui.ActionApprove)
	testwait.Until(ctx, t, "the approval's notification", func() bool { return rc.got(id) == 1 })
	if _, _, r := aapDo(ctx, t, "GET", a.base+"/aap/v1/requests/"+id, cred, ""); r["status"] != "approved" {
		t.Errorf("after the notification: %v", r)
	}

	// Queued while the receiver fails, then both replicas stop.
	rc.mu.Lock()
	rc.failing = true
	rc.mu.Unlock()
	body = fmt.Sprintf(`{"tool":"Bash","arguments":{"command":"terraform apply -target=module.later"},"timeout":"60s","context":{"cwd":%q}}`, w.ws)
	_, _, created = aapDo(ctx, t, "POST", a.base+"/aap/v1/requests", cred, body, "Idempotency-Key", recordid.NewUUID())
	later, _ := created["id"].(string)
	m2 := w.waitOpenAsk(ctx, t, "module.later", m)
	w.click(ctx, t, b.base, m2, approverID, slackui.ActionDeny)
	testwait.Until(ctx, t, "the denial's event to be queued", func() bool {
		_, _, r := aapDo(ctx, t, "GET", a.base+"/aap/v1/requests/"+later, cred, "")
		return r["status"] == "denied"
	})
	a.interrupt(t)
	b.interrupt(t)
	a.wait(ctx, t)
	b.wait(ctx, t)
	rc.mu.Lock()
	rc.failing = false
	rc.mu.Unlock()
	w.serve(ctx, t, "async-c", s)
	testwait.Until(ctx, t, "the queued event sent by the replica started after", func() bool { return rc.got(later) == 1 })
	if rc.got(id) != 1 {
		t.Errorf("the first event was sent %d times", rc.got(id))
	}
}
