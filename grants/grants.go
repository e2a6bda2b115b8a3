// Package grants records what a human granted beyond one call: session grants
// ("Approve for session", dying with the session's TTL) and standing grants
// (recorded only by an admin, until revoked). A grant has a scope that never
// widens: an exact bash command in one directory, a safe command prefix, or a
// path or directory inside the workspace.
//
// A session grant is written only by the winning "for session" decision: the
// wiring calls Record strictly after pending.Decide reported that this
// decision won (the waiter records once Wait returns approved_session). A
// "for session" click that lost to a Deny must leave nothing behind, so
// nothing else may call Record.
//
// All of a session's grants share one expiry, pushed to now+ttl by each
// Record (and by Touch, for session activity); an expired session's grants
// never match and are never revived by a later Record. Standing grants have
// no expiry and are recorded only through RecordStanding, an admin path.
//
// Exact and path scopes are checked lexically: file paths are cleaned and
// workspace-relative (a path with a ".." element is never covered), bash
// working directories are absolute and compared exactly. Following symlinks
// out of the workspace is refused by the tools themselves. A prefix scope is
// closed-world: it covers a call only when every word is in the policy's
// model of the program (policy.PrefixNotCovered), which looks at the files
// and the repository as they are when the call comes. Any doubt means "not
// covered".
package grants

import (
	"context"
	"time"

	"github.com/askops/askops/policy"
)

// Kind is the shape of a grant's scope.
type Kind string

const (
	KindExact  Kind = "exact"  // bash: this exact command in this cwd
	KindPrefix Kind = "prefix" // bash: a single simple command starting with these words, in this cwd
	KindPath   Kind = "path"   // file tool: this path
	KindDir    Kind = "dir"    // file tool: anything under this directory
)

// Scope is what a grant covers.
type Scope struct {
	Tool    string `json:"tool"`
	Kind    Kind   `json:"kind"`
	Command string `json:"command,omitempty"` // exact command or prefix (bash); redacted when sealed
	// CommandMAC, when set, is the keyed hash of an exact command that held
	// a secret; the scope then matches by it (see sealed.go).
	CommandMAC string `json:"command_mac,omitempty"`
	Cwd        string `json:"cwd,omitempty"`  // bash: the working directory it applies in
	Path       string `json:"path,omitempty"` // file tools: workspace-relative, cleaned
	// Workspace is, for a scope made for one workspace (a standing grant,
	// by bot grants add), that workspace, absolute and clean: a file
	// scope's path means a file there, and a prefix scope's files are
	// judged against it, never a wider workspace of the session calling.
	// A scope naming one covers calls in that workspace only. A standing
	// file grant naming none covers nothing (its relative path would name
	// a file in every workspace), and a standing prefix grant naming none
	// judges its files inside its own directory (store.go, oldestCovering);
	// a session's grants need none, the session's workspace being pinned.
	Workspace string `json:"workspace,omitempty"`
}

// Grant is a recorded scope.
type Grant struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id,omitempty"` // empty for standing grants
	Scope     Scope     `json:"scope"`
	By        string    `json:"by"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"` // zero for standing grants
	// Until is a time-boxed grant's own end ("Approve for 15 min"), before
	// its session's; zero means the grant lives as long as the session.
	// ExpiresAt, as the stores hand grants out, is the earlier of the two.
	Until time.Time `json:"until,omitzero"`
}

// Standing reports whether g is a standing (admin) grant.
func (g Grant) Standing() bool { return g.SessionID == "" }

// Store records and matches grants. Both implementations (Redis and memory)
// obey one contract, checked by the contract test suite.
type Store interface {
	// Record adds a session grant that lives ttl (the session's TTL; each
	// record refreshes it). The scope is validated (see Scope.Validate).
	Record(ctx context.Context, sessionID string, s Scope, by string, ttl time.Duration) (Grant, error)
	// RecordFor is Record of a time-boxed grant (see boxed.go): it lives
	// life from now, or as long as the session if that is sooner; life 0
	// is Record.
	RecordFor(ctx context.Context, sessionID string, s Scope, by string, ttl, life time.Duration) (Grant, error)
	// RecordStanding adds a standing grant; only an admin path may call it.
	RecordStanding(ctx context.Context, s Scope, by string) (Grant, error)
	// Match returns a grant of the session, or a standing grant, covering c.
	Match(ctx context.Context, sessionID string, c policy.Call) (Grant, bool, error)
	// GrantFor is Match shaped for policy.GrantChecker.
	GrantFor(ctx context.Context, sessionID string, c policy.Call) (string, bool, error)
	// List returns the session's live grants ("" lists standing grants).
	List(ctx context.Context, sessionID string) ([]Grant, error)
	// Revoke removes one grant; RevokeSession removes all of a session's.
	Revoke(ctx context.Context, sessionID, grantID string) error
	RevokeSession(ctx context.Context, sessionID string) error
	Close() error
}

var _ policy.GrantChecker = Store(nil)
