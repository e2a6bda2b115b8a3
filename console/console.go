// Package console is askops' local approvals console: a small web page,
// served on loopback, that shows the pending Asks with what the Slack message
// shows (the call, the programs it runs, why, where, who, until when), takes
// the same decisions (Approve, Approve for session with its scope stated,
// Deny with a reason), shows the decided Asks from the audit trail and the
// grants with Revoke. It is the embedded default channel: `bot serve` with no
// Slack configured serves it, and with Slack it can run beside it.
//
// Decisions go through the same store as Slack's clicks (pending.Store's
// Decide, the first wins), so a decision made here is the decision, wherever
// the Ask is also shown. Live updates are pushed (server-sent events) from
// the approval round trip's notifier hooks: Live is an approval.Notifier.
//
// Pages are rendered on the server with html/template, so every string a
// user or a model controls is escaped by the template; the only script is a
// static file that listens for the events and swaps in the re-rendered list.
// Signing in exchanges a one-time link for an HttpOnly, SameSite=Strict
// cookie; every POST carries the session's CSRF token and passes the
// standard library's cross-origin check.
package console

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/consoleuser"
	"github.com/askops/askops/pending"
)

// Asks is what the console needs from the pending store; pending.Store
// satisfies it.
type Asks interface {
	Get(ctx context.Context, id string) (pending.Ask, error)
	ListPending(ctx context.Context, f pending.Filter) ([]pending.Ask, error)
	// AuditLatest reads the newest audit events of a kind, newest first
	// (the history reads only its last historyLen decisions).
	AuditLatest(ctx context.Context, kind pending.EventKind, n int) ([]pending.Event, error)
}

// Grants is what the console needs from the grant store; grants.Store
// satisfies it.
type Grants interface {
	List(ctx context.Context, sessionID string) ([]grants.Grant, error)
	Revoke(ctx context.Context, sessionID, grantID string) error
}

// Decider judges a vote by the deciding rules; the process's one
// *approval.Decider, which Slack and the API share, satisfies it: it also
// brings the Ask's other messages (Slack's) in step after a decision here.
type Decider interface {
	Decide(ctx context.Context, v approval.Vote) (approval.Result, error)
	// MayApprove says whether a push of a is for the console's user.
	MayApprove(a pending.Ask, v approval.Voter) bool
}

// Config wires a Console.
type Config struct {
	Asks   Asks
	Grants Grants
	// Live carries the round trip's notifications to the open pages; it
	// must be one of the approval core's notifiers.
	Live *Live
	// ScopeText states the grant "Approve for session" records
	// (approval.ScopeText of the core's ScopeFor); "" means the Ask offers
	// no session approval. Nil offers it on no Ask.
	ScopeText func(pending.Ask) string
	// GrantDurations are approvals.grant_durations: "Approve for 15 min"
	// and the like, offered beside "Approve for session" (granttl.go).
	GrantDurations []time.Duration
	// Decider judges the votes cast here (decide.go).
	Decider Decider
	// User is the name people signing in decide as ("console:" + User).
	User string

	// Push, when set, pushes each new Ask the console's user may decide to
	// the devices they subscribed (Web Push, push.go).
	Push *Pusher

	// TLS, when set, makes Listen serve HTTPS (console.tls_cert and
	// tls_key); the session cookie is then Secure.
	TLS *tls.Config

	Logger *slog.Logger
	Now    func() time.Time
	// DecideTimeout bounds one request's store calls; default 5s.
	DecideTimeout time.Duration
	// SessionTTL is how long a sign-in lasts; default 12h.
	SessionTTL time.Duration
}

// Console serves the approvals console.
type Console struct {
	cfg  Config
	log  *slog.Logger
	auth *auth
	page *pages
}

// DeciderPrefix marks a decision taken in the console: the decider is
// "console:<name>".
const DeciderPrefix = consoleuser.DeciderPrefix

// New checks cfg and returns a Console.
func New(cfg Config) (*Console, error) {
	if cfg.Asks == nil || cfg.Grants == nil || cfg.Live == nil || cfg.Decider == nil {
		return nil, errors.New("console: needs an ask store, a grant store, a Live notifier and a Decider")
	}
	if err := CheckName(cfg.User); err != nil {
		return nil, err
	}
	if cfg.ScopeText == nil {
		cfg.ScopeText = func(pending.Ask) string { return "" }
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DecideTimeout <= 0 {
		cfg.DecideTimeout = 5 * time.Second
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	c := &Console{
		cfg:  cfg,
		log:  cfg.Logger,
		auth: newAuth(cfg.Now, cfg.SessionTTL),
		page: newPages(),
	}
	if cfg.Push != nil {
		cfg.Live.onPost(c.announce)
	}
	return c, nil
}

// SignInLink mints a one-time sign-in token and returns the link that
// spends it, under base (e.g. "http://127.0.0.1:8080"). Each link signs in
// one browser once.
func (c *Console) SignInLink(base string) string {
	return base + "/signin?token=" + c.auth.newSignInToken()
}

// Handler returns the console's routes.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.signedIn(c.serveIndex))
	mux.HandleFunc("GET /live", c.signedIn(c.serveLive))
	mux.HandleFunc("GET /events", c.signedIn(c.serveEvents))
	mux.HandleFunc("GET /signin", c.serveSignIn)
	mux.HandleFunc("GET /console.js", serveStatic("text/javascript; charset=utf-8", consoleJS))
	mux.HandleFunc("GET /console.css", serveStatic("text/css; charset=utf-8", consoleCSS))
	mux.HandleFunc("GET /sw.js", serveStatic("text/javascript; charset=utf-8", serviceWorkerJS))
	mux.HandleFunc("GET /push/key", c.signedIn(c.servePushKey))
	mux.HandleFunc("POST /push/subscribe", c.signedIn(c.posted(c.servePushSubscribe)))
	mux.HandleFunc("POST /push/unsubscribe", c.signedIn(c.posted(c.servePushUnsubscribe)))
	mux.HandleFunc("POST /asks/{id}", c.signedIn(c.posted(c.serveDecide)))
	mux.HandleFunc("POST /grants/revoke", c.signedIn(c.posted(c.serveRevoke)))
	mux.HandleFunc("POST /signout", c.signedIn(c.posted(c.serveSignOut)))
	mux.HandleFunc("POST /signin-link", c.signedIn(c.posted(c.serveDeviceLink)))
	// The cross-origin check refuses a POST another site's page makes
	// (Sec-Fetch-Site, or Origin against Host) before the CSRF token is
	// even read.
	return securityHeaders(http.NewCrossOriginProtection().Handler(mux))
}

// Close ends the open event streams. (The message updates a decision
// here starts are the Decider's, which its own Close waits for.)
func (c *Console) Close() error {
	c.cfg.Live.close()
	return nil
}

// securityHeaders keeps the pages from being framed, sniffed or given
// script from anywhere but the console itself.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func serveStatic(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	}
}
