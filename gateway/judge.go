package gateway

import (
	"context"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/internal/recordid"
)

// This file is what the gateway knows of a call because its callers are
// agents it does not run: whose session a call belongs to (the caller's,
// whatever id it names) and which directory is the session's workspace
// (pinned when the session is first seen, never the request's cwd). How a
// path is judged when askops cannot look at the files is the policy's
// (policy/filecall.go).

// sessionName is an agent's session as a person knows it (issue 24): the
// agent and where it works, and the id only when the caller chose it
// ("this bot ask on lap session 'nightly' in ~/src/api"). A generated id
// (Claude Code's and Codex's are UUIDs, bot mcp's an askops id) is left
// out: nobody knows their session by it, and its start, shown beside the
// name, tells two sessions of one agent in one place apart ("this Claude
// Code session in ~/src/api, started 14:02"). Only when the start is not
// known does the id's head stand in ("this Claude Code session 3f2a… in
// ~/src/api"). "" for no session.
func sessionName(agent, session, workspace string, started bool) string {
	if session == "" {
		return ""
	}
	if agent == "" {
		agent = "agent"
	}
	name := "this " + agent + " session"
	switch {
	case !generatedID(session):
		name += " " + askview.QuoteName(session)
	case !started:
		name += " " + shortID(session)
	}
	if workspace != "" {
		name += " in " + homeShort(workspace)
	}
	return name
}

// uuidForm is a UUID's text form, whatever its version.
var uuidForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// generatedID reports whether a session id was made by a program rather
// than chosen by a person: a UUID, or an askops id (bot mcp's "ses_…").
func generatedID(id string) bool {
	return uuidForm.MatchString(id) || recordid.ValidSession(id) || recordid.ValidRun(id)
}

// rootOf is the workspace root a cwd proposes: the cwd itself, cut above
// any .git in it (whatever its case), so a session first seen in
// <ws>/.git still has <ws> as its root and .git stays protected. The file
// system's root is no workspace ("": every path is outside, so it asks):
// a session first seen at / (Codex lets the model choose each call's cwd)
// must not make the whole disk its workspace.
func rootOf(cwd string) string {
	if cwd == "" || !path.IsAbs(cwd) {
		return ""
	}
	cwd = path.Clean(cwd)
	parts := strings.Split(cwd, "/")
	for i, p := range parts {
		if strings.EqualFold(p, ".git") {
			cwd = strings.Join(parts[:i], "/")
			break
		}
	}
	if cwd == "" || cwd == "/" {
		return ""
	}
	return cwd
}

// workspace is the root c's session works in: the root configured for the
// caller, else the one pinned when the session was first seen, from the
// root the agent's process gave (Call.Workspace) or, when it gave none,
// from the call's cwd. A store failure, or a call with no session, falls
// back to that root for this call only; a call with neither has no
// workspace (its paths are outside, so they ask).
func (s *Service) workspace(ctx context.Context, key string, c Call) string {
	if c.Root != "" {
		return path.Clean(c.Root)
	}
	root := rootOf(c.Cwd)
	if c.Workspace != "" {
		root = rootOf(c.Workspace)
	}
	if key == "" || root == "" {
		return root
	}
	pinned, err := s.sessions.PinRoot(ctx, key, root, s.cfg.SessionTTL)
	if err != nil {
		s.log.Warn("could not pin the session's workspace; judging against this call's cwd", "session", key, "err", err)
		return root
	}
	return pinned
}

// started is when c's session (keyed key) was first seen: recorded on its
// first call, whatever the policy says of it, and kept while calls come.
// Zero for a call with no session, a one-off's (nothing later shares it),
// or when the store fails (the Ask names the session without its start).
func (s *Service) started(ctx context.Context, key string, c Call) time.Time {
	if key == "" || c.OneOff {
		return time.Time{}
	}
	at, err := s.sessions.PinStart(ctx, key, s.cfg.Now(), s.cfg.SessionTTL)
	if err != nil {
		s.log.Warn("could not record when the session started; its asks name it without", "session", key, "err", err)
		return time.Time{}
	}
	return at
}
