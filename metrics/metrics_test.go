package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

func TestMetricsExposition(t *testing.T) {
	m := New("dev")
	m.AskEnded(pending.Approved, 700*time.Millisecond)
	m.AskEnded(pending.Denied, 5*time.Second) // on a bucket bound: counted in it (le)
	m.AskEnded(pending.Expired, 2*time.Hour)  // past the last bound: only +Inf
	m.AskWaiting(1)
	m.AskWaiting(1)
	m.AskWaiting(-1)
	m.SlackAPIError("chat.update")
	m.SlackAPIError(`we"ird\method`)
	m.RunEnded("finished")
	m.ReplicaAcks(1)
	m.ReplicaAcks(2) // a replica rejoined

	out := scrape(t, m)
	for _, want := range []string{
		"# TYPE askops_asks_total counter",
		`askops_asks_total{outcome="approved"} 1`,
		`askops_asks_total{outcome="cancelled"} 0`, // present before it happens
		`askops_asks_total{outcome="unavailable"} 0`,
		"# TYPE askops_decision_seconds histogram",
		`askops_decision_seconds_bucket{le="0.5"} 0`,
		`askops_decision_seconds_bucket{le="1"} 1`,
		`askops_decision_seconds_bucket{le="5"} 2`,
		`askops_decision_seconds_bucket{le="3600"} 2`,
		`askops_decision_seconds_bucket{le="+Inf"} 3`,
		"askops_decision_seconds_sum 7205.7",
		"askops_decision_seconds_count 3",
		"askops_asks_pending 1",
		`askops_slack_api_errors_total{method="chat.update"} 1`,
		`askops_slack_api_errors_total{method="we\"ird\\method"} 1`,
		`askops_runs_total{state="finished"} 1`,
		`askops_build_info{version="dev"} 1`,
		"askops_redis_replica_acks 2",
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func TestSlackErrorCounter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/chat.update":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":false,"error":"message_not_found"}`))
		case "/api/chat.postMessage":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write([]byte(`{"ok":true,"ts":"1.2"}`))
		default:
			http.Error(w, "rate limited", http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	m := New("dev")
	hc := &http.Client{Transport: &SlackErrors{Next: http.DefaultTransport, Metrics: m}}
	for _, method := range []string{"chat.update", "chat.postMessage", "views.open"} {
		resp, err := hc.Post(srv.URL+"/api/"+method, "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body) // the body is handed on intact
		resp.Body.Close()
		if method == "chat.postMessage" && string(body) != `{"ok":true,"ts":"1.2"}` {
			t.Errorf("body changed: %q", body)
		}
	}
	out := scrape(t, m)
	for _, want := range []string{
		`askops_slack_api_errors_total{method="chat.update"} 1`,
		`askops_slack_api_errors_total{method="views.open"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, `method="chat.postMessage"`) {
		t.Errorf("a successful call was counted as an error:\n%s", out)
	}
}

// scrape reads m as Prometheus would (text format).
func scrape(t *testing.T, m *Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
