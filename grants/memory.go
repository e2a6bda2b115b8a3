package grants

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/askops/askops/policy"
)

// MemoryStore is the embedded, single-process Store. It obeys the same
// contract as RedisStore.
type MemoryStore struct {
	opts     Options
	prefixes prefixCache
	sealer   sealer

	mu        sync.Mutex
	closed    bool
	sessions  map[string]*memSession
	standing  map[string]Grant
	nextSweep int // drop expired sessions when len(sessions) reaches this
}

// minSweep is the session count below which expired sessions are only
// dropped when touched; above it Record sweeps, amortized O(1) per Record.
const minSweep = 64

// memSession is one session's grants; they all die at expiresAt, which every
// Record (and Touch) pushes out, as the Redis key's TTL is.
type memSession struct {
	expiresAt time.Time
	grants    map[string]Grant
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore(opts Options) *MemoryStore {
	return &MemoryStore{
		opts:      opts.withDefaults(),
		sealer:    newSealer(opts.SealKey, true),
		sessions:  map[string]*memSession{},
		standing:  map[string]Grant{},
		nextSweep: minSweep,
	}
}

// Record adds a session grant and pushes the session's expiry to now+ttl.
// Only the winner of a "for session" decision may call it.
func (m *MemoryStore) Record(ctx context.Context, sessionID string, s Scope, by string, ttl time.Duration) (Grant, error) {
	return m.RecordFor(ctx, sessionID, s, by, ttl, 0)
}

// RecordFor is Record of a time-boxed grant: it lives life (0: the
// session's ttl), never past its session.
func (m *MemoryStore) RecordFor(ctx context.Context, sessionID string, s Scope, by string, ttl, life time.Duration) (Grant, error) {
	const op = "record"
	if err := checkSessionID(op, sessionID); err != nil {
		return Grant{}, err
	}
	if err := checkTTL(op, ttl); err != nil {
		return Grant{}, err
	}
	g, err := newGrant(op, sessionID, s, by, m.opts.Now(), ttl, m.sealer)
	if err != nil {
		return Grant{}, err
	}
	if err := g.boxIn(op, life); err != nil {
		return Grant{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return Grant{}, err
	}
	if len(m.sessions) >= m.nextSweep {
		m.sweep(g.CreatedAt)
	}
	sess := m.live(sessionID, g.CreatedAt)
	if sess == nil {
		sess = &memSession{grants: map[string]Grant{}}
		m.sessions[sessionID] = sess
	}
	sess.expiresAt = g.ExpiresAt
	sess.grants[g.ID] = g
	return g, nil
}

// RecordStanding adds a standing grant (no expiry). Admin paths only.
func (m *MemoryStore) RecordStanding(ctx context.Context, s Scope, by string) (Grant, error) {
	const op = "record standing"
	g, err := newGrant(op, "", s, by, m.opts.Now(), 0, m.sealer)
	if err != nil {
		return Grant{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return Grant{}, err
	}
	m.standing[g.ID] = g
	return g, nil
}

// Touch pushes a live session's expiry to now+ttl (session activity); a
// session with no live grants is left alone.
func (m *MemoryStore) Touch(ctx context.Context, sessionID string, ttl time.Duration) error {
	const op = "touch"
	if err := checkSessionID(op, sessionID); err != nil {
		return err
	}
	if err := checkTTL(op, ttl); err != nil {
		return err
	}
	now := msUTC(m.opts.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return err
	}
	if sess := m.live(sessionID, now); sess != nil {
		sess.expiresAt = now.Add(ttl.Truncate(time.Millisecond))
	}
	return nil
}

// Match returns the oldest live session grant covering c, else the oldest
// standing grant covering it.
func (m *MemoryStore) Match(ctx context.Context, sessionID string, c policy.Call) (Grant, bool, error) {
	const op = "match"
	if err := checkScope(op, sessionID); err != nil {
		return Grant{}, false, err
	}
	now := msUTC(m.opts.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return Grant{}, false, err
	}
	if sessionID != "" {
		if sess := m.live(sessionID, now); sess != nil {
			if g, ok := oldestCovering(liveAt(maps.Values(sess.grants), sess.expiresAt, now), c, &m.prefixes, m.sealer); ok {
				return g, true, nil
			}
		}
	}
	g, ok := oldestCovering(maps.Values(m.standing), c, &m.prefixes, m.sealer)
	return g, ok, nil
}

// GrantFor is Match shaped for policy.GrantChecker.
func (m *MemoryStore) GrantFor(ctx context.Context, sessionID string, c policy.Call) (string, bool, error) {
	return grantFor(ctx, m, sessionID, c)
}

// List returns the session's live grants, oldest first; "" lists standing grants.
func (m *MemoryStore) List(ctx context.Context, sessionID string) ([]Grant, error) {
	const op = "list"
	if err := checkScope(op, sessionID); err != nil {
		return nil, err
	}
	now := msUTC(m.opts.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return nil, err
	}
	var gs []Grant
	if sessionID == "" {
		for _, g := range m.standing {
			gs = append(gs, g)
		}
	} else if sess := m.live(sessionID, now); sess != nil {
		for g := range liveAt(maps.Values(sess.grants), sess.expiresAt, now) {
			gs = append(gs, g)
		}
	}
	sortGrants(gs)
	return gs, nil
}

// Revoke removes one grant of the session ("" for a standing grant).
func (m *MemoryStore) Revoke(ctx context.Context, sessionID, grantID string) error {
	const op = "revoke"
	if err := checkScope(op, sessionID); err != nil {
		return err
	}
	if err := checkGrantID(op, grantID); err != nil {
		return err
	}
	now := msUTC(m.opts.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return err
	}
	grants := m.standing
	if sessionID != "" {
		sess := m.live(sessionID, now)
		if sess == nil {
			return notFound(op, sessionID, grantID)
		}
		grants = sess.grants
	}
	if _, ok := grants[grantID]; !ok {
		return notFound(op, sessionID, grantID)
	}
	delete(grants, grantID)
	return nil
}

// RevokeSession removes all of a session's grants; an unknown session is not an error.
func (m *MemoryStore) RevokeSession(ctx context.Context, sessionID string) error {
	const op = "revoke session"
	if err := checkSessionID(op, sessionID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.usable(op); err != nil {
		return err
	}
	delete(m.sessions, sessionID)
	return nil
}

// Close makes every later call fail with CodeUnavailable.
func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.sessions, m.standing = nil, nil
	return nil
}

func (m *MemoryStore) usable(op string) error {
	if m.closed {
		return &Error{Store: "grants", Code: CodeUnavailable, Op: op, Msg: "store closed"}
	}
	return nil
}

// sweep drops every expired session, so sessions nobody touches again do not
// pile up in a long-running process. Called with mu held.
func (m *MemoryStore) sweep(now time.Time) {
	for id, sess := range m.sessions {
		if !now.Before(sess.expiresAt) {
			delete(m.sessions, id)
		}
	}
	m.nextSweep = max(minSweep, 2*len(m.sessions))
}

// live returns the session if it has not expired at now, dropping it if it
// has (so an expired session's grants can never come back). Called with mu held.
func (m *MemoryStore) live(sessionID string, now time.Time) *memSession {
	sess, ok := m.sessions[sessionID]
	if !ok {
		return nil
	}
	if !now.Before(sess.expiresAt) {
		delete(m.sessions, sessionID)
		return nil
	}
	return sess
}
