package pending

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// targetLog records what a store's ReplicaAcksChanged was told.
type targetLog struct {
	mu   sync.Mutex
	told []int
}

func (l *targetLog) add(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.told = append(l.told, n)
}

// last is the count last told, -1 before any.
func (l *targetLog) last() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.told) == 0 {
		return -1
	}
	return l.told[len(l.told)-1]
}

func TestParseLook(t *testing.T) {
	info := "# Server\r\nredis_version:7.2.4\r\nrun_id:abc\r\n# Replication\r\nrole:master\r\nconnected_slaves:3\r\n" +
		"slave0:ip=127.0.0.1,port=7001,state=online,offset=10,lag=0\r\n" +
		"slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n" +
		"slave2:ip=127.0.0.1,port=7003,state=online,offset=10,lag=1\r\nmaster_repl_offset:10\r\n"
	l, err := parseLook(info)
	if err != nil {
		t.Fatal(err)
	}
	if l.runID != "abc" || !l.master || len(l.replicas) != 2 || l.replicas[0] != "127.0.0.1:7001" || l.replicas[1] != "127.0.0.1:7003" {
		t.Errorf("parseLook = %+v, want master abc with the two online replicas (one syncing is not yet online)", l)
	}
	if _, err := parseLook("# Replication\r\nrole:master\r\n"); err == nil {
		t.Error("parseLook accepted INFO without run_id")
	}
}

// The count follows the topology: a look at a master is its run_id and
// its online replicas; what must hold a decision on it is every replica it
// has had online within replicaGoneAfter.
func TestReplicaCountFollowsTheTopology(t *testing.T) {
	type step struct {
		after    time.Duration // since the previous look
		runID    string
		replicas []string
		want     int // the count of that master after the look
		told     int // the last count logged and reported (the current master's)
	}
	a, b := "10.0.0.1:6379", "10.0.0.2:6379"
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a replica down at open comes back", []step{
			{0, "m1", []string{a}, 1, 1},
			{time.Second, "m1", []string{a, b}, 2, 2},
		}},
		{"a replica that leaves still counts until it is gone for good", []step{
			{0, "m1", []string{a, b}, 2, 2},
			{time.Second, "m1", []string{a}, 2, 2},
			{replicaGoneAfter - 2*time.Second, "m1", []string{a}, 2, 2},
			{2 * time.Second, "m1", []string{a}, 1, 1},
			{time.Second, "m1", []string{a, b}, 2, 2},
		}},
		{"a new master is held to its own replicas, and rises as they join", []step{
			{0, "m1", []string{a, b}, 2, 2},
			{time.Second, "m2", nil, 0, 0},
			{time.Second, "m2", []string{a}, 1, 1},
			{time.Second, "m2", []string{a, b}, 2, 2},
		}},
		{"with no replica at open, one that joins is waited for", []step{
			{0, "m1", nil, 0, 0},
			{time.Second, "m1", []string{a}, 1, 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told targetLog
			r := &replicaAcks{mode: acksAuto, log: quietLogger(), changed: told.add, told: -1}
			now := time.Unix(1000, 0)
			for i, st := range tc.steps {
				now = now.Add(st.after)
				need, online := r.observe(look{runID: st.runID, master: true, replicas: st.replicas}, now, true)
				if need != st.want || online != len(st.replicas) || told.last() != st.told {
					t.Errorf("look %d (%s, %v): count %d, online %d, reported %d; want %d, %d, %d",
						i, st.runID, st.replicas, need, online, told.last(), st.want, len(st.replicas), st.told)
				}
			}
		})
	}
}

// The old master of a failover keeps its own count while the new one is
// seen: a decision that reaches the old master over a stale connection is
// judged by the old master's replicas, not the new master's none.
func TestReplicaCountIsPerMaster(t *testing.T) {
	r := &replicaAcks{mode: acksAuto, log: quietLogger(), told: -1}
	now := time.Unix(1000, 0)
	r.observe(look{runID: "old", master: true, replicas: []string{"a:1", "b:1"}}, now, true)
	r.observe(look{runID: "new", master: true}, now.Add(time.Second), true)
	need, online := r.observe(look{runID: "old", master: true, replicas: []string{"b:1"}}, now.Add(2*time.Second), false)
	if need != 2 || online != 1 {
		t.Errorf("old master after the failover: count %d with %d online, want 2 with 1 (refused before anything is written)", need, online)
	}
	if got := r.needOf("new"); got != 0 {
		t.Errorf("new master: count %d, want 0", got)
	}
}

// No confirmed decision is lost, whatever the callers' deadlines: 200
// decides through a failover on a real Sentinel set, each caller with a
// 1 s or 2 s deadline (a Slack click's, an API client's). With a replica
// down while the stores open and back before the decides (counting the
// replicas once at open lost 45 and 14 of 200), then SENTINEL FAILOVER;
// and a master killed with kill -9 (with 1 s callers no decide succeeded
// for 35 s, while 63 decisions they were told had failed were acted on).
// Each run has a Sentinel set of its own.
func TestSentinelNoConfirmedDecisionLost(t *testing.T) {
	for _, tc := range []struct {
		fault      string
		downAtOpen bool
		caller     time.Duration
	}{
		{"failover", true, time.Second},
		{"failover", true, 2 * time.Second},
		{"kill", false, time.Second},
		{"kill", false, 2 * time.Second},
	} {
		name := fmt.Sprintf("%s/caller%s", tc.fault, tc.caller)
		if tc.downAtOpen {
			name = "replica-down-at-open/" + name
		}
		t.Run(name, func(t *testing.T) {
			d := redistest.StartSentinel(t, 2)
			failover := func() { _ = d.Failover() }
			if tc.fault == "kill" {
				failover = func() { d.Master().Kill() }
			}
			c := decidesThroughFailover(t, d, failoverRun{failover: failover, caller: tc.caller, downAtOpen: tc.downAtOpen})
			c.check(t)
		})
	}
}
