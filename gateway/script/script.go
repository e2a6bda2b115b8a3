// Package script is the door of `bot ask` (a script asking before it runs
// a command): the request it makes, in the sessions the other front doors
// use, and the policy's one evaluation that may spare the human, with the
// Ask it then answers. Its flags, output and exit codes are cmd/bot's.
package script

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
	"github.com/askops/askops/sessions"
)

// Question is a script's question: the command line it would run and
// what it says about itself.
type Question struct {
	Command string // shell-quoted (shellquote.Join)
	Reason  string // "" means a generic reason
	Label   string // who is asking; "" means "bot ask on HOST"
	Session string // "" means no session
	User    string // $USER; "" means "unknown user"
	Host    string // this machine's name
	Cwd     string // the working directory, also the workspace
}

// Request describes the command as the bash tool would, so policies,
// scopes and rendering treat it the same.
func (s Question) Request() pending.Request {
	args, _ := json.Marshal(map[string]string{"command": s.Command})
	who := s.User
	if who == "" {
		who = "unknown user"
	}
	if s.Host != "" {
		who += "@" + s.Host
	}
	label := s.Label
	if label == "" {
		label = "bot ask on " + s.Host
	}
	reason := s.Reason
	if reason == "" {
		reason = "a script asked before running this command (bot ask)"
	}
	return pending.Request{
		RunID:     recordid.NewRun(),
		SessionID: sessions.Key(who, s.Session), // the asker's: see sessions.Key
		Workspace: s.Cwd,
		Label:     label,
		StartedBy: who,
		Tool:      "bash",
		Args:      string(args),
		Call:      pending.Call{Kind: pending.CallCommand, Command: s.Command},
		Summary:   s.Command,
		Reason:    reason,
		Cwd:       s.Cwd,

		SessionName: sessionName(s.Session),
		OneOff:      s.Session == "", // its session is its own: nothing later shares it
	}
}

// Starts is what Start needs of the session store (sessions.Store).
type Starts interface {
	PinStart(ctx context.Context, session string, now time.Time, ttl time.Duration) (time.Time, error)
}

// Start is when the session of req, a bot ask's request, was first
// seen, recorded in store now if it was not (ttl: the session's life,
// 0: 24h): bot ask -config's side of what the gateway does for each call,
// so every ask of one -session names the same start. Zero for an ask
// without -session (its session is its own).
func Start(ctx context.Context, store Starts, req pending.Request, now time.Time, ttl time.Duration) (time.Time, error) {
	if req.SessionID == "" || req.OneOff {
		return time.Time{}, nil
	}
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return store.PinStart(ctx, req.SessionID, now, ttl)
}

// sessionName is a bot ask's -session as a person knows it.
func sessionName(session string) string {
	if session == "" {
		return ""
	}
	return "bot ask session " + askview.QuoteName(session)
}

// GrantMatcher is what Judge needs of the grant store; grants.Store
// satisfies it.
type GrantMatcher interface {
	Match(ctx context.Context, sessionID string, c policy.Call) (grants.Grant, bool, error)
}

// Verdict is the policy's one evaluation of a `bot ask` command:
// the verdict (its deny, its quorum, its rule) and, when a grant is what
// allowed it, that grant.
type Verdict struct {
	Verdict policy.Verdict
	Grant   grants.Grant
	Granted bool
}

// Judge asks the policy, once, about command: one of req's
// session's grants, or a standing grant (the only kind an ask without a
// session can have), may spare the human. The engine's own precedence
// decides, as for the agent: deny rules, built-in dangers and an
// unparsable command come before grants, so a grant never spares the
// human a command the policy denies or finds dangerous (a "git push"
// grant is not a force push to main). Only a grant skips the human here:
// rules that allow, or mode full, do not (the mode is fixed to ask), since
// a script asked because it wants a human. The verdict's deny and quorum
// are the caller's to carry out: a front door that drops them lets one
// approval through where the rules need two. Any doubt (a store error, a
// policy that cannot be built) means ask.
func Judge(ctx context.Context, rules []policy.Rule, store GrantMatcher, req pending.Request, command string, log *slog.Logger) Verdict {
	seen := &grantSeen{store: store}
	engine, err := policy.New(policy.Config{Rules: rules, Grants: seen, Logger: log.With("component", "policy")})
	if err != nil {
		log.Warn("could not build the policy; asking", "err", err)
		return Verdict{Verdict: policy.Verdict{Decision: policy.Ask, Reason: "the policy could not be built: " + err.Error()}}
	}
	v := engine.Evaluate(ctx, policy.Call{
		Tool: req.Tool, Safety: policy.SideEffect, Command: command,
		Cwd: req.Cwd, Workspace: req.Workspace, SessionID: req.SessionID, Mode: policy.ModeScript,
	})
	if v.Decision == policy.Allow {
		if !seen.found { // the engine allows a script's call by a grant only
			return Verdict{Verdict: policy.Verdict{Decision: policy.Ask, Reason: "the grant that covered the command could not be read back"}}
		}
		return Verdict{Verdict: v, Grant: seen.grant, Granted: true}
	}
	// The reason may quote the command, secrets and all.
	log.Info("no grant covers the command", "decision", v.Decision, "rule", v.Rule, "reason", redact.Reason(v.Reason, nil, command), "approvals", v.Approvals)
	return Verdict{Verdict: v}
}

// GrantFor is Judge's grant alone.
func GrantFor(ctx context.Context, rules []policy.Rule, store GrantMatcher, req pending.Request, command string, log *slog.Logger) (grants.Grant, bool) {
	j := Judge(ctx, rules, store, req, command, log)
	return j.Grant, j.Granted
}

// Denied is the answer when the policy denies the script's command
// (a deny rule): no human is asked, as at every other front door.
func Denied(req pending.Request, v policy.Verdict) pending.Ask {
	reason := redact.Reason(v.Reason, nil, req.Call.Command, req.Summary) // it may quote the command, secrets and all
	if v.Rule != "" {
		reason += " (" + v.Rule + ")"
	}
	return pending.Ask{Request: req, Status: pending.Status(pending.Denied), DecidedBy: hook.PolicyDecider, DecisionReason: reason}
}

// Granted is the answer when grant g covers the script's request
// (see Judge): approved by the grant's owner, no human asked.
func Granted(req pending.Request, g grants.Grant) pending.Ask {
	return pending.Ask{Request: req, Status: pending.Status(pending.Approved), DecidedBy: g.By, DecisionReason: "covered by " + g.String()}
}

// grantSeen is the policy's grant checker for one bot ask: the grant store,
// keeping the grant it matched so the answer can say whose it is.
type grantSeen struct {
	store GrantMatcher
	grant grants.Grant
	found bool
}

func (s *grantSeen) GrantFor(ctx context.Context, sessionID string, c policy.Call) (string, bool, error) {
	g, ok, err := s.store.Match(ctx, sessionID, c)
	if err != nil || !ok {
		return "", false, err
	}
	s.grant, s.found = g, true
	return g.ID, true, nil
}
