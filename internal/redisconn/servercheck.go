package redisconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/tick"
)

// ServerCheck is what askops found in a Redis server's configuration: the
// settings that decide whether its keys can be evicted or lost.
type ServerCheck struct {
	// Read is false when the server refused CONFIG GET (a managed Redis
	// that disables or renames CONFIG, or an ACL without it): nothing
	// below was checked.
	Read bool

	MaxMemoryPolicy string
	MaxMemory       string
	AppendOnly      string
	Save            string

	// Refused says why askops must not run on this server (nil: it may).
	Refused error
	// Warnings are risks to tell the operator that do not stop askops.
	Warnings []string

	addr string // the Cluster master judged; empty for one server
}

// CheckServer reads maxmemory-policy, maxmemory, appendonly and save with
// CONFIG GET (on a Cluster, from every master) and judges them:
//
//   - A maxmemory-policy that may evict askops keys is refused. allkeys-*
//     evicts anything; volatile-* evicts keys with a TTL, and every Ask
//     record has one. An evicted deadline index leaves Asks nobody sweeps,
//     an evicted audit stream loses "decided" events, an evicted record
//     makes its waiter fail: invariants break while Redis answers OK, and
//     nothing tells anyone. It is refused even with maxmemory 0 (no limit
//     yet): the limit is one CONFIG SET away, and managed services set it.
//   - No persistence at all (appendonly no, save "") is a warning: a Redis
//     restart then loses pending Asks and the audit trail, but that fails
//     closed (each waiter ends unavailable; nothing is approved), and an
//     in-memory Redis behind replicas is a choice some make on purpose.
//
// An error reply to CONFIG GET is not an error: Read is false and a
// warning says what could not be checked. A Redis that cannot be reached
// is an error.
func CheckServer(ctx context.Context, client redis.UniversalClient) (ServerCheck, error) {
	cc, ok := client.(*redis.ClusterClient)
	if !ok {
		return checkServer(ctx, client, "")
	}
	// On a Cluster every master is judged on its own (any of them may
	// come to hold askops' slot after a resharding), and the worst decides.
	var (
		mu     sync.Mutex
		checks []ServerCheck
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		check, err := checkServer(ctx, c, c.Options().Addr)
		mu.Lock()
		defer mu.Unlock()
		checks = append(checks, check)
		return err
	})
	if err != nil {
		return ServerCheck{}, err
	}
	if len(checks) == 0 {
		return ServerCheck{}, errors.New("the cluster reported no masters")
	}
	slices.SortFunc(checks, func(a, b ServerCheck) int { return strings.Compare(a.addr, b.addr) })
	worst := checks[0]
	for _, c := range checks {
		if c.Refused != nil || (worst.Read && !c.Read) {
			worst = c
			break
		}
	}
	out := worst
	out.Refused, out.Warnings = nil, nil
	for _, c := range checks {
		out.Read = out.Read && c.Read
		if out.Refused == nil {
			out.Refused = c.Refused
		}
		out.Warnings = append(out.Warnings, c.Warnings...)
	}
	return out, nil
}

// checkServer reads and judges one server; addr, when set, names it in
// what it says (a Cluster master).
func checkServer(ctx context.Context, c redis.UniversalClient, addr string) (ServerCheck, error) {
	who := ""
	if addr != "" {
		who = "master " + addr + ": "
	}
	check := ServerCheck{Read: true, addr: addr}
	got := map[string]string{}
	for _, p := range []string{"maxmemory-policy", "maxmemory", "appendonly", "save"} {
		m, err := c.ConfigGet(ctx, p).Result()
		var rerr redis.Error
		if errors.As(err, &rerr) {
			return ServerCheck{addr: addr, Warnings: []string{fmt.Sprintf(
				"%scould not read the server's configuration (CONFIG GET: %v): check yourself that maxmemory-policy is noeviction and that appendonly is yes", who, err)}}, nil
		}
		if err != nil {
			return ServerCheck{addr: addr}, err
		}
		got[p] = m[p]
	}
	check.MaxMemoryPolicy, check.MaxMemory = got["maxmemory-policy"], got["maxmemory"]
	check.AppendOnly, check.Save = got["appendonly"], got["save"]
	if p := check.MaxMemoryPolicy; strings.HasPrefix(p, "allkeys-") || strings.HasPrefix(p, "volatile-") {
		check.Refused = fmt.Errorf("%smaxmemory-policy is %s: Redis may evict askops keys (pending Asks, the deadline index, the audit stream) when memory runs out; "+
			"set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction)", who, p)
	}
	if check.AppendOnly != "yes" && strings.TrimSpace(check.Save) == "" {
		check.Warnings = append(check.Warnings, who+"the server persists nothing (appendonly no, save \"\"): a Redis restart loses every pending Ask "+
			"(its waiter ends unavailable) and the audit trail; set appendonly yes")
	}
	return check, nil
}

// Summary is one line for logs and check-config.
func (c ServerCheck) Summary() string {
	if !c.Read {
		return "configuration not checked"
	}
	return fmt.Sprintf("maxmemory-policy %s, maxmemory %s, appendonly %s, save %q", c.MaxMemoryPolicy, c.MaxMemory, c.AppendOnly, c.Save)
}

// persists reports whether the server keeps its data across a restart
// (an append-only file, or RDB snapshots).
func (c ServerCheck) persists() bool {
	return c.AppendOnly == "yes" || strings.TrimSpace(c.Save) != ""
}

// ServerWatch re-checks the Redis server's settings while askops runs:
// CONFIG SET maxmemory-policy allkeys-lru on a live server, or a
// persistence setting turned off, changes nothing a start-up check can
// see, and askops would go on recording decisions the server may evict or
// lose. Err is what readiness reports.
type ServerWatch struct {
	client redis.UniversalClient
	log    *slog.Logger

	mu      sync.Mutex
	checked bool
	start   ServerCheck // the first check's
	err     error
}

// ServerWatchEvery is how often Run checks the server again.
const ServerWatchEvery = 30 * time.Second

// NewServerWatch watches client's server(s); nothing is checked before
// Check or Run.
func NewServerWatch(client redis.UniversalClient, log *slog.Logger) *ServerWatch {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &ServerWatch{client: client, log: log}
}

// Check reads the settings once and judges them against the first check:
// an evicting policy is a problem, and so is a server that persisted at
// the first check and persists nothing now. It returns the problem (nil:
// none) and keeps it for Err. A server that cannot be reached keeps the
// last verdict (reachability is readiness' store check) and returns the
// error.
func (w *ServerWatch) Check(ctx context.Context) error {
	check, err := CheckServer(ctx, w.client)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.checked {
		w.checked, w.start = true, check
	}
	var problem error
	switch {
	case check.Refused != nil:
		problem = check.Refused
	case w.start.Read && check.Read && w.start.persists() && !check.persists():
		problem = fmt.Errorf("the server persisted at start (appendonly %s, save %q) and persists nothing now (appendonly %s, save %q): "+
			"a Redis restart would lose every pending Ask and the audit trail; set appendonly yes", w.start.AppendOnly, w.start.Save, check.AppendOnly, check.Save)
	}
	if (problem == nil) != (w.err == nil) || (problem != nil && problem.Error() != w.err.Error()) {
		if problem != nil {
			w.log.Error("redis: the server's settings now put askops keys at risk; not ready", "err", problem, "settings", check.Summary())
		} else {
			w.log.Info("redis: the server's settings are safe again", "settings", check.Summary())
		}
	}
	w.err = problem
	return problem
}

// Err is the problem the last check found (nil: none, or not checked).
func (w *ServerWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Run checks every ServerWatchEvery until ctx ends.
func (w *ServerWatch) Run(ctx context.Context) error {
	tick.Every(ctx, ServerWatchEvery, func() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := w.Check(cctx); err != nil && err != w.Err() { // not the problem Check logged: the server did not answer
			w.log.Warn("redis: could not re-check the server's settings", "err", err)
		}
		cancel()
	})
	return nil
}
