package gateway

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
)

// ThreadOpener posts the message that opens an agent session's thread and
// says where it went: done is called once, on a goroutine of its own. A
// title waiting to be posted holds no goroutine (*slackui.Notifier queues
// it behind the channel's Asks).
type ThreadOpener interface {
	OpenThreadThen(ctx context.Context, title string, done func(channel, ts string, err error))
}

// ThreadStore remembers each session's thread, for every replica alike.
type ThreadStore interface {
	// Thread returns the session's thread, if it has one, and keeps it
	// for another ttl.
	Thread(ctx context.Context, session string, ttl time.Duration) (channel, ts string, ok bool, err error)
	// Claim records channel/ts as the session's thread unless it already
	// has one, and returns the thread that stands.
	Claim(ctx context.Context, session, channel, ts string, ttl time.Duration) (string, string, error)
}

// Threads gives each agent session one Slack thread: the session's first
// Ask opens it ("Claude Code · session 3f2a… · ~/src/api · laptop-ana"),
// later Asks of the session are posted in it.
//
// Opening a thread is a Slack post, paced at about one a second per
// channel with every other post, so nobody waits on it: the Ask that
// finds its session without a thread is posted unthreaded at once, and the
// thread opens in the background for the session's later Asks. (Waiting
// for it held POST /v1/asks of a new session behind every title queued
// before, and a burst of new sessions timed their creates out.) A title
// on its way costs its queue entry, not a goroutine: a burst of 500 new
// sessions parked 500 goroutines before.
type Threads struct {
	opener ThreadOpener
	store  ThreadStore
	ttl    time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	opening map[string]bool // sessions whose thread this process is opening
	running sync.WaitGroup
}

// NewThreads returns Threads opening threads through opener and
// remembering them in store for ttl (the session's life).
func NewThreads(opener ThreadOpener, store ThreadStore, ttl time.Duration, log *slog.Logger) *Threads {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Threads{opener: opener, store: store, ttl: ttl, log: log, opening: map[string]bool{}}
}

// For returns the thread c's Ask goes in. Empty means unthreaded (the
// approval channel): the session has no thread yet (For starts opening it,
// and does not wait), or its thread cannot be found, which must not stop
// the Ask from being shown. For waits on no Slack call. key is the session
// as the gateway keys it (sessionKey: namespaced by the caller); the title
// shows the id the caller sent.
func (t *Threads) For(ctx context.Context, key string, c Call) (channel, ts string) {
	if key == "" {
		return "", ""
	}
	if ch, ts, ok, err := t.store.Thread(ctx, key, t.ttl); err == nil && ok {
		return ch, ts
	} else if err != nil {
		t.log.Warn("could not look up the session's thread; posting unthreaded", "session", key, "err", err)
		return "", ""
	}
	// One opening per session in this process; the session's Asks until
	// it is open go unthreaded. (Across replicas the store's claim decides.)
	t.mu.Lock()
	if t.opening[key] {
		t.mu.Unlock()
		return "", ""
	}
	t.opening[key] = true
	t.running.Add(1)
	t.mu.Unlock()
	t.opener.OpenThreadThen(ctx, ThreadTitle(c), func(ch, ts string, err error) {
		t.opened(context.WithoutCancel(ctx), key, ch, ts, err)
	})
	return "", ""
}

// claimTimeout bounds recording an opened thread.
const claimTimeout = 10 * time.Second

// opened records the thread just opened for the session keyed key (or
// logs why it could not be opened).
func (t *Threads) opened(ctx context.Context, key, ch, ts string, err error) {
	defer t.running.Done()
	defer func() {
		t.mu.Lock()
		delete(t.opening, key)
		t.mu.Unlock()
	}()
	if err != nil {
		t.log.Warn("could not open the session's thread; its asks stay unthreaded", "session", key, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	if _, _, err := t.store.Claim(ctx, key, ch, ts, t.ttl); err != nil {
		t.log.Warn("could not record the session's thread", "session", key, "err", err)
	}
}

// Wait waits for the threads being opened in the background.
func (t *Threads) Wait() { t.running.Wait() }

// ThreadTitle is the opening message of c's session's thread.
func ThreadTitle(c Call) string {
	agent := c.Agent
	if agent == "" {
		agent = "Agent"
	}
	parts := []string{agent, "session " + shortID(c.SessionID)}
	if c.Cwd != "" {
		parts = append(parts, homeShort(c.Cwd))
	}
	if c.By != "" {
		parts = append(parts, c.By)
	}
	return strings.Join(parts, " · ")
}

func shortID(s string) string {
	r := []rune(s)
	if len(r) <= 8 {
		return s
	}
	return string(r[:4]) + "…"
}

var homeDir = regexp.MustCompile(`^/(?:home|Users)/[^/]+`)

// homeShort writes a home directory as ~, as the agent's user would.
func homeShort(p string) string {
	if loc := homeDir.FindStringIndex(p); loc != nil {
		return "~" + p[loc[1]:]
	}
	return p
}

// MemoryThreadStore is the ThreadStore of a single process (no redis.url).
type MemoryThreadStore struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]memoryThread
}

type memoryThread struct {
	channel, ts string
	until       time.Time
}

// NewMemoryThreadStore returns an empty MemoryThreadStore.
func NewMemoryThreadStore(now func() time.Time) *MemoryThreadStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryThreadStore{now: now, m: map[string]memoryThread{}}
}

// Thread implements ThreadStore.
func (s *MemoryThreadStore) Thread(_ context.Context, session string, ttl time.Duration) (string, string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.m[session]
	if !ok || !s.now().Before(th.until) {
		return "", "", false, nil
	}
	th.until = s.now().Add(ttl)
	s.m[session] = th
	return th.channel, th.ts, true, nil
}

// Claim implements ThreadStore.
func (s *MemoryThreadStore) Claim(_ context.Context, session, channel, ts string, ttl time.Duration) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if th, ok := s.m[session]; ok && now.Before(th.until) {
		return th.channel, th.ts, nil
	}
	for k, th := range s.m { // forget ended sessions' threads
		if !now.Before(th.until) {
			delete(s.m, k)
		}
	}
	s.m[session] = memoryThread{channel: channel, ts: ts, until: now.Add(ttl)}
	return channel, ts, nil
}

// RedisThreadStore keeps sessions' threads in Redis, so every replica posts
// a session's Asks in the same thread: askops:{askops}:gateway:thread:SESSION
// holds "CHANNEL TS" for the session's life. It still reads the key an
// earlier release wrote, askops:gateway:thread:SESSION, and copies a
// thread found there to the new key, so a session open across an upgrade
// keeps its thread (Remove in v0.2.0).
type RedisThreadStore struct {
	client redis.UniversalClient
}

// NewRedisThreadStore returns a ThreadStore on client.
func NewRedisThreadStore(client redis.UniversalClient) *RedisThreadStore {
	return &RedisThreadStore{client: client}
}

func threadKey(session string) string {
	return rediskey.Default().Key("gateway", "thread", session)
}

// legacyThreadKey is where releases before the one key scheme kept a
// session's thread.
func legacyThreadKey(session string) string {
	return rediskey.Default().Untagged("gateway", "thread", session)
}

// Thread implements ThreadStore.
func (s *RedisThreadStore) Thread(ctx context.Context, session string, ttl time.Duration) (string, string, bool, error) {
	v, err := s.client.GetEx(ctx, threadKey(session), ttl).Result()
	if errors.Is(err, redis.Nil) {
		var ok bool
		v, ok, err = adoptLegacy(ctx, s.client, legacyThreadKey(session), threadKey(session), ttl)
		if err != nil || !ok {
			return "", "", false, err
		}
	}
	if err != nil {
		return "", "", false, err
	}
	ch, ts, ok := strings.Cut(v, " ")
	return ch, ts, ok, nil
}

// Claim implements ThreadStore: SET NX decides between replicas. A thread
// an earlier release recorded stands, as a claimed one would (Remove in
// v0.2.0).
func (s *RedisThreadStore) Claim(ctx context.Context, session, channel, ts string, ttl time.Duration) (string, string, error) {
	if v, ok, err := adoptLegacy(ctx, s.client, legacyThreadKey(session), threadKey(session), ttl); err != nil {
		return "", "", err
	} else if ok {
		ch, t, _ := strings.Cut(v, " ")
		return ch, t, nil
	}
	v, err := s.client.SetArgs(ctx, threadKey(session), channel+" "+ts, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return channel, ts, nil // ours
	}
	if err != nil {
		return "", "", err
	}
	ch, t, _ := strings.Cut(v, " ")
	return ch, t, nil
}

// adoptLegacy reads the value an earlier release kept at old and, if there
// is one, writes it to key unless key already holds one (SET NX GET), for
// ttl, and returns the value that stands at key. The old key is left to
// expire: replicas of the earlier release may still read it during the
// upgrade. (Two commands, not a script: the old key is outside the hash
// tag, so in a cluster it may sit in another slot.) Remove in v0.2.0.
func adoptLegacy(ctx context.Context, client redis.UniversalClient, old, key string, ttl time.Duration) (string, bool, error) {
	v, err := client.Get(ctx, old).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	standing, err := client.SetArgs(ctx, key, v, redis.SetArgs{Mode: "NX", TTL: ttl, Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return v, true, nil // copied
	}
	if err != nil {
		return "", false, err
	}
	return standing, true, nil
}
