package approval

import (
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
// the Core will record; "" (no session, or no scope) means the Ask offers no
// session approval. A nil scopeFor is DefaultScopeFor.
func ScopeText(scopeFor ScopeFunc) func(pending.Ask) string {
	if scopeFor == nil {
		scopeFor = DefaultScopeFor
	}
	return func(a pending.Ask) string {
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
