// Package redisconn is askops' one way to a Redis server: it reads the
// redis.url forms (one server, Sentinel, Cluster, each with or without
// TLS) into a client that honours context deadlines and follows a
// Cluster failover, and it judges whether the server's settings may lose
// askops keys (CheckServer, ServerWatch). It issues no askops command
// itself: the stores (pending, grants, sessions, …) do, on the client it
// opens.
package redisconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	hide "github.com/askops/askops/redact"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Open makes a Redis client from a URL. It does not connect; the first
// command (pending.NewRedisStore's subscription) does. Accepted forms:
//
//	redis://[[user]:pass@]host[:6379][/db][?opts]     one server (go-redis ParseURL and its options)
//	rediss://…                                        the same over TLS
//	redis-sentinel://[[user]:pass@]h1:26379,h2:26379/mastername[?db=N&sentinel_username=…&sentinel_password=…]
//	rediss-sentinel://…                               the same over TLS
//	redis-cluster://[[user]:pass@]h1:6379,h2:6379[?opts]
//	rediss-cluster://…                                the same over TLS
//
// For Sentinel the userinfo is the master's credentials; the sentinels' own
// go in sentinel_username / sentinel_password. Sentinel and cluster accept the
// options client_name, dial_timeout, read_timeout, write_timeout, pool_timeout (Go
// durations or seconds) and pool_size; anything else is refused, so a typo
// is not silently ignored. Every client has ContextTimeoutEnabled, so a
// context deadline really cuts a Redis call short.
//
// A cluster client reloads its slot map as soon as a node fails a dial or a
// command (see slotMapReloader), so it follows a failover within a moment
// of the replica's promotion instead of at its next periodic reload.
// It reads and writes on the masters only: a waiter must never act on a
// replica's stale copy of a decision.
func Open(rawURL string) (redis.UniversalClient, error) {
	return OpenTuned(rawURL, Tuning{})
}

// Tuning is what the config's redis.* timeouts set on the client. A
// zero field keeps what the URL says, or else the default.
type Tuning struct {
	DialTimeout  time.Duration // default 2s: a dead host is given up quickly
	ReadTimeout  time.Duration // default 3s
	WriteTimeout time.Duration // default 3s
	PoolTimeout  time.Duration // wait for a free pooled connection; default ReadTimeout + 1s
}

// Client defaults that differ from go-redis's (5 s dial): a node that went
// away with its host must not hold every command for long.
const (
	defaultDialTimeout = 2 * time.Second
	// clusterStateReload is the periodic slot-map reload, a backstop for
	// the reload on failure (go-redis's default is 60 s).
	clusterStateReload = 10 * time.Second
	// defaultPoolSize and pipelinePoolSize bound the connections a client
	// holds to one Redis node, however many Asks wait (pool_size sets the
	// first). go-redis's defaults are ten per CPU plus ten for pipelines:
	// a serve under load held 29 connections on two cores, more on bigger
	// hosts, and a fleet of replicas multiplies that against Redis's
	// maxclients. askops' commands are short scripts (well under a
	// millisecond), so four carry tens of thousands a second; a burst past
	// them waits up to pool_timeout for a turn. The pipelines (the waiters'
	// batched re-reads and lease renewals) keep a small pool of their own:
	// sharing the main one let a Redis outage end a waiting Ask whose
	// first read had not yet been answered (e2e TestRedisOutage). The two
	// subscriptions (decisions, stop requests) hold one connection each
	// besides: 4 + 2 + 2 = 8 in all.
	defaultPoolSize  = 4
	pipelinePoolSize = 2
)

// OpenTuned is Open with the config's timeouts.
func OpenTuned(rawURL string, t Tuning) (redis.UniversalClient, error) {
	opts, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	set := func(dst *time.Duration, v, def time.Duration) {
		switch {
		case v > 0:
			*dst = v
		case *dst == 0:
			*dst = def
		}
	}
	set(&opts.DialTimeout, t.DialTimeout, defaultDialTimeout)
	set(&opts.ReadTimeout, t.ReadTimeout, 0)
	set(&opts.WriteTimeout, t.WriteTimeout, 0)
	set(&opts.PoolTimeout, t.PoolTimeout, 0)
	if opts.PoolSize == 0 {
		opts.PoolSize = defaultPoolSize
	}
	opts.PipelinePoolSize = pipelinePoolSize
	if opts.MasterName != "" {
		return newFailoverClient(opts), nil
	}
	if !opts.IsClusterMode {
		return redis.NewUniversalClient(opts), nil
	}
	co := opts.Cluster()
	co.ClusterStateReloadInterval = clusterStateReload
	c := redis.NewClusterClient(co)
	c.OnNewNode(func(node *redis.Client) { node.AddHook(slotMapReloader{c}) })
	return c, nil
}

// slotMapReloader is a hook on every node of a cluster client: when a node
// cannot be dialled or fails a command the way a dead or demoted node does,
// it asks the client to reload its slot map. go-redis itself reloads only on
// MOVED/READONLY answers and every ClusterStateReloadInterval, so after a
// master dies it keeps dialling the dead node until the periodic reload:
// ~58 s measured with the old 60 s default. Reloads are coalesced by
// go-redis (one at a time, 200 ms apart), so a burst of failures costs a few
// CLUSTER SLOTS, not one per command.
type slotMapReloader struct{ c *redis.ClusterClient }

func (h slotMapReloader) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			h.c.ReloadState(ctx)
		}
		return conn, err
	}
}

func (h slotMapReloader) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if nodeFailed(err) {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

func (h slotMapReloader) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if nodeFailed(err) {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

// nodeFailed reports whether err says the node is gone or no longer
// serves the slot, rather than that the command or its key was wrong.
// MOVED and ASK are here too: go-redis follows them for the commands it
// routes, but a command sent on a node's own client (askops' durable
// pipelines, see pending/durable.go) gets them back, and after a CLUSTER FAILOVER
// every decide was refused with MOVED until the periodic reload (8 s
// measured).
func nodeFailed(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	if rerr, ok := errors.AsType[redis.Error](err); ok {
		msg := rerr.Error()
		for _, p := range []string{"MOVED ", "ASK ", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "LOADING", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true // network errors, EOF, a closed pool
}

// ParseURL reads a URL (the forms Open accepts) into client options, for a
// caller that sets more than Tuning does (a benchmark's fixed pool).
//
// Redis's maintenance notifications (a Redis Enterprise/Cloud handshake)
// are off: askops follows failovers itself (slotMapReloader, durable.go),
// and go-redis's "auto" mode, on a failed handshake, switches itself off by
// writing to a config that a Cluster client's node clients share, a data
// race the race detector caught during a Cluster failover.
func ParseURL(rawURL string) (*redis.UniversalOptions, error) {
	o, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return o, nil
}

func parseURL(rawURL string) (*redis.UniversalOptions, error) {
	scheme, _, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("redis url %q: missing scheme (want redis://, rediss://, redis-sentinel:// or redis-cluster://)", redact(rawURL))
	}
	switch scheme {
	case "redis", "rediss":
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			// net/url's errors quote the whole URL, password and all:
			// keep only what is wrong with it.
			if ue, ok := errors.AsType[*url.Error](err); ok {
				err = ue.Err
			}
			return nil, fmt.Errorf("redis url %q: %w", redact(rawURL), err)
		}
		return &redis.UniversalOptions{
			Addrs: []string{o.Addr}, ClientName: o.ClientName, DB: o.DB, Protocol: o.Protocol,
			Username: o.Username, Password: o.Password,
			MaxRetries: o.MaxRetries, MinRetryBackoff: o.MinRetryBackoff, MaxRetryBackoff: o.MaxRetryBackoff,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			PoolFIFO: o.PoolFIFO, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout,
			MinIdleConns: o.MinIdleConns, MaxIdleConns: o.MaxIdleConns, MaxActiveConns: o.MaxActiveConns,
			ConnMaxIdleTime: o.ConnMaxIdleTime, ConnMaxLifetime: o.ConnMaxLifetime,
			TLSConfig:             o.TLSConfig,
			ContextTimeoutEnabled: true,
		}, nil
	case "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster":
		return parseMultiHostURL(rawURL, scheme)
	default:
		return nil, fmt.Errorf("redis url %q: unknown scheme %q (want redis://, rediss://, redis-sentinel:// or redis-cluster://)", redact(rawURL), scheme)
	}
}

// parseMultiHostURL reads the sentinel and cluster forms, whose host part is
// a comma-separated list that net/url does not accept.
func parseMultiHostURL(rawURL, scheme string) (*redis.UniversalOptions, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("redis url %q: "+format, append([]any{redact(rawURL)}, a...)...)
	}
	rest := strings.TrimPrefix(rawURL, scheme+"://")
	rest, rawQuery, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	o := &redis.UniversalOptions{ContextTimeoutEnabled: true}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		user, pass, hasPass := strings.Cut(authority[:at], ":")
		var err error
		if o.Username, err = url.PathUnescape(user); err != nil {
			return nil, bad("bad user name")
		}
		if hasPass {
			if o.Password, err = url.PathUnescape(pass); err != nil {
				return nil, bad("bad password")
			}
		}
		authority = authority[at+1:]
	}
	sentinel := strings.HasSuffix(scheme, "-sentinel")
	defaultPort := "6379"
	if sentinel {
		defaultPort = "26379"
	}
	for _, h := range strings.Split(authority, ",") {
		if h == "" {
			return nil, bad("empty host in the host list")
		}
		host, port, err := splitHostPort(h, defaultPort)
		if err != nil {
			return nil, bad("host %q: %v", h, err)
		}
		o.Addrs = append(o.Addrs, host+":"+port)
	}
	if strings.HasPrefix(scheme, "rediss") {
		o.TLSConfig = tlsConfig(o.Addrs[0])
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, bad("bad query: %v", err)
	}
	if sentinel {
		o.MasterName = strings.Trim(path, "/")
		if o.MasterName == "" {
			return nil, bad("sentinel URL needs the master name as its path (redis-sentinel://h1:26379,h2:26379/mymaster)")
		}
	} else {
		o.IsClusterMode = true
		if strings.Trim(path, "/") != "" {
			return nil, bad("a cluster has no database number or path")
		}
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch {
		case k == "db" && sentinel:
			if o.DB, err = strconv.Atoi(v); err != nil || o.DB < 0 {
				return nil, bad("db must be a non-negative number, got %q", v)
			}
		case k == "sentinel_username" && sentinel:
			o.SentinelUsername = v
		case k == "sentinel_password" && sentinel:
			o.SentinelPassword = v
		case k == "client_name":
			o.ClientName = v
		case k == "pool_size":
			if o.PoolSize, err = strconv.Atoi(v); err != nil || o.PoolSize < 0 {
				return nil, bad("pool_size must be a non-negative number, got %q", v)
			}
		case k == "dial_timeout" || k == "read_timeout" || k == "write_timeout" || k == "pool_timeout":
			d, err := parseSeconds(v)
			if err != nil {
				return nil, bad("%s: %v", k, err)
			}
			switch k {
			case "dial_timeout":
				o.DialTimeout = d
			case "read_timeout":
				o.ReadTimeout = d
			case "pool_timeout":
				o.PoolTimeout = d
			default:
				o.WriteTimeout = d
			}
		default:
			return nil, bad("unknown option %q", k)
		}
	}
	return o, nil
}

func splitHostPort(h, defaultPort string) (string, string, error) {
	host, port := h, defaultPort
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.HasSuffix(h, "]") {
		host, port = h[:i], h[i+1:]
	}
	if host == "" {
		return "", "", fmt.Errorf("empty host")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", "", fmt.Errorf("bad port %q", port)
	}
	return host, port, nil
}

func parseSeconds(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration like 3s or a number of seconds, got %q", v)
	}
	return d, nil
}

// redact hides the secrets in a URL shown in an error: the password of
// its user info and the value of any query parameter that names a secret
// (password, sentinel_password, token, …), URL-encoded or not.
func redact(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		if strings.Contains(rawURL, "@") || strings.Contains(rawURL, "?") {
			return "<redacted>"
		}
		return rawURL
	}
	rest, query, hasQuery := strings.Cut(rest, "?")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			rest = user + ":xxxxx@" + rest[at+1:]
		}
	}
	if !hasQuery {
		return scheme + "://" + rest
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil || hide.SecretKey(name) || strings.Contains(strings.ToLower(name), "pass") {
			params[i] = k + "=xxxxx"
		}
	}
	return scheme + "://" + rest + "?" + strings.Join(params, "&")
}

func tlsConfig(addr string) *tls.Config {
	host, _, _ := strings.Cut(addr, ":")
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}
