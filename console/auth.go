package console

import (
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/askops/askops/internal/recordid"

	"github.com/askops/askops/internal/consoleuser"
)

// cookieName is the session cookie.
const cookieName = "askops_console"

// auth holds the one-time sign-in tokens and the signed-in sessions, in
// memory: a restarted serve prints a new link.
type auth struct {
	now func() time.Time
	ttl time.Duration

	mu       sync.Mutex
	signIn   map[string]struct{} // unspent sign-in tokens
	sessions map[string]*session // by cookie value
}

// session is one signed-in browser.
type session struct {
	id      string
	name    string // who decides: Config.User
	csrf    string // the token every form of this session carries
	expires time.Time
}

func newAuth(now func() time.Time, ttl time.Duration) *auth {
	return &auth{now: now, ttl: ttl, signIn: map[string]struct{}{}, sessions: map[string]*session{}}
}

func (a *auth) newSignInToken() string {
	t := recordid.Secret()
	a.mu.Lock()
	a.signIn[t] = struct{}{}
	a.mu.Unlock()
	return t
}

// spend exchanges an unspent sign-in token for a new session; a token
// works once.
func (a *auth) spend(token, name string) (*session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	found := ""
	for t := range a.signIn {
		// Constant-time per candidate: the token is the only secret.
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			found = t
		}
	}
	if found == "" {
		return nil, false
	}
	delete(a.signIn, found)
	s := &session{id: recordid.Secret(), name: name, csrf: recordid.Secret(), expires: a.now().Add(a.ttl)}
	a.sessions[s.id] = s
	return s, true
}

// lookup returns the live session a cookie value names.
func (a *auth) lookup(id string) (*session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, false
	}
	if !a.now().Before(s.expires) {
		delete(a.sessions, id)
		return nil, false
	}
	return s, true
}

func (a *auth) end(id string) {
	a.mu.Lock()
	delete(a.sessions, id)
	a.mu.Unlock()
}

// CheckName refuses a decider name that could pose as something else in
// the audit trail or a Slack message.
func CheckName(name string) error { return consoleuser.Check(name) }

// serveSignIn is GET /signin?token=…: spend the one-time token, set the
// session cookie, and go to the list. The token leaves the address bar at
// once (the redirect), and is dead anyway.
func (c *Console) serveSignIn(w http.ResponseWriter, r *http.Request) {
	s, ok := c.auth.spend(r.URL.Query().Get("token"), c.cfg.User)
	if !ok {
		c.log.Warn("console sign-in refused: unknown or spent token", "remote", r.RemoteAddr)
		c.page.message(w, http.StatusForbidden, "This sign-in link is not valid",
			"It was used already, or it is not one this askops made. Each link signs in one browser once: ask a signed-in console for a new one (\"Sign in on another device\"), or restart `bot serve` for a fresh one in its terminal.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: s.id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure:  r.TLS != nil,
		Expires: s.expires,
	})
	c.log.Info("console signed in", "user", s.name, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// signedIn passes the request's session to next, or refuses it.
func (c *Console) signedIn(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(cookieName)
		var s *session
		ok := false
		if err == nil {
			s, ok = c.auth.lookup(ck.Value)
		}
		if !ok {
			c.page.message(w, http.StatusUnauthorized, "Sign in first",
				"Open the sign-in link `bot serve` printed in its terminal. Each link signs in one browser once.")
			return
		}
		next(w, r, s)
	}
}

// posted checks a form's CSRF token against the session's before next
// runs (the cross-origin check has already run).
func (c *Console) posted(next func(http.ResponseWriter, *http.Request, *session)) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			c.page.message(w, http.StatusBadRequest, "Bad form", "The form could not be read; nothing changed.")
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
			c.log.Warn("console form refused: bad CSRF token", "user", s.name, "path", r.URL.Path, "remote", r.RemoteAddr)
			c.page.message(w, http.StatusForbidden, "Form refused",
				"This form did not carry this session's token, so nothing changed. Reload the console and try again.")
			return
		}
		next(w, r, s)
	}
}

func (c *Console) serveSignOut(w http.ResponseWriter, r *http.Request, s *session) {
	c.auth.end(s.id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	c.page.message(w, http.StatusOK, "Signed out",
		"This browser is signed out; nothing else changed (pending requests keep waiting). To sign in again, use \"Sign in on another device\" in a console that is still signed in, or restart `bot serve` for a new link in its terminal.")
}
