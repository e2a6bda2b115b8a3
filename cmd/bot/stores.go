package main

// Opening askops' shared state from the config's redis section, in one
// place every command uses: the Asks (pending), the grants and chat-ops'
// sessions over one Redis client when redis.url is set, or each in this
// process's memory when it is not. The Redis URL is read here and nowhere
// else (through redisconn.OpenTuned, its one parser).

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// storeSet is the three stores of one process.
type storeSet struct {
	Redis    redisconn.Client // nil with the in-memory stores
	Asks     pending.Store
	Grants   grants.Store
	Sessions sessions.Store
}

// storeOptions are what the stores take besides the redis section.
type storeOptions struct {
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

func (o storeOptions) logger(component string) *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger.With("component", component)
}

// openStores opens the stores c names: in Redis when c.URL is set, else in
// memory (Asks then live and die with this process). Its errors name the
// redis.url key.
func openStores(ctx context.Context, c config.RedisConfig, o storeOptions) (st storeSet, err error) {
	popts := pending.Options{Now: o.Now, Logger: o.logger("pending"), People: o.People, AnnounceKey: o.AnnounceKey}
	gopts := grants.Options{Now: o.Now, Logger: o.logger("grants"), SealKey: o.SealKey}
	sopts := sessions.Options{TTL: o.SessionTTL, Now: o.Now, Logger: o.logger("sessions")}
	if c.URL == "" {
		return storeSet{Asks: pending.NewMemoryStore(popts), Grants: grants.NewMemoryStore(gopts), Sessions: sessions.NewMemoryStore(sopts)}, nil
	}
	popts.ReplicaAcks, _ = c.ReplicaAcksOption() // validated
	popts.ReplicaTimeout = c.ReplicaTimeout.D()
	popts.ReplicaAcksChanged = o.ReplicaAcksChanged
	if st.Redis, err = openRedis(c); err != nil {
		return storeSet{}, fmt.Errorf("redis.url: %w", err)
	}
	rs, err := pending.NewRedisStore(ctx, st.Redis, popts)
	if err != nil {
		st.Close()
		return storeSet{}, fmt.Errorf("redis.url: open the ask store at %s: %w", c.Addr(), err)
	}
	st.Asks, st.Grants, st.Sessions = rs, grants.NewRedisStore(st.Redis, gopts), sessions.NewRedisStore(st.Redis, sopts)
	return st, nil
}

// openRedis opens a client for c's URL (redis://, rediss://, sentinel or
// cluster forms; see redisconn.openStores) with c's timeouts. Its clients
// honour context deadlines, so a stuck Redis cannot hold a caller past its
// context; its errors redact the password.
func openRedis(c config.RedisConfig) (redisconn.Client, error) {
	return redisconn.OpenTuned(c.URL.Reveal(), c.Tuning())
}

// Shared reports whether the stores are shared with other processes
// (Redis): then any serve replica takes the clicks and run/ask need not.
func (st storeSet) Shared() bool { return st.Redis != nil }

// Ping checks the store is reachable; the in-memory one is up while the
// process is.
func (st storeSet) Ping(ctx context.Context) error {
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
func (st storeSet) Close() {
	for _, c := range []interface{ Close() error }{st.Asks, st.Grants, st.Sessions} {
		if c != nil {
			_ = c.Close()
		}
	}
	if st.Redis != nil {
		_ = st.Redis.Close()
	}
}

// openGrantStore opens the shared grant store alone, for bot grants (an
// admin's command talks to nothing else). c.URL must be set: a standing
// grant in this process's memory would end with the command.
func openGrantStore(c config.RedisConfig, o storeOptions) (_ grants.Store, closeStore func(), err error) {
	client, err := openRedis(c)
	if err != nil {
		return nil, nil, err
	}
	store := grants.NewRedisStore(client, grants.Options{Now: o.Now, Logger: o.logger("grants"), SealKey: o.SealKey})
	return store, func() { _ = store.Close(); _ = client.Close() }, nil
}
