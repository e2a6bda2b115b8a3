package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterNodeTimeout is the Cluster's cluster-node-timeout: how long a
// silent master has before its replica takes over. Low, so a failover test
// takes seconds; high enough that a loaded 2-core CI machine does not fail
// over by accident.
const clusterNodeTimeout = 2000 * time.Millisecond

// Cluster is a real Redis Cluster of three masters, each with one replica,
// on loopback ports, owned by a test.
type Cluster struct {
	t     testing.TB
	Nodes []*Server // all six; which are masters changes with failovers
}

// StartCluster starts six cluster-enabled servers, joins them with
// redis-cli --cluster create (3 masters + 3 replicas), waits until every
// node reports the cluster ok and every replica is in sync, and stops them
// all when the test ends. Nothing is persisted.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatal("redis-cli not found in PATH (it comes with redis-server): " + InstallHint)
	}
	c := &Cluster{t: t}
	for range 6 {
		c.Nodes = append(c.Nodes, startServer(t, func(s *Server) []string {
			return append(s.baseArgs(),
				"--cluster-enabled", "yes",
				"--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout.Milliseconds())),
				// A replica takes over however long it was cut off: the
				// fault tests kill masters on purpose.
				"--cluster-replica-validity-factor", "0",
				"--repl-diskless-sync", "yes",
				"--repl-diskless-sync-delay", "0",
			)
		}))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := cli(0, args...); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitHealthy()
	return c
}

// URL is the cluster in askops' form: redis-cluster://h1:p1,h2:p2,…
func (c *Cluster) URL() string { return "redis-cluster://" + strings.Join(c.Addrs(), ",") }

// MasterOf is the node now serving key's slot as master (as the first
// live node sees it).
func (c *Cluster) MasterOf(key string) *Server {
	c.t.Helper()
	m, err := c.masterOf(key)
	if err != nil {
		c.t.Fatalf("redistest: master of %q: %v", key, err)
	}
	return m
}

func (c *Cluster) masterOf(key string) (*Server, error) {
	for _, n := range c.Nodes {
		if !n.running() {
			continue
		}
		out, err := cli(n.port, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			continue
		}
		slot, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			return nil, fmt.Errorf("CLUSTER KEYSLOT answered %q", out)
		}
		nodes, err := cli(n.port, "CLUSTER", "NODES")
		if err != nil {
			continue
		}
		addr, ok := slotMaster(nodes, slot)
		if !ok {
			return nil, fmt.Errorf("no live master serves slot %d", slot)
		}
		for _, s := range c.Nodes {
			if s.Addr() == addr {
				return s, nil
			}
		}
		return nil, fmt.Errorf("slot %d is served by %s, not one of ours", slot, addr)
	}
	return nil, fmt.Errorf("no node answers")
}

// WaitMasterOf waits until key's slot is served by a live master other
// than old (the replica promoted after old was killed) with the cluster ok
// again, and returns that master.
func (c *Cluster) WaitMasterOf(key string, old *Server, within time.Duration) *Server {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m, err := c.masterOf(key)
		if err == nil && m != old && m.running() && c.allOK() {
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("redistest: key %q has no new master after %s (last: %v)", key, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHealthy waits until every live node says cluster_state:ok and knows
// all six nodes, and every replica's link to its master is up.
func (c *Cluster) waitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !c.allOK() || !c.replicasInSync() {
		if time.Now().After(deadline) {
			out, _ := cli(c.Nodes[0].port, "CLUSTER", "NODES")
			c.t.Fatalf("redistest: the cluster did not become healthy within a minute:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) allOK() bool {
	for _, n := range c.Nodes {
		if !n.running() {
			continue
		}
		out, err := cli(n.port, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(out, "cluster_state:ok") {
			return false
		}
	}
	return true
}

func (c *Cluster) replicasInSync() bool {
	for _, n := range c.Nodes {
		out, err := cli(n.port, "INFO", "replication")
		if err != nil {
			return false
		}
		if strings.Contains(out, "role:slave") && !strings.Contains(out, "master_link_status:up") {
			return false
		}
	}
	return true
}

// slotMaster finds, in CLUSTER NODES output, the address of the live
// master whose slot ranges hold slot.
func slotMaster(nodes string, slot int) (string, bool) {
	for line := range strings.SplitSeq(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 {
			continue
		}
		flags := f[2]
		if !strings.Contains(flags, "master") || strings.Contains(flags, "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				addr, _, _ := strings.Cut(f[1], "@")
				return addr, true
			}
		}
	}
	return "", false
}

// running reports whether the server process is up (not killed or stopped).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// cli runs redis-cli against port (0: no -p, the arguments name the
// nodes) and returns its output. It is test plumbing, never the code under
// test.
func cli(port int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if port != 0 {
		args = append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)
	}
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	s := string(out)
	if err == nil && strings.HasPrefix(s, "ERR") {
		err = fmt.Errorf("redis-cli %s: %s", strings.Join(args, " "), strings.TrimSpace(s))
	}
	return s, err
}

// Cli runs one command on the server with redis-cli and returns its whole
// output (multi-line replies included). Test plumbing only.
func (s *Server) Cli(args ...string) (string, error) { return cli(s.port, args...) }

// Addrs are the nodes' host:port, as a go-redis ClusterClient takes them.
func (c *Cluster) Addrs() []string { return addrsOf(c.Nodes) }

// addrsOf is each server's host:port, in order.
func addrsOf(servers []*Server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// FlushAll empties every live master, so a test case starts from nothing.
func (c *Cluster) FlushAll() error {
	for _, n := range c.Nodes {
		if !n.running() || !n.IsMaster() {
			continue
		}
		if _, err := n.Cli("FLUSHALL"); err != nil {
			return err
		}
	}
	return nil
}

// ReplicaOf is a live replica of master (as master itself reports it).
func (c *Cluster) ReplicaOf(master *Server) *Server {
	c.t.Helper()
	out, err := master.Cli("ROLE")
	if err != nil || !strings.HasPrefix(out, "master") {
		c.t.Fatalf("redistest: %s is not a master: %v %s", master.Addr(), err, out)
	}
	for _, n := range c.Nodes {
		if n == master || !n.running() {
			continue
		}
		// A replica's ROLE names its master's ip and port.
		if r, err := n.Cli("ROLE"); err == nil && strings.HasPrefix(r, "slave") && strings.Contains(r, "\n"+strconv.Itoa(master.port)+"\n") {
			return n
		}
	}
	c.t.Fatalf("redistest: %s has no live replica", master.Addr())
	return nil
}

// Failover makes the replica of key's master take over gracefully (CLUSTER
// FAILOVER on the replica: the master stops writes until the replica has
// caught up, then hands over) and returns the old master and the replica
// that is to be promoted. It does not wait for the promotion.
func (c *Cluster) Failover(key string) (old, promoted *Server) {
	c.t.Helper()
	old = c.MasterOf(key)
	promoted = c.ReplicaOf(old)
	if out, err := promoted.Cli("CLUSTER", "FAILOVER"); err != nil || !strings.HasPrefix(out, "OK") {
		c.t.Fatalf("redistest: CLUSTER FAILOVER on %s: %v %s", promoted.Addr(), err, out)
	}
	return old, promoted
}

// WaitHealthy waits until every live node says the cluster is ok and every
// replica is in sync (after a killed node was restarted and rejoined).
func (c *Cluster) WaitHealthy() { c.waitHealthy() }

// MigrateSlotOf moves key's slot, keys and all, from its master to another
// master, the way redis-cli --cluster reshard moves each slot (SETSLOT
// IMPORTING and MIGRATING, MIGRATE in batches, SETSLOT NODE on every
// master), and returns the master it moved to. Clients meanwhile get ASK
// for keys already moved and TRYAGAIN for commands over keys on both
// sides, then MOVED.
func (c *Cluster) MigrateSlotOf(key string) *Server {
	c.t.Helper()
	src := c.MasterOf(key)
	var dst *Server
	var masters []*Server
	for _, n := range c.Nodes {
		if n.running() && n.IsMaster() {
			masters = append(masters, n)
			if n != src && dst == nil {
				dst = n
			}
		}
	}
	if dst == nil {
		c.t.Fatal("redistest: no other master to migrate to")
	}
	must := func(n *Server, args ...string) string {
		c.t.Helper()
		out, err := n.Cli(args...)
		if err != nil || strings.HasPrefix(out, "ERR") {
			c.t.Fatalf("redistest: %s on %s: %v %s", strings.Join(args, " "), n.Addr(), err, out)
		}
		return strings.TrimSpace(out)
	}
	slot := must(src, "CLUSTER", "KEYSLOT", key)
	srcID, dstID := must(src, "CLUSTER", "MYID"), must(dst, "CLUSTER", "MYID")
	must(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID)
	must(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	for {
		keys := strings.Fields(must(src, "CLUSTER", "GETKEYSINSLOT", slot, "100"))
		if len(keys) == 0 {
			break
		}
		args := append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(dst.port), "", "0", "5000", "KEYS"}, keys...)
		must(src, args...)
	}
	must(dst, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
	must(src, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
	for _, m := range masters {
		if m != src && m != dst {
			must(m, "CLUSTER", "SETSLOT", slot, "NODE", dstID)
		}
	}
	return dst
}
