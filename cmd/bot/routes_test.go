package main

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// The process's routes, listed once: the probes always, Slack's endpoints
// when Slack is on, the API under /v1/ and the AAP provider under /aap
// when there are; each path reaches its own part.
func TestHTTPRoutesListEveryPart(t *testing.T) {
	part := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name+" "+r.Method+" "+r.URL.Path) })
	}
	var storeDown atomic.Bool
	r := httpRoutes{
		ready: &readiness{Now: time.Now, TTL: time.Second, Store: func(context.Context) error {
			if storeDown.Load() {
				return errors.New("down")
			}
			return nil
		}},
		metrics: part("metrics"),
		slack:   map[string]http.Handler{"POST /slack/interactions": part("interactions"), "POST /slack/commands": part("commands"), "POST /slack/events": part("events")},
		api:     part("api"),
		aap:     part("aap"),
	}
	want := []string{"/aap", "/aap/", "/v1/", "GET /healthz", "GET /metrics", "GET /readyz", "POST /slack/commands", "POST /slack/events", "POST /slack/interactions"}
	if got := slices.Sorted(maps.Keys(r.list())); !slices.Equal(got, want) {
		t.Errorf("routes %q, want %q", got, want)
	}
	if got := slices.Sorted(maps.Keys(httpRoutes{ready: r.ready, metrics: r.metrics}.list())); !slices.Equal(got, []string{"GET /healthz", "GET /metrics", "GET /readyz"}) {
		t.Errorf("without Slack or API: %q", got)
	}
	// The serve without Slack: the same list, the console's pages at "/".
	console := httpRoutes{ready: r.ready, metrics: r.metrics, api: r.api}.withConsole(part("console"))
	if got := slices.Sorted(maps.Keys(console)); !slices.Equal(got, []string{"/", "/v1/", "GET /healthz", "GET /metrics", "GET /readyz"}) {
		t.Errorf("beside the console: %q", got)
	}

	mux := http.NewServeMux()
	for p, h := range r.list() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/healthz", "ok\n"},
		{"GET", "/readyz", "ok\n"},
		{"GET", "/metrics", "metrics GET /metrics"},
		{"POST", "/slack/events", "events POST /slack/events"},
		{"POST", "/v1/asks", "api POST /v1/asks"},
		{"DELETE", "/v1/asks/a1", "api DELETE /v1/asks/a1"},
		{"GET", "/aap/v1/requests/r1", "aap GET /v1/requests/r1"},
		{"GET", "/aap", "aap GET /aap"}, // the provider's 404, not the mux's redirect
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := readBody(t, resp)
		if resp.StatusCode != 200 || b != tc.want {
			t.Errorf("%s %s: %d %q, want %q", tc.method, tc.path, resp.StatusCode, b, tc.want)
		}
	}
	storeDown.Store(true)
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if resp.StatusCode != 503 || b != "store: down\n" {
		t.Errorf("/readyz with the store down: %d %q", resp.StatusCode, b)
	}
}
