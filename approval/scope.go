package approval

import (
	"time"
	"unicode/utf8"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// DefaultScopeFor is the grant "Approve for session" records for a: the
// policy's default scope (grants.ScopeFor) of the call the Ask is about,
// from its description (the command as it runs, for bash).
//
// A file tool's scope is built from the path in the form the policy judged
// the call (Request.Path: absolute, symlinks resolved), because that is the
// form it will see the same call in next time. The model's own path may go
// through a symlink: with alias -> real, "alias/a.txt" reaches the policy as
// <workspace>/real/a.txt, so a grant on "alias/a.txt" would never cover the
// identical call again, and the dialog would name another path than the
// message's summary. A grant on "real/a.txt" covers exactly that file, by
// whatever link it is reached, and nothing once the link points elsewhere:
// it never widens. Asks without Request.Path (recorded by callers that do
// not resolve paths) fall back to the path as given.
func DefaultScopeFor(a pending.Ask) (grants.Scope, error) {
	d := a.Describe()
	c := policy.Call{
		Tool: a.Tool, Cwd: a.Cwd, Workspace: a.Workspace, SessionID: a.SessionID,
	}
	switch {
	case a.Tool == policy.ToolBash:
		c.Command = d.Command
	case a.Path != "":
		c.Path = a.Path
	default:
		c.Path = d.Path
	}
	return grants.ScopeFor(c)
}

// ScopeText turns a scope function into the text a notifier's confirm
// dialog states for "Approve for session", so it states exactly the scope
// the Core will record, and names the session it is for; "" means the Ask
// offers no session approval. What an Ask offers was decided when it was
// made (Core.Launch: pending.Shown); an Ask recorded before that is worked
// out as then: no session, or no scope, offers nothing. A nil scopeFor is
// DefaultScopeFor.
func ScopeText(scopeFor ScopeFunc) func(pending.Ask) string {
	if scopeFor == nil {
		scopeFor = DefaultScopeFor
	}
	return func(a pending.Ask) string {
		if offered, known := a.OffersSession(); known {
			if !offered {
				return ""
			}
			name, started := askview.Session(a)
			return namedScope(a.Shown.Scope, askview.SessionText(name, started, a.CreatedAt))
		}
		if a.SessionID == "" {
			return ""
		}
		s, err := scopeFor(a)
		if err != nil {
			return ""
		}
		return s.String()
	}
}

// namedScope is a scope's text with the session it is for, as a person
// knows it: its name and start, in plain text (a confirmation dialog
// formats no dates, so it says UTC).
func namedScope(scope, session string) string {
	if session == "" {
		return scope
	}
	return scope + " — in " + session
}

// offersSession is the rule of issue 24: "Approve for session" is offered
// only where a later call can match the grant, in a session that is more
// than this Ask (a Slack thread, a bot run, an agent's session, a bot ask
// with -session), and never on an Ask that needs several approvals (one
// person cannot grant what takes two).
func offersSession(req pending.Request) bool {
	return req.SessionID != "" && !req.OneOff && req.Approvals < 2
}

// MaxScopeRunes is the longest scope text an Ask offers and stores: no
// longer fits Slack's confirmation (300 characters with its words), and
// the Ask's record has a budget.
const MaxScopeRunes = 300

// Prepare is req as its Ask is recorded: with what is shown of it that
// is worked out once, when the Ask is made (pending.Shown): the programs
// and effects the door prepared from the verdict (askview.Prepare), and whether "Approve for session" is offered, with
// what scope and which time-boxed lives. A scope that cannot be derived
// offers nothing. Launch calls it; every surface then reads the Ask.
func (c *Core) Prepare(req pending.Request) pending.Request {
	var s pending.Shown
	if req.Shown != nil { // the door's, from the verdict's reading
		s = *req.Shown
	} else {
		s = askview.ReadHere(req)
	}
	req.Shown = &s
	if !offersSession(req) {
		return req
	}
	scope, err := c.cfg.ScopeFor(pending.Ask{Request: req})
	if err != nil {
		return req
	}
	text := scope.String()
	if utf8.RuneCountInString(text) > MaxScopeRunes {
		// Nobody grants what they cannot read whole (Slack's confirmation
		// holds 300 characters), and the record keeps no more.
		return req
	}
	s.Scope = text
	for _, life := range c.cfg.GrantDurations {
		s.GrantLives = append(s.GrantLives, int64(life/time.Second))
	}
	return req
}
