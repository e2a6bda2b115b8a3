package sessions

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The agent sessions' keys (agents.go), under the namespace's hash tag:
//
//	NS:{NS}:gateway:root:SESSION    the session's workspace root
//	NS:{NS}:gateway:start:SESSION   when it was first seen (unix seconds)
//	NS:{NS}:gateway:thread:SESSION  "CHANNEL TS" of its Slack thread
//	NS:{NS}:event:ID                an event id let through (eventTTL)
//
// each with the session's life as its TTL, renewed by every call. Each is
// decided between replicas by SET NX GET: the first value stands.
//
// Keys written before v0.1.0, outside the hash tag, are still read, so a
// session live across the upgrade keeps its root and its thread, and an
// event a replica of that release took is not handled again:
// NS:gateway:root:SESSION and NS:gateway:thread:SESSION (copied to the new
// key, adoptLegacy) and NS:event:{ID}. Remove that reading in v0.2.0: no
// session or event outlives a day.

func (r *RedisStore) agentKey(kind, session string) string {
	return r.keys.Key("gateway", kind, session)
}

// legacyAgentKey is where releases before v0.1.0 kept a session's root or
// thread. Remove in v0.2.0.
func (r *RedisStore) legacyAgentKey(kind, session string) string {
	return r.keys.Untagged("gateway", kind, session)
}

// PinRoot records root as session's workspace root unless the session has
// one, keeps it for another ttl, and returns the root that stands. A root
// a release before v0.1.0 pinned stands too.
func (r *RedisStore) PinRoot(ctx context.Context, session, root string, ttl time.Duration) (string, error) {
	key := r.agentKey("root", session)
	v, ok, err := r.adoptLegacy(ctx, r.legacyAgentKey("root", session), key, ttl) // remove in v0.2.0
	if err == nil && !ok {
		v, err = r.rdb.SetArgs(ctx, key, root, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
		if errors.Is(err, redis.Nil) {
			return root, nil // ours
		}
	}
	if err != nil {
		return "", unavailable("pin root", err, "could not pin the workspace of session %s", session)
	}
	r.rdb.Expire(ctx, key, ttl)
	return v, nil
}

// PinStart records at as session's start unless the session has one, keeps
// it for another ttl, and returns the start that stands, to the second.
// The EXPIRE that renews a standing start goes in the same round trip.
func (r *RedisStore) PinStart(ctx context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error) {
	key := r.agentKey("start", session)
	var set *redis.StatusCmd
	// Each command keeps its own result; the SET's is the one read (the
	// pipeline's error would be its redis.Nil when the start is ours).
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, key, at.Unix(), redis.SetArgs{Mode: "NX", TTL: ttl, Get: true})
		p.Expire(ctx, key, ttl)
		return nil
	})
	v, err := set.Result()
	if errors.Is(err, redis.Nil) {
		return time.Unix(at.Unix(), 0), nil // ours
	}
	if err != nil {
		return time.Time{}, unavailable("pin start", err, "could not record when session %s started", session)
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, &Error{Store: "sessions", Code: CodeInternal, Op: "pin start", Msg: "a session's start in Redis is not a unix time: " + strconv.Quote(v)}
	}
	return time.Unix(sec, 0), nil
}

// Thread returns the session's Slack thread, if it has one, and keeps it
// for another ttl. A thread a release before v0.1.0 recorded is found too.
func (r *RedisStore) Thread(ctx context.Context, session string, ttl time.Duration) (channel, ts string, ok bool, err error) {
	key := r.agentKey("thread", session)
	v, err := r.rdb.GetEx(ctx, key, ttl).Result()
	if errors.Is(err, redis.Nil) {
		v, ok, err = r.adoptLegacy(ctx, r.legacyAgentKey("thread", session), key, ttl) // remove in v0.2.0
		if err == nil && !ok {
			return "", "", false, nil
		}
	}
	if err != nil {
		return "", "", false, unavailable("thread", err, "could not read the thread of session %s", session)
	}
	channel, ts, ok = strings.Cut(v, " ")
	return channel, ts, ok, nil
}

// ClaimThread records channel/ts as the session's thread unless it has
// one, and returns the thread that stands (one a release before v0.1.0
// recorded stands as a claimed one would).
func (r *RedisStore) ClaimThread(ctx context.Context, session, channel, ts string, ttl time.Duration) (string, string, error) {
	key := r.agentKey("thread", session)
	v, ok, err := r.adoptLegacy(ctx, r.legacyAgentKey("thread", session), key, ttl) // remove in v0.2.0
	if err == nil && !ok {
		v, err = r.rdb.SetArgs(ctx, key, channel+" "+ts, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
		if errors.Is(err, redis.Nil) {
			return channel, ts, nil // ours
		}
	}
	if err != nil {
		return "", "", unavailable("claim thread", err, "could not record the thread of session %s", session)
	}
	ch, t, _ := strings.Cut(v, " ")
	return ch, t, nil
}

// FirstEvent reports whether the event id is seen for the first time
// within an hour, by any replica ("" always is). If Redis cannot say, this
// process's memory does: a lost mention is worse than a rare duplicate
// run, which still asks before anything risky.
func (r *RedisStore) FirstEvent(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	ok, err := r.rdb.SetNX(ctx, r.keys.Key("event", id), 1, eventTTL).Result()
	if err == nil && ok {
		// A replica of a release before v0.1.0 marks the event at its
		// old key; one that took it there handled it. Remove in v0.2.0.
		var n int64
		n, err = r.rdb.Exists(ctx, r.keys.Tagged("event", id)).Result()
		ok = n == 0
	}
	if err == nil {
		return ok
	}
	r.opts.Logger.Warn("event dedup: redis unavailable, using this process's memory", "event", id, "err", err)
	return r.events.first(id, r.opts.Now())
}

// adoptLegacy reads the value a release before v0.1.0 kept at old and, if
// there is one, writes it to key unless key already holds one (SET NX
// GET), for ttl, and returns the value that stands at key. The old key is
// left to expire: replicas of the earlier release may still read it during
// the upgrade. (Two commands, not a script: the old key is outside the
// hash tag, so in a cluster it may sit in another slot.) Remove in v0.2.0.
func (r *RedisStore) adoptLegacy(ctx context.Context, old, key string, ttl time.Duration) (string, bool, error) {
	v, err := r.rdb.Get(ctx, old).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	standing, err := r.rdb.SetArgs(ctx, key, v, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return v, true, nil // copied
	}
	if err != nil {
		return "", false, err
	}
	return standing, true, nil
}
