package grants

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/policy"
)

// Redis layout:
//
//	askops:grants:{SESSION}   hash: grant id -> Grant JSON, plus expiresField;
//	                          key TTL = the session TTL, refreshed by each Record
//	askops:grants:standing    hash: grant id -> Grant JSON, no TTL
//
// The session's expiry is also stored in the hash (expiresField, unix ms) and
// checked against the injected clock, so a key Redis has not yet evicted
// never matches, and all of a session's grants share one expiry.
const expiresField = "!expires" // "!" is outside the base64url alphabet of grant ids

// standingKey and sessionKey are the keys above (internal/rediskey's
// stand-alone and per-entity shapes, names as they always were).
func standingKey() string { return rediskey.Default().Untagged("grants", "standing") }

func sessionKey(sessionID string) string { return rediskey.Default().Tagged("grants", sessionID) }

// recordScript adds a grant and pushes the session's expiry. An expired
// session is dropped first, so its grants cannot be revived.
// KEYS[1] session key; ARGV: id, json, now ms, expires ms, ttl ms.
var recordScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], ARGV[6])
if exp and tonumber(exp) <= tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[6], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// touchScript pushes a live session's expiry. KEYS[1] session key; ARGV: now ms, expires ms, ttl ms.
var touchScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], ARGV[4])
if not exp or tonumber(exp) <= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[4], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// revokeScript removes a grant of a live session. KEYS[1] session key; ARGV: id, now ms.
var revokeScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], ARGV[3])
if not exp or tonumber(exp) <= tonumber(ARGV[2]) then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
`)

// RedisStore keeps grants in Redis so every replica sees them. It does not
// own the client: Close leaves it open for the caller to close.
type RedisStore struct {
	rdb      redis.UniversalClient
	opts     Options
	closed   atomic.Bool
	prefixes prefixCache
	sealer   sealer
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns a store on client (single, sentinel or cluster; the
// client should have ContextTimeoutEnabled so ctx deadlines cut calls short).
func NewRedisStore(client redis.UniversalClient, opts Options) *RedisStore {
	return &RedisStore{rdb: client, opts: opts.withDefaults(), sealer: newSealer(opts.SealKey, false)}
}

// Record adds a session grant and pushes the session's expiry (and the key's
// TTL) to now+ttl. Only the winner of a "for session" decision may call it.
func (r *RedisStore) Record(ctx context.Context, sessionID string, s Scope, by string, ttl time.Duration) (Grant, error) {
	return r.RecordFor(ctx, sessionID, s, by, ttl, 0)
}

// RecordFor is Record of a time-boxed grant: it lives life (0: the
// session's ttl), never past its session.
func (r *RedisStore) RecordFor(ctx context.Context, sessionID string, s Scope, by string, ttl, life time.Duration) (Grant, error) {
	const op = "record"
	if err := r.usable(op); err != nil {
		return Grant{}, err
	}
	if err := checkSessionID(op, sessionID); err != nil {
		return Grant{}, err
	}
	if err := checkTTL(op, ttl); err != nil {
		return Grant{}, err
	}
	g, err := newGrant(op, sessionID, s, by, r.opts.Now(), ttl, r.sealer)
	if err != nil {
		return Grant{}, err
	}
	if err := g.boxIn(op, life); err != nil {
		return Grant{}, err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return Grant{}, &Error{Store: "grants", Code: CodeInternal, Op: op, Msg: "could not encode the grant", Err: err}
	}
	err = recordScript.Run(ctx, r.rdb, []string{sessionKey(sessionID)},
		g.ID, b, g.CreatedAt.UnixMilli(), g.ExpiresAt.UnixMilli(), ttl.Milliseconds(), expiresField).Err()
	if err != nil {
		return Grant{}, unavailable(op, err)
	}
	return g, nil
}

// RecordStanding adds a standing grant (no expiry). Admin paths only.
func (r *RedisStore) RecordStanding(ctx context.Context, s Scope, by string) (Grant, error) {
	const op = "record standing"
	if err := r.usable(op); err != nil {
		return Grant{}, err
	}
	g, err := newGrant(op, "", s, by, r.opts.Now(), 0, r.sealer)
	if err != nil {
		return Grant{}, err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return Grant{}, &Error{Store: "grants", Code: CodeInternal, Op: op, Msg: "could not encode the grant", Err: err}
	}
	if err := r.rdb.HSet(ctx, standingKey(), g.ID, b).Err(); err != nil {
		return Grant{}, unavailable(op, err)
	}
	return g, nil
}

// Touch pushes a live session's expiry to now+ttl (session activity); a
// session with no live grants is left alone.
func (r *RedisStore) Touch(ctx context.Context, sessionID string, ttl time.Duration) error {
	const op = "touch"
	if err := r.usable(op); err != nil {
		return err
	}
	if err := checkSessionID(op, sessionID); err != nil {
		return err
	}
	if err := checkTTL(op, ttl); err != nil {
		return err
	}
	now := msUTC(r.opts.Now())
	err := touchScript.Run(ctx, r.rdb, []string{sessionKey(sessionID)},
		now.UnixMilli(), now.Add(ttl.Truncate(time.Millisecond)).UnixMilli(), ttl.Milliseconds(), expiresField).Err()
	if err != nil {
		return unavailable(op, err)
	}
	return nil
}

// Match returns the oldest live session grant covering c, else the oldest
// standing grant covering it. Both hashes are read in one round trip. A store
// failure is an error: the caller must then treat the call as not granted.
func (r *RedisStore) Match(ctx context.Context, sessionID string, c policy.Call) (Grant, bool, error) {
	const op = "match"
	if err := r.usable(op); err != nil {
		return Grant{}, false, err
	}
	if err := checkScope(op, sessionID); err != nil {
		return Grant{}, false, err
	}
	var session, standing *redis.MapStringStringCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if sessionID != "" {
			session = p.HGetAll(ctx, sessionKey(sessionID))
		}
		standing = p.HGetAll(ctx, standingKey())
		return nil
	})
	if err != nil {
		return Grant{}, false, unavailable(op, err)
	}
	if session != nil {
		gs := r.decode(sessionID, session.Val())
		if g, ok := oldestCovering(slices.Values(gs), c, &r.prefixes, r.sealer); ok {
			return g, true, nil
		}
	}
	g, ok := oldestCovering(slices.Values(r.decode("", standing.Val())), c, &r.prefixes, r.sealer)
	return g, ok, nil
}

// GrantFor is Match shaped for policy.GrantChecker.
func (r *RedisStore) GrantFor(ctx context.Context, sessionID string, c policy.Call) (string, bool, error) {
	return grantFor(ctx, r, sessionID, c)
}

// List returns the session's live grants, oldest first; "" lists standing grants.
func (r *RedisStore) List(ctx context.Context, sessionID string) ([]Grant, error) {
	const op = "list"
	if err := r.usable(op); err != nil {
		return nil, err
	}
	key := standingKey()
	if sessionID != "" {
		if err := checkSessionID(op, sessionID); err != nil {
			return nil, err
		}
		key = sessionKey(sessionID)
	}
	fields, err := r.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, unavailable(op, err)
	}
	gs := r.decode(sessionID, fields)
	sortGrants(gs)
	return gs, nil
}

// decode turns a grants hash into the grants it holds now: none when the
// session has expired (by the injected clock) or has no valid expiry, and
// never a record that fails to decode, names another id or session, or whose
// scope is invalid.
func (r *RedisStore) decode(sessionID string, fields map[string]string) []Grant {
	var expiresAt time.Time
	if sessionID != "" {
		ms, err := strconv.ParseInt(fields[expiresField], 10, 64)
		if err != nil {
			if len(fields) > 0 {
				r.opts.Logger.Warn("grants: session hash without a valid expiry; ignoring its grants", "session", sessionID, "err", err)
			}
			return nil
		}
		expiresAt = time.UnixMilli(ms).UTC()
		if !msUTC(r.opts.Now()).Before(expiresAt) {
			return nil
		}
	}
	gs := make([]Grant, 0, len(fields))
	for id, v := range fields {
		if id == expiresField {
			continue
		}
		var g Grant
		if err := json.Unmarshal([]byte(v), &g); err != nil || g.ID != id || g.SessionID != sessionID || !r.prefixes.valid(g.Scope) {
			// Fail closed: a record we cannot trust grants nothing.
			r.opts.Logger.Warn("grants: corrupt grant record ignored", "session", sessionID, "id", id, "err", err)
			continue
		}
		if sessionID != "" {
			g.ExpiresAt = expiresAt
			if !g.clamp(msUTC(r.opts.Now())) {
				continue // a time-boxed grant whose time is up
			}
		}
		gs = append(gs, g)
	}
	return gs
}

// Revoke removes one grant of the session ("" for a standing grant).
func (r *RedisStore) Revoke(ctx context.Context, sessionID, grantID string) error {
	const op = "revoke"
	if err := r.usable(op); err != nil {
		return err
	}
	if err := checkScope(op, sessionID); err != nil {
		return err
	}
	if err := checkGrantID(op, grantID); err != nil {
		return err
	}
	var n int64
	var err error
	if sessionID == "" {
		n, err = r.rdb.HDel(ctx, standingKey(), grantID).Result()
	} else {
		n, err = revokeScript.Run(ctx, r.rdb, []string{sessionKey(sessionID)},
			grantID, msUTC(r.opts.Now()).UnixMilli(), expiresField).Int64()
	}
	if err != nil {
		return unavailable(op, err)
	}
	if n == 0 {
		return notFound(op, sessionID, grantID)
	}
	return nil
}

// RevokeSession removes all of a session's grants; an unknown session is not an error.
func (r *RedisStore) RevokeSession(ctx context.Context, sessionID string) error {
	const op = "revoke session"
	if err := r.usable(op); err != nil {
		return err
	}
	if err := checkSessionID(op, sessionID); err != nil {
		return err
	}
	if err := r.rdb.Del(ctx, sessionKey(sessionID)).Err(); err != nil {
		return unavailable(op, err)
	}
	return nil
}

// Close makes every later call fail with CodeUnavailable; the client stays open.
func (r *RedisStore) Close() error {
	r.closed.Store(true)
	return nil
}

func (r *RedisStore) usable(op string) error {
	if r.closed.Load() {
		return &Error{Store: "grants", Code: CodeUnavailable, Op: op, Msg: "store closed"}
	}
	return nil
}

func unavailable(op string, err error) error {
	msg := "the grants store could not be reached"
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		msg = "the grants store did not answer in time"
	}
	return &Error{Store: "grants", Code: CodeUnavailable, Op: op, Msg: msg, Err: err}
}
