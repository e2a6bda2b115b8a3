package sessions

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Who has the App Home open, kept where every replica sees it: the
// app_home_opened event reaches one replica, and if only that one
// remembered the viewer, its death would leave the Home stale until
// reopened. Each viewer is kept until a time the caller sets (the Home's
// viewer TTL), and beside it the digest of the Home last published to
// them, which one replica claims before publishing, so N replicas watching
// one viewer publish each change once, not N times.
//
// Redis (NS is Options.Namespace): NS:{NS}:homes, a ZSET of user → until
// (µs, by the Redis server's clock), and NS:{NS}:homes:shown, a HASH of
// user → digest, trimmed with the ZSET. Neither is an Ask's state; both are
// bounded by the number of people who open the Home. (The keys are the
// ones the Ask store kept them under before they moved here.)

// HomeViewers keeps the Home's viewers; both stores implement it.
type HomeViewers interface {
	// AddHomeViewer keeps user as a viewer until until.
	AddHomeViewer(ctx context.Context, user string, until time.Time) error
	// HomeViewers lists the viewers whose until is still ahead, and forgets
	// the others.
	HomeViewers(ctx context.Context) ([]string, error)
	// ClaimHomeView reports whether the caller should publish digest to
	// user: true (and digest recorded) unless it is what was last claimed.
	ClaimHomeView(ctx context.Context, user, digest string) (bool, error)
	// ReleaseHomeView forgets digest for user if it is still the one
	// claimed (its publish failed), so it is published again.
	ReleaseHomeView(ctx context.Context, user, digest string) error
}

var (
	_ HomeViewers = (*RedisStore)(nil)
	_ HomeViewers = (*MemoryStore)(nil)
)

func (r *RedisStore) homesKey() string {
	return r.keys.Key("homes")
}
func (r *RedisStore) homeShownKey() string { return r.homesKey() + ":shown" }

func checkViewer(op, user string) error {
	if user == "" || len(user) > 64 {
		return invalid(op, "bad Home viewer %.40q", user)
	}
	return nil
}

// serverNowLua sets now to the time the script runs by the Redis server's
// clock (µs), or to ARGV[1] when a test drives time with a fake clock.
const serverNowLua = `
local now = ARGV[1]
if now == '' then
  local t = redis.call('TIME')
  now = t[1] .. string.format('%06d', tonumber(t[2]))
end
`

// scriptNow is serverNowLua's ARGV[1]: "" (the server's clock) outside tests.
func (r *RedisStore) scriptNow() string {
	if r.opts.serverNow == nil {
		return ""
	}
	return strconv.FormatInt(r.opts.serverNow().UnixMicro(), 10)
}

// AddHomeViewer implements HomeViewers.
func (r *RedisStore) AddHomeViewer(ctx context.Context, user string, until time.Time) error {
	if err := checkViewer("home_viewer", user); err != nil {
		return err
	}
	if err := r.rdb.ZAdd(ctx, r.homesKey(), redis.Z{Score: float64(until.UnixMicro()), Member: user}).Err(); err != nil {
		return unavailable("home_viewer", err, "could not keep the Home viewer %s", user)
	}
	return nil
}

// homeViewersScript forgets the viewers whose time is up (and their
// digests) and lists the rest, by the server's clock.
var homeViewersScript = redis.NewScript(serverNowLua + `
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
for _, u in ipairs(gone) do redis.call('HDEL', KEYS[2], u) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// HomeViewers implements HomeViewers.
func (r *RedisStore) HomeViewers(ctx context.Context) ([]string, error) {
	users, err := homeViewersScript.Run(ctx, r.rdb, []string{r.homesKey(), r.homeShownKey()}, r.scriptNow()).StringSlice()
	if err != nil {
		return nil, unavailable("home_viewers", err, "could not list the Home viewers")
	}
	return users, nil
}

var claimHomeViewScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

var releaseHomeViewScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`)

// ClaimHomeView implements HomeViewers.
func (r *RedisStore) ClaimHomeView(ctx context.Context, user, digest string) (bool, error) {
	if err := checkViewer("home_view", user); err != nil {
		return false, err
	}
	n, err := claimHomeViewScript.Run(ctx, r.rdb, []string{r.homeShownKey()}, user, digest).Int()
	if err != nil {
		return false, unavailable("home_view", err, "could not claim the Home of %s", user)
	}
	return n == 1, nil
}

// ReleaseHomeView implements HomeViewers.
func (r *RedisStore) ReleaseHomeView(ctx context.Context, user, digest string) error {
	if err := releaseHomeViewScript.Run(ctx, r.rdb, []string{r.homeShownKey()}, user, digest).Err(); err != nil {
		return unavailable("home_view", err, "could not release the Home of %s", user)
	}
	return nil
}

// memoryHomes is the memory store's HomeViewers state.
type memoryHomes struct {
	mu    sync.Mutex
	until map[string]time.Time
	shown map[string]string
}

// AddHomeViewer implements HomeViewers.
func (m *MemoryStore) AddHomeViewer(ctx context.Context, user string, until time.Time) error {
	if err := checkViewer("home_viewer", user); err != nil {
		return err
	}
	h := &m.homes
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until == nil {
		h.until, h.shown = map[string]time.Time{}, map[string]string{}
	}
	h.until[user] = until
	return nil
}

// HomeViewers implements HomeViewers.
func (m *MemoryStore) HomeViewers(ctx context.Context) ([]string, error) {
	now := m.opts.Now()
	h := &m.homes
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for u, t := range h.until {
		if t.Before(now) {
			delete(h.until, u)
			delete(h.shown, u)
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

// ClaimHomeView implements HomeViewers.
func (m *MemoryStore) ClaimHomeView(ctx context.Context, user, digest string) (bool, error) {
	if err := checkViewer("home_view", user); err != nil {
		return false, err
	}
	h := &m.homes
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shown == nil {
		h.until, h.shown = map[string]time.Time{}, map[string]string{}
	}
	if h.shown[user] == digest {
		return false, nil
	}
	h.shown[user] = digest
	return true, nil
}

// ReleaseHomeView implements HomeViewers.
func (m *MemoryStore) ReleaseHomeView(ctx context.Context, user, digest string) error {
	h := &m.homes
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shown[user] == digest {
		delete(h.shown, user)
	}
	return nil
}
