package pending

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
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
