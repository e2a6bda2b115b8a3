package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// httpRoutes are the parts of this process's HTTP face. list is the one
// place every route is named: the Slack serve's http.listen (and run's and
// ask's while they take clicks) serves it through slackui.Front; the serve
// without Slack serves withConsole, the same list with the console's pages
// at "/", on console.listen. (Beside Slack the console has a port of its
// own with its pages alone: console.Pages.)
type httpRoutes struct {
	ready   *readiness              // GET /readyz; GET /healthz needs nothing
	metrics http.Handler            // GET /metrics
	slack   map[string]http.Handler // Slack's signed endpoints (slackui.Front.SlackRoutes); nil without Slack
	api     http.Handler            // the gateway's /v1/… (serve only); nil in run and ask
	aap     http.Handler            // the AAP provider's /v1/… (aap.enabled), mounted at /aap/; nil without
}

// list is every route, pattern to handler.
func (r httpRoutes) list() map[string]http.Handler {
	routes := map[string]http.Handler{
		// The probes every serve answers, with Slack or without.
		"GET /healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "ok\n")
		}),
		"GET /readyz":  r.ready.handler(),
		"GET /metrics": r.metrics,
	}
	for pattern, h := range r.slack { // POST /slack/interactions, /slack/commands, /slack/events
		routes[pattern] = h
	}
	if r.api != nil {
		routes["/v1/"] = r.api // the API's own mux names its routes and answers the unknown ones
	}
	if r.aap != nil {
		// The protocol's base URL is …/aap: its paths (/v1/requests,
		// /v1/instances) are the provider's own mux's, below it.
		routes["/aap/"] = http.StripPrefix("/aap", r.aap)
		// The base URL itself is no operation: the provider's 404 in the
		// error envelope, not the mux's redirect to /aap/ (HTML, no
		// X-Request-ID).
		routes["/aap"] = r.aap
	}
	return routes
}

// withConsole is list with the console's pages answering the rest, at "/"
// (a console.Routes).
func (r httpRoutes) withConsole(pages http.Handler) map[string]http.Handler {
	routes := r.list()
	routes["/"] = pages
	return routes
}

// readiness answers /readyz: the store, Slack (auth.test, cached briefly
// so a tight probe interval does not spend Slack's rate limit) and, in
// socket mode, the Socket Mode connection.
type readiness struct {
	Now    func() time.Time
	TTL    time.Duration // how long a Slack answer is reused
	Store  func(context.Context) error
	Slack  func(context.Context) error // nil without Slack (the console-only serve)
	Socket func() error                // nil in http mode
	// Bound names the OS bound of the agent's allowed commands, said on
	// a line of its own when ready ("" says nothing).
	Bound string

	mu       sync.Mutex
	slackAt  time.Time
	slackErr error
}

// check returns a problem per failing dependency (none when ready).
func (r *readiness) check(ctx context.Context) []string {
	var problems []string
	if err := r.Store(ctx); err != nil {
		problems = append(problems, "store: "+err.Error())
	}
	if r.Slack == nil {
		return problems
	}
	r.mu.Lock()
	if r.slackAt.IsZero() || r.Now().Sub(r.slackAt) >= r.TTL {
		r.slackErr = r.Slack(ctx)
		r.slackAt = r.Now()
	}
	err := r.slackErr
	r.mu.Unlock()
	if err != nil {
		problems = append(problems, "slack: "+err.Error())
	}
	if r.Socket != nil {
		if err := r.Socket(); err != nil {
			problems = append(problems, "slack: "+err.Error())
		}
	}
	return problems
}

// handler answers 200 "ok" when ready, else 503 with one problem a line.
func (r *readiness) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if problems := r.check(ctx); len(problems) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, strings.Join(problems, "\n")+"\n")
			return
		}
		io.WriteString(w, "ok\n")
		if r.Bound != "" {
			io.WriteString(w, "bound: "+r.Bound+"\n")
		}
	})
}
