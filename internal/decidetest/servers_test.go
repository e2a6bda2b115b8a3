package decidetest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// askAPI serves the HTTP Ask API over asks, as a serve does: the gateway
// with a policy over gs, approver making the Asks and decider deciding
// them, and one token (name, value) that may ask and decide.
func askAPI(t *testing.T, asks *pending.MemoryStore, gs grants.Store, approver gateway.Approver, decider gateway.Decider, name, value string) *httptest.Server {
	t.Helper()
	engine, err := policy.New(policy.Config{Grants: gs})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := gateway.New(gateway.Config{Asks: asks, Approver: approver, Policy: engine, Decider: decider, MaxTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	tokens, err := gateway.NewTokens([]gateway.TokenConfig{{Name: name, Value: value, Scopes: []string{"ask", "decide"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.NewAPI(svc, tokens, nil).Handler())
	t.Cleanup(srv.Close)
	return srv
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signedInConsole serves a console made from cfg (user "ana") and signs
// in through its sign-in link: the jar holds the session, csrf its form
// token.
func signedInConsole(t *testing.T, cfg console.Config) (srv *httptest.Server, jar http.CookieJar, csrf string) {
	t.Helper()
	cfg.User, cfg.Live, cfg.ScopeText = "ana", console.NewLive(), approval.ScopeText(nil)
	c, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	srv = httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	jar, _ = cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := client.Get(c.SignInLink(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfRe.FindSubmatch(b)
	if m == nil {
		t.Fatalf("the console did not sign in: %d", resp.StatusCode)
	}
	return srv, jar, string(m[1])
}
