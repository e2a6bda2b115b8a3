package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SentinelMaster is the name the Sentinel set monitors its master under.
const SentinelMaster = "askops"

// Sentinel is a real Sentinel deployment owned by a test: one master, its
// replicas and three sentinels (quorum 2), all on loopback ports, with a
// short down-after-milliseconds and failover-timeout so a failover takes
// seconds.
type Sentinel struct {
	t         testing.TB
	Data      []*Server // the master first, then the replicas; roles change with failovers
	Sentinels []*Server
}

// StartSentinel starts a master with replicas replicas and three sentinels
// watching it, waits until the replicas are in sync and every sentinel
// knows the replicas and the other sentinels, and stops everything when the
// test ends. Nothing is persisted.
func StartSentinel(t testing.TB, replicas int) *Sentinel {
	t.Helper()
	d := &Sentinel{t: t}
	dataArgs := func(s *Server) []string {
		return append(s.baseArgs(), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
	}
	master := startServer(t, dataArgs)
	d.Data = append(d.Data, master)
	for range replicas {
		d.Data = append(d.Data, startServer(t, func(s *Server) []string {
			return append(dataArgs(s), "--replicaof", "127.0.0.1", strconv.Itoa(master.port))
		}))
	}
	for range 3 {
		d.Sentinels = append(d.Sentinels, startServer(t, func(s *Server) []string {
			conf := filepath.Join(s.dir, "sentinel.conf")
			// Sentinel rewrites its config file, so each start writes a
			// fresh one naming the master of the moment.
			body := fmt.Sprintf(`port %d
bind 127.0.0.1
daemonize no
dir %s
logfile %s
sentinel monitor %s 127.0.0.1 %d 2
sentinel down-after-milliseconds %s 1000
sentinel failover-timeout %s 4000
sentinel parallel-syncs %s 2
`, s.port, s.dir, filepath.Join(s.dir, "sentinel.log"), SentinelMaster, master.port,
				SentinelMaster, SentinelMaster, SentinelMaster)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Fatalf("redistest: write %s: %v", conf, err)
			}
			return []string{conf, "--sentinel"}
		}))
	}
	d.waitSettled(replicas)
	return d
}

// URL is the deployment in askops' form: redis-sentinel://s1,s2,s3/askops.
func (d *Sentinel) URL() string {
	return "redis-sentinel://" + strings.Join(d.Addrs(), ",") + "/" + SentinelMaster
}

// Master is the data server the sentinels now name as master.
func (d *Sentinel) Master() *Server {
	d.t.Helper()
	m, err := d.master()
	if err != nil {
		d.t.Fatalf("redistest: sentinel master: %v", err)
	}
	return m
}

func (d *Sentinel) master() (*Server, error) {
	var lastErr error
	for _, s := range d.Sentinels {
		out, err := s.Cli("SENTINEL", "get-master-addr-by-name", SentinelMaster)
		if err != nil {
			lastErr = err
			continue
		}
		f := strings.Fields(out)
		if len(f) != 2 {
			lastErr = fmt.Errorf("get-master-addr-by-name answered %q", out)
			continue
		}
		for _, n := range d.Data {
			if n.Addr() == f[0]+":"+f[1] {
				return n, nil
			}
		}
		return nil, fmt.Errorf("the master %s:%s is not one of ours", f[0], f[1])
	}
	return nil, lastErr
}

// Failover asks a sentinel for a manual failover (SENTINEL FAILOVER).
func (d *Sentinel) Failover() error {
	_, err := d.Sentinels[0].Cli("SENTINEL", "FAILOVER", SentinelMaster)
	return err
}

// WaitNewMaster waits until every sentinel names a master other than old
// and that master answers as one, and returns it.
func (d *Sentinel) WaitNewMaster(old *Server, within time.Duration) *Server {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m, err := d.master()
		if err == nil && m != old && d.agree(m) && m.IsMaster() {
			return m
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("redistest: no new sentinel master after %s (last %v)", within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *Sentinel) agree(m *Server) bool {
	want := strings.ReplaceAll(m.Addr(), ":", "\n")
	for _, s := range d.Sentinels {
		out, err := s.Cli("SENTINEL", "get-master-addr-by-name", SentinelMaster)
		if err != nil || strings.TrimSpace(out) != want {
			return false
		}
	}
	return true
}

// WaitReplicas waits until the master has n replicas in sync (after a
// failover, the demoted master and the other replicas resync).
func (d *Sentinel) WaitReplicas(n int, within time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m, err := d.master()
		if err == nil {
			out, _ := m.Cli("INFO", "replication")
			if strings.Contains(out, "connected_slaves:"+strconv.Itoa(n)) {
				return
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("redistest: the master has not %d replicas after %s", n, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitSettled waits until the replicas are in sync and each sentinel sees
// them and the two other sentinels: a failover before that would fail.
func (d *Sentinel) waitSettled(replicas int) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok := true
		for _, n := range d.Data[1:] {
			out, err := n.Cli("INFO", "replication")
			ok = ok && err == nil && strings.Contains(out, "master_link_status:up")
		}
		for _, s := range d.Sentinels {
			out, err := s.Cli("SENTINEL", "master", SentinelMaster)
			ok = ok && err == nil && field(out, "num-slaves") == strconv.Itoa(replicas) &&
				field(out, "num-other-sentinels") == "2"
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			out, _ := d.Sentinels[0].Cli("SENTINEL", "master", SentinelMaster)
			d.t.Fatalf("redistest: the sentinel set did not settle within a minute:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// field reads NAME's value from redis-cli's raw output of a flat
// name/value list (one item per line).
func field(out, name string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		if lines[i] == name {
			return lines[i+1]
		}
	}
	return ""
}

// Addrs are the sentinels' host:port, as a go-redis FailoverClient takes them.
func (d *Sentinel) Addrs() []string { return addrsOf(d.Sentinels) }

// FlushAll empties the master (the replicas follow), so a test case starts
// from nothing.
func (d *Sentinel) FlushAll() error {
	m, err := d.master()
	if err != nil {
		return err
	}
	_, err = m.Cli("FLUSHALL")
	return err
}

// Replicas are the data servers that are not the master now.
func (d *Sentinel) Replicas() []*Server {
	d.t.Helper()
	m := d.Master()
	var out []*Server
	for _, n := range d.Data {
		if n != m {
			out = append(out, n)
		}
	}
	return out
}

// IsMaster reports whether s answers ROLE as a master.
func (s *Server) IsMaster() bool {
	out, err := s.Cli("ROLE")
	return err == nil && strings.HasPrefix(out, "master")
}
