// Package stores opens askops' shared state from the config's redis
// section, in one place every command uses: the Asks (pending), the grants
// and chat-ops' sessions over one Redis client when redis.url is set, or
// each in this process's memory when it is not. The Redis URL is read here
// and nowhere else (through redisconn.OpenTuned, its one parser).
package stores

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// Set is the three stores of one process.
type Set struct {
	Redis    redis.UniversalClient // nil with the in-memory stores
	Asks     pending.Store
	Grants   grants.Store
	Sessions sessions.Store
}

// Options are what the stores take besides the redis section.
type Options struct {
	SessionTTL time.Duration // approvals.session_ttl
	// SealKey seals grants whose commands hold secrets (nil: none).
	SealKey []byte
	// AnnounceKey signs decision announcements (pending.Options.AnnounceKey;
	// nil: every wake-up re-reads the record).
	AnnounceKey []byte
	Now         func() time.Time // default time.Now
	Logger      *slog.Logger     // default: discard
	// People is who holds each API token and the console, for counting a
	// quorum as people (config.Config.People, pending.Options.People).
	People map[string]string
	// ReplicaAcksChanged is told how many replicas decisions wait for, at
	// open and on every change (pending.Options.ReplicaAcksChanged: the
	// askops_redis_replica_acks metric).
	ReplicaAcksChanged func(replicas int)
}

func (o Options) logger(component string) *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger.With("component", component)
}

// Open opens the stores c names: in Redis when c.URL is set, else in
// memory (Asks then live and die with this process). Its errors name the
// redis.url key.
func Open(ctx context.Context, c config.RedisConfig, o Options) (st Set, err error) {
	popts := pending.Options{Now: o.Now, Logger: o.logger("pending"), People: o.People, AnnounceKey: o.AnnounceKey}
	gopts := grants.Options{Now: o.Now, Logger: o.logger("grants"), SealKey: o.SealKey}
	sopts := sessions.Options{TTL: o.SessionTTL, Now: o.Now, Logger: o.logger("sessions")}
	if c.URL == "" {
		return Set{Asks: pending.NewMemoryStore(popts), Grants: grants.NewMemoryStore(gopts), Sessions: sessions.NewMemoryStore(sopts)}, nil
	}
	popts.ReplicaAcks, _ = c.ReplicaAcksOption() // validated
	popts.ReplicaTimeout = c.ReplicaTimeout.D()
	popts.ReplicaAcksChanged = o.ReplicaAcksChanged
	if st.Redis, err = OpenRedis(c); err != nil {
		return Set{}, fmt.Errorf("redis.url: %w", err)
	}
	rs, err := pending.NewRedisStore(ctx, st.Redis, popts)
	if err != nil {
		st.Close()
		return Set{}, fmt.Errorf("redis.url: open the ask store at %s: %w", c.Addr(), err)
	}
	st.Asks, st.Grants, st.Sessions = rs, grants.NewRedisStore(st.Redis, gopts), sessions.NewRedisStore(st.Redis, sopts)
	return st, nil
}

// OpenRedis opens a client for c's URL (redis://, rediss://, sentinel or
// cluster forms; see redisconn.Open) with c's timeouts. Its clients
// honour context deadlines, so a stuck Redis cannot hold a caller past its
// context; its errors redact the password.
func OpenRedis(c config.RedisConfig) (redis.UniversalClient, error) {
	return redisconn.OpenTuned(c.URL.Reveal(), c.Tuning())
}

// Shared reports whether the stores are shared with other processes
// (Redis): then any serve replica takes the clicks and run/ask need not.
func (st Set) Shared() bool { return st.Redis != nil }

// Ping checks the store is reachable; the in-memory one is up while the
// process is.
func (st Set) Ping(ctx context.Context) error {
	if st.Redis == nil {
		return nil
	}
	if rs, ok := st.Asks.(interface{ Ping(context.Context) error }); ok {
		// On a Cluster, PING reaches any node; this reaches the master
		// of askops' slot, the one that must be up.
		return rs.Ping(ctx)
	}
	return st.Redis.Ping(ctx).Err()
}

// Close closes every store opened, the Redis client last.
func (st Set) Close() {
	for _, c := range []interface{ Close() error }{st.Asks, st.Grants, st.Sessions} {
		if c != nil {
			_ = c.Close()
		}
	}
	if st.Redis != nil {
		_ = st.Redis.Close()
	}
}

// OpenGrants opens the shared grant store alone, for bot grants (an
// admin's command talks to nothing else). c.URL must be set: a standing
// grant in this process's memory would end with the command.
func OpenGrants(c config.RedisConfig, o Options) (_ grants.Store, closeStore func(), err error) {
	client, err := OpenRedis(c)
	if err != nil {
		return nil, nil, err
	}
	store := grants.NewRedisStore(client, grants.Options{Now: o.Now, Logger: o.logger("grants"), SealKey: o.SealKey})
	return store, func() { _ = store.Close(); _ = client.Close() }, nil
}

// QuietRedisLog sends go-redis's own logging (connection retries, written
// with the standard logger outside our handlers and formats) to slog at
// debug level; its errors reach the stores as return values anyway. The
// setting is process-wide, so only main calls it.
func QuietRedisLog() { redis.SetLogger(debugLog{}) }

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
