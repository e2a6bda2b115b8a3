package console

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// historyLen is how many decided Asks the history shows, newest first.
const historyLen = 30

// liveData is what the live part of the page shows.
type liveData struct {
	CSRF     string
	Pending  []askView
	History  []askView
	Grants   []grantView
	Problems []string // what could not be read, in words
}

// pageData is the whole page.
type pageData struct {
	User  string
	Push  bool   // Web Push is on: "Notify me" also subscribes this device
	Flash string // the outcome of the last form, e.g. who decided first
	Error bool
	Live  liveData
}

// load reads what the page shows. A store that fails leaves its part
// empty with a problem stated, never a page that claims nothing is pending.
func (c *Console) load(ctx context.Context, s *session) liveData {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DecideTimeout)
	defer cancel()
	now := c.cfg.Now()
	d := liveData{CSRF: s.csrf}
	sessions := map[string]bool{}

	open, err := c.cfg.Asks.ListPending(ctx, pending.Filter{})
	if err != nil {
		c.log.Warn("console: could not list pending asks", "err", err)
		d.Problems = append(d.Problems, "The pending requests could not be read from the store; reload in a moment.")
	}
	for _, a := range open {
		d.Pending = append(d.Pending, c.viewAsk(a, now))
		sessions[a.SessionID] = true
	}

	// The history is the audit trail's newest decided events, read from
	// its end (not the whole trail on every refresh), each completed from
	// the record while it is kept.
	events, err := c.cfg.Asks.AuditLatest(ctx, pending.EventDecided, historyLen)
	if err != nil {
		c.log.Warn("console: could not read the audit trail", "err", err)
		d.Problems = append(d.Problems, "The history could not be read from the audit trail.")
	}
	for _, e := range events {
		a, err := c.cfg.Asks.Get(ctx, e.AskID)
		if err != nil {
			// Garbage-collected (retention) or unreadable: the event alone.
			a = pending.Ask{ID: e.AskID, Request: pending.Request{RunID: e.RunID, Tool: e.Tool},
				Status: pending.Status(e.Outcome), DecidedBy: e.By, DecisionReason: e.Reason, DecidedAt: e.At}
		}
		v := c.viewAsk(a, now)
		v.Known = err == nil
		d.History = append(d.History, v)
		sessions[a.SessionID] = true
	}

	// Grants are listed per session: the standing ones ("") and those of
	// the sessions of the Asks above (the store has no list of sessions).
	sessions[""] = true
	for _, sid := range slices.Sorted(maps.Keys(sessions)) {
		gs, err := c.cfg.Grants.List(ctx, sid)
		if err != nil {
			c.log.Warn("console: could not list grants", "session", sid, "err", err)
			d.Problems = append(d.Problems, "Some grants could not be read from the store.")
			continue
		}
		for _, g := range gs {
			d.Grants = append(d.Grants, viewGrant(g))
		}
	}
	return d
}

func (c *Console) serveIndex(w http.ResponseWriter, r *http.Request, s *session) {
	c.page.index(w, http.StatusOK, pageData{User: DeciderPrefix + s.name, Push: c.cfg.Push != nil, Live: c.load(r.Context(), s)})
}

// serveLive is GET /live: the live part alone, which the page swaps in
// when an event says something changed.
func (c *Console) serveLive(w http.ResponseWriter, r *http.Request, s *session) {
	c.page.live(w, c.load(r.Context(), s))
}

// serveDecide is POST /asks/{id}: action=approve|approve_session|deny, with
// an optional reason for deny, and grant_ttl with approve_session. It
// parses the form, lets the approval Decider judge the vote (the same
// rules as a Slack click or an API decision) and words its Result
// (decide.go).
func (c *Console) serveDecide(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	outcome, ok := approval.OutcomeOf(r.PostForm.Get("action"))
	if !ok {
		c.flash(w, r, s, http.StatusBadRequest, "Unknown action; nothing changed.")
		return
	}
	reason := ""
	if outcome == pending.Denied {
		reason = strings.TrimSpace(r.PostForm.Get("reason"))
		if rs := []rune(reason); len(rs) > MaxDenyReason {
			reason = string(rs[:MaxDenyReason]) + "…"
		}
	}
	v := c.vote(id, outcome, reason, s)
	if form := r.PostForm.Get("grant_ttl"); form != "" {
		v.Life, _ = time.ParseDuration(form) // malformed: 0, which no duration is
		v.LifeChosen = true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), c.cfg.DecideTimeout)
	defer cancel()
	res, _ := c.cfg.Decider.Decide(ctx, v)
	c.worded(w, r, s, id, res)
}

// serveRevoke is POST /grants/revoke: session (empty for a standing
// grant) and grant.
func (c *Console) serveRevoke(w http.ResponseWriter, r *http.Request, s *session) {
	sid, gid := r.PostForm.Get("session"), r.PostForm.Get("grant")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), c.cfg.DecideTimeout)
	defer cancel()
	err := c.cfg.Grants.Revoke(ctx, sid, gid)
	switch grants.ErrorCode(err) {
	case "":
		c.log.Info("grant revoked", "grant", gid, "session", sid, "by", DeciderPrefix+s.name)
		c.cfg.Live.wake()
		http.Redirect(w, r, "/", http.StatusSeeOther)
	case grants.CodeNotFound:
		c.flash(w, r, s, http.StatusNotFound, "That grant is gone already (revoked, or its session ended).")
	case grants.CodeInvalid:
		c.flash(w, r, s, http.StatusBadRequest, "This form does not name a valid grant; nothing changed.")
	default:
		c.log.Warn("console: grant not revoked", "grant", gid, "session", sid, "err", err)
		c.flash(w, r, s, http.StatusServiceUnavailable, "askops could not revoke the grant right now; nothing changed. Please try again in a moment.")
	}
}

// flash renders the page with msg at the top and status.
func (c *Console) flash(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	c.page.index(w, status, pageData{
		User: DeciderPrefix + s.name, Flash: msg, Error: status >= 400,
		Live: c.load(context.WithoutCancel(r.Context()), s),
	})
}

// fmtTime shows t to the minute in UTC; the page's script shows it in the
// reader's zone.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// isoTime is t for a <time datetime=…> attribute.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
