package grants

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
)

// Options configure a store.
type Options struct {
	Now    func() time.Time // the clock; nil means time.Now
	Logger *slog.Logger     // nil discards (corrupt records are logged, never matched)
	// SealKey keys the hash that exact commands holding a secret are
	// recorded by (see sealed.go). Every process sharing a store needs the
	// same key. Empty: the memory store makes a random one (it lives in one
	// process); the Redis store refuses to record a command holding a secret.
	SealKey []byte
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// maxSessionID bounds a session id; longer ids are refused as invalid.
const maxSessionID = 256

func checkSessionID(op, id string) error {
	switch {
	case id == "":
		return invalid(op, "empty session id")
	case len(id) > maxSessionID:
		return invalid(op, "session id longer than %d bytes", maxSessionID)
	case strings.ContainsFunc(id, unicode.IsControl):
		return invalid(op, "session id contains control characters")
	}
	return nil
}

// checkScope checks the session id of a call that takes "" for the
// standing grants.
func checkScope(op, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	return checkSessionID(op, sessionID)
}

func checkTTL(op string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return invalid(op, "ttl %v must be at least 1ms", ttl)
	}
	return nil
}

// newGrant validates a Record / RecordStanding call and builds the grant.
// Times are UTC and whole milliseconds, so both stores return equal values.
func newGrant(op, sessionID string, s Scope, by string, now time.Time, ttl time.Duration, z sealer) (Grant, error) {
	if err := s.Validate(); err != nil {
		return Grant{}, err
	}
	s, err := z.seal(op, s)
	if err != nil {
		return Grant{}, err
	}
	if strings.TrimSpace(by) == "" {
		return Grant{}, invalid(op, "empty grantor")
	}
	if sessionID == "" && s.Workspace == "" && isFileTool(s.Tool) {
		// Matched against every session: without its workspace the
		// path would name a file in whichever workspace the calling
		// session has.
		return Grant{}, invalid(op, "a standing file grant must name its workspace")
	}
	g := Grant{ID: recordid.New(), SessionID: sessionID, Scope: s, By: by, CreatedAt: msUTC(now)}
	if sessionID != "" {
		g.ExpiresAt = g.CreatedAt.Add(ttl.Truncate(time.Millisecond)) // whole ms, as Redis keeps it
	}
	return g, nil
}

func msUTC(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// PlausibleID reports whether id could name a grant: one recordid.New
// made, or one of the 22-character base64url ids grants had before (still
// stored, until they expire or are revoked). Anything else is unknown
// without asking the store, and cannot name a store-internal field.
func PlausibleID(id string) bool {
	if recordid.Valid(id) {
		return true
	}
	if len(id) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

func checkGrantID(op, id string) error {
	if id == "" {
		return invalid(op, "empty grant id")
	}
	if !PlausibleID(id) {
		return &Error{Store: "grants", Code: CodeNotFound, Op: op, Msg: fmt.Sprintf("no grant %q", id)}
	}
	return nil
}

func notFound(op, sessionID, id string) error {
	if sessionID == "" {
		return &Error{Store: "grants", Code: CodeNotFound, Op: op, Msg: fmt.Sprintf("no standing grant %q", id)}
	}
	return &Error{Store: "grants", Code: CodeNotFound, Op: op, Msg: fmt.Sprintf("no grant %q in session %q (revoked, expired, or never made)", id, sessionID)}
}

// sortGrants orders grants oldest first, so List and Match are deterministic.
func sortGrants(gs []Grant) {
	slices.SortFunc(gs, grantOrder)
}

// oldestCovering returns the oldest of gs (in List's order) covering c. It
// checks every grant rather than sorting first: a sort of large records
// costs more than the checks, which parse the call at most once.
func oldestCovering(gs iter.Seq[Grant], c policy.Call, prefixes *prefixCache, z sealer) (Grant, bool) {
	v := &callView{Call: c, prefixes: prefixes, sealer: &z}
	var best Grant
	found := false
	for g := range gs {
		if found && grantOrder(g, best) >= 0 {
			continue
		}
		if g.Standing() && g.Scope.Workspace == "" && isFileTool(g.Scope.Tool) {
			// A standing file grant recorded before scopes named their
			// workspace: its relative path would name a file in every
			// session's workspace, which its admin never saw. Re-add it.
			continue
		}
		within := ""
		if g.Standing() && g.Scope.Workspace == "" {
			// A standing prefix grant naming no workspace: its files
			// are judged inside its own directory, never the wider
			// workspace of whichever session calls.
			within = g.Scope.Cwd
		}
		if g.Scope.coversIn(v, within) {
			best, found = g, true
		}
	}
	return best, found
}

func grantOrder(a, b Grant) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// grantFor is every store's GrantFor: s's Match, the grant described.
func grantFor(ctx context.Context, s Store, sessionID string, c policy.Call) (string, bool, error) {
	g, ok, err := s.Match(ctx, sessionID, c)
	if err != nil || !ok {
		return "", false, err
	}
	return describe(g), true, nil
}

// describe is GrantFor's text: `grant <id> (<scope>) by <by>`.
func describe(g Grant) string { return fmt.Sprintf("grant %s (%s) by %s", g.ID, g.Scope, g.By) }
