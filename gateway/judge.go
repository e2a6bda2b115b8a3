package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/rediskey"
)

// This file is what the gateway knows of a call because its callers are
// agents it does not run: whose session a call belongs to (the caller's,
// whatever id it names) and which directory is the session's workspace
// (pinned when the session is first seen, never the request's cwd). How a
// path is judged when askops cannot look at the files is the policy's
// (policy/filecall.go).

// sessionKey is the session a call's grants, thread and Asks attach to:
// the id the caller sent, namespaced by who the caller is (the API
// token's name, the local user), so naming another caller's session id —
// or a Slack thread's, which any message link shows — reaches none of its
// grants. Slack's own session ids ("C…/ts") never start with "gw:".
func sessionKey(by, session string) string {
	if session == "" {
		return ""
	}
	key := "gw:" + url.QueryEscape(by) + ":" + session
	if len(key) > maxSessionKey {
		// Grants refuse longer ids; a digest keeps the session its own.
		sum := sha256.Sum256([]byte(session))
		key = "gw:" + url.QueryEscape(by) + ":sha256-" + hex.EncodeToString(sum[:16])
	}
	return key
}

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

// maxSessionKey is the longest session id the grant store takes.
const maxSessionKey = 256

// shownSession is the session id as its caller sent it: sessionKey undone.
func shownSession(key string) string {
	rest, ok := strings.CutPrefix(key, "gw:")
	if !ok {
		return key
	}
	if _, s, ok := strings.Cut(rest, ":"); ok {
		return s
	}
	return key
}

// RootStore pins each session's workspace root, for every replica alike:
// the first root offered for a session stands for the session's life.
type RootStore interface {
	// Pin records root as session's unless it has one, keeps it for
	// another ttl, and returns the root that stands.
	Pin(ctx context.Context, session, root string, ttl time.Duration) (string, error)
}

// MemoryRootStore is the RootStore of a single process.
type MemoryRootStore struct {
	now   func() time.Time
	roots firstPins[string]
}

// NewMemoryRootStore returns an empty MemoryRootStore.
func NewMemoryRootStore(now func() time.Time) *MemoryRootStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryRootStore{now: now}
}

// Pin implements RootStore.
func (s *MemoryRootStore) Pin(_ context.Context, session, root string, ttl time.Duration) (string, error) {
	return s.roots.pin(session, root, s.now(), ttl), nil
}

// firstPins is the memory of a single process's per-session pins (a
// session's root, its start): the first value pinned for a session stands
// until ttl passes without another pin of it.
type firstPins[T any] struct {
	mu sync.Mutex
	m  map[string]pinned[T]
}

type pinned[T any] struct {
	v     T
	until time.Time
}

// pin records v as session's at now unless it has a value, keeps the
// value for another ttl, and returns the value that stands.
func (p *firstPins[T]) pin(session string, v T, now time.Time, ttl time.Duration) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.m[session]; ok && now.Before(r.until) {
		r.until = now.Add(ttl)
		p.m[session] = r
		return r.v
	}
	for k, r := range p.m { // forget ended sessions
		if !now.Before(r.until) {
			delete(p.m, k)
		}
	}
	if p.m == nil {
		p.m = map[string]pinned[T]{}
	}
	p.m[session] = pinned[T]{v: v, until: now.Add(ttl)}
	return v
}

// RedisRootStore keeps sessions' roots in Redis:
// askops:{askops}:gateway:root:SESSION holds the root for the session's
// life. A root an earlier release pinned at askops:gateway:root:SESSION
// still stands (it is copied to the new key), so an upgrade cannot move a
// live session's workspace (Remove in v0.2.0).
type RedisRootStore struct{ client redis.UniversalClient }

// NewRedisRootStore returns a RootStore on client.
func NewRedisRootStore(client redis.UniversalClient) *RedisRootStore {
	return &RedisRootStore{client: client}
}

// Pin implements RootStore: SET NX GET decides between replicas.
func (s *RedisRootStore) Pin(ctx context.Context, session, root string, ttl time.Duration) (string, error) {
	key := rediskey.Default().Key("gateway", "root", session)
	if v, ok, err := adoptLegacy(ctx, s.client, rediskey.Default().Untagged("gateway", "root", session), key, ttl); err != nil {
		return "", err
	} else if ok {
		s.client.Expire(ctx, key, ttl)
		return v, nil
	}
	v, err := s.client.SetArgs(ctx, key, root, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return root, nil // ours
	}
	if err != nil {
		return "", err
	}
	s.client.Expire(ctx, key, ttl)
	return v, nil
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
// caller, else the one pinned when the session was first seen. A store
// failure, or a call with no session, falls back to the cwd's own root for
// this call only; a call with no cwd has no workspace (its paths are
// outside, so they ask).
func (s *Service) workspace(ctx context.Context, key string, c Call) string {
	if c.Root != "" {
		return path.Clean(c.Root)
	}
	root := rootOf(c.Cwd)
	if key == "" || root == "" {
		return root
	}
	pinned, err := s.roots.Pin(ctx, key, root, s.cfg.SessionTTL)
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
	at, err := s.starts.Start(ctx, key, s.cfg.Now(), s.cfg.SessionTTL)
	if err != nil {
		s.log.Warn("could not record when the session started; its asks name it without", "session", key, "err", err)
		return time.Time{}
	}
	return at
}
