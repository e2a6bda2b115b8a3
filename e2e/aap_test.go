package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	aapexample "github.com/askops/askops/examples/aap"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/recordid"
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
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
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
		if resp := w.click(ctx, t, c.base, m, approverID, slackui.ActionApprove); resp.StatusCode != http.StatusOK {
			t.Fatalf("click on C: %d", resp.StatusCode)
		}
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
