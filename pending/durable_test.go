package pending

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
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
		after     time.Duration // since the previous look
		unvouched bool          // nobody vouches that the master still is one (vouchedFor)
		runID     string
		replicas  []string
		want      int // the count of that master after the look
		told      int // the last count logged and reported (the current master's)
	}
	a, b := "10.0.0.1:6379", "10.0.0.2:6379"
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a replica down at open comes back", []step{
			{0, false, "m1", []string{a}, 1, 1},
			{time.Second, false, "m1", []string{a, b}, 2, 2},
		}},
		{"a replica that leaves still counts until it is gone for good", []step{
			{0, false, "m1", []string{a, b}, 2, 2},
			{time.Second, false, "m1", []string{a}, 2, 2},
			{replicaGoneAfter - 2*time.Second, false, "m1", []string{a}, 2, 2},
			{2 * time.Second, false, "m1", []string{a}, 1, 1},
			{time.Second, false, "m1", []string{a, b}, 2, 2},
		}},
		{"a new master is held to its own replicas, and rises as they join", []step{
			{0, false, "m1", []string{a, b}, 2, 2},
			{time.Second, false, "m2", nil, 0, 0},
			{time.Second, false, "m2", []string{a}, 1, 1},
			{time.Second, false, "m2", []string{a, b}, 2, 2},
		}},
		{"a replica gone from a master nobody vouches for still counts", []step{
			{0, false, "m1", []string{a, b}, 2, 2},
			{replicaGoneAfter + time.Second, true, "m1", nil, 2, 2},
			{time.Second, true, "m1", nil, 2, 2},
			{time.Second, false, "m1", []string{a}, 1, 1},
		}},
		{"with no replica at open, one that joins is waited for", []step{
			{0, false, "m1", nil, 0, 0},
			{time.Second, false, "m1", []string{a}, 1, 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told targetLog
			r := &replicaAcks{mode: acksAuto, log: quietLogger(), changed: told.add, told: -1}
			now := time.Unix(1000, 0)
			for i, st := range tc.steps {
				now = now.Add(st.after)
				need, online := r.observe(look{runID: st.runID, master: true, replicas: st.replicas}, now, true, !st.unvouched)
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
	r.observe(look{runID: "old", master: true, replicas: []string{"a:1", "b:1"}}, now, true, true)
	r.observe(look{runID: "new", master: true}, now.Add(time.Second), true, true)
	need, online := r.observe(look{runID: "old", master: true, replicas: []string{"b:1"}}, now.Add(2*time.Second), false, true)
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
// Each run has a Sentinel set of its own. failover-unseen is a failover
// whose end the stores cannot learn for a while (failoverUnseen): the
// shape in which an outside fault run lost 1 confirmed decision in 600.
func TestSentinelNoConfirmedDecisionLost(t *testing.T) {
	t.Parallel() // its own Redis topology; most of its time is waiting on failovers
	for _, tc := range []struct {
		fault      string
		downAtOpen bool
		caller     time.Duration
	}{
		{"failover", true, time.Second},
		{"failover", true, 2 * time.Second},
		{"failover-unseen", true, 2 * time.Second},
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
			run := failoverRun{failover: failover, caller: tc.caller, downAtOpen: tc.downAtOpen}
			switch tc.fault {
			case "kill":
				run.failover = func() { d.Master().Kill() }
			case "failover-unseen":
				run.url, run.failover, run.settle = failoverUnseen(t, d)
			}
			c := decidesThroughFailover(t, d, run)
			c.check(t)
		})
	}
}

// A process that only decides follows a Cluster failover, and the
// migration of askops' slot to another master, by itself: MOVED (and ASK,
// TRYAGAIN, a dead node) make it reload the slot map and send the decide
// again to the new master within the caller's deadline. Before, every
// decide got MOVED after a CLUSTER FAILOVER until the periodic reload
// (8 s measured). It logs, for graceful and kill -9 failovers over a few
// runs, how long after the replica's promotion decides succeed again
// (p50 and max: numbers to read, not asserted), and asserts that no
// decide was answered with a MOVED.
func TestClusterDecidesFollowFailover(t *testing.T) {
	t.Parallel() // its own Redis topology; most of its time is waiting on failovers
	const runs = 3
	c := redistest.StartCluster(t)
	key := newRedisKeys(rediskey.Default()).deadlines
	for _, fault := range []string{"CLUSTER FAILOVER", "kill -9", "slot migration"} {
		t.Run(fault, func(t *testing.T) {
			var served, gaps []time.Duration
			for run := range runs {
				r := clusterFailoverRun(t, c, key, fault, 2*time.Second)
				t.Logf("run %d: %s", run, r)
				if r.moved != 0 {
					t.Errorf("run %d: %d decides answered MOVED, want the redirect followed", run, r.moved)
				}
				if r.servedAfter < 0 {
					t.Errorf("run %d: no decide succeeded after the promotion", run)
				}
				served, gaps = append(served, r.servedAfter), append(gaps, r.longestGap)
			}
			slices.Sort(served)
			slices.Sort(gaps)
			t.Logf("%s over %d runs: decides succeed again %v after the promotion (p50 %s, max %s); longest time without a successful decide %v (p50 %s, max %s)",
				fault, runs, served, served[len(served)/2], served[len(served)-1], gaps, gaps[len(gaps)/2], gaps[len(gaps)-1])
		})
	}
}

// clusterRun is what one failover under a stream of decides did.
type clusterRun struct {
	decides, failed int
	moved           int           // failed with MOVED well before the caller's deadline
	promotedAfter   time.Duration // from the fault to the replica answering as master
	servedAfter     time.Duration // from the promotion to the first decide that succeeded after it (-1: none)
	longestGap      time.Duration // the longest time between two decides that succeeded
}

func (r clusterRun) String() string {
	return fmt.Sprintf("%d decides, %d failed (%d with MOVED before the deadline); replica promoted %s after the fault, decides succeed again %s after the promotion; longest time without a successful decide %s",
		r.decides, r.failed, r.moved, r.promotedAfter.Round(time.Millisecond), r.servedAfter.Round(time.Millisecond), r.longestGap.Round(time.Millisecond))
}

func clusterFailoverRun(t *testing.T, c *redistest.Cluster, key, fault string, caller time.Duration) clusterRun {
	const asks = 600
	opts := Options{Logger: quietLogger(), Namespace: "askops"}
	creator := newRedisStore(t, c.URL(), opts)
	decider := newRedisStore(t, c.URL(), opts)
	ctx := t.Context()
	ids := createAsks(ctx, t, creator, asks, time.Minute)
	c.MasterOf(key).WaitReplicated(10 * time.Second)

	var r clusterRun
	var mu sync.Mutex
	var promotedAt, faultAt, firstAfter, lastOK time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := 0
		for next < len(ids) {
			select {
			case <-stop:
				return
			default:
			}
			began := time.Now()
			dctx, cancel := context.WithTimeout(ctx, caller)
			_, err := decider.Decide(dctx, ids[next], Approved, "U1", "")
			cancel()
			ended := time.Now()
			mu.Lock()
			r.decides++
			switch {
			case err == nil || ErrorCode(err) == CodeConflict:
				next++
				if !lastOK.IsZero() {
					r.longestGap = max(r.longestGap, ended.Sub(lastOK))
				}
				lastOK = ended
				if !promotedAt.IsZero() && firstAfter.IsZero() && ended.After(promotedAt) {
					firstAfter = ended
				}
			default:
				r.failed++
				t.Logf("decide failed %s after the fault: %v", time.Since(faultAt).Round(time.Millisecond), err)
				// MOVED is an answer only when the deadline left no time
				// to follow it (the old master held the decide through
				// its failover pause).
				if strings.Contains(err.Error(), "MOVED") && ended.Sub(began) < caller-2*replyMargin {
					r.moved++
				}
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// Some decides succeed before the fault (it was a second's sleep).
	testwait.For(t, "decides before the fault", func() bool { mu.Lock(); defer mu.Unlock(); return !lastOK.IsZero() && r.decides >= 50 })
	old := c.MasterOf(key)
	replica := c.ReplicaOf(old)
	mu.Lock()
	faultAt = time.Now()
	mu.Unlock()
	switch fault {
	case "kill -9":
		old.Kill()
	case "slot migration":
		c.MigrateSlotOf(key) // "promoted": the slot is the other master's once this returns
	default:
		c.Failover(key)
	}
	for fault != "slot migration" && !replica.IsMaster() {
		if time.Since(faultAt) > 30*time.Second {
			t.Fatalf("%s: the replica was not promoted within 30 s", fault)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	promotedAt = time.Now()
	mu.Unlock()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		ok := !firstAfter.IsZero() && time.Since(firstAfter) > time.Second
		mu.Unlock()
		if ok {
			break
		}
	}
	close(stop)
	<-done
	r.promotedAfter = promotedAt.Sub(faultAt)
	r.servedAfter = -1
	if !firstAfter.IsZero() {
		r.servedAfter = firstAfter.Sub(promotedAt)
	}
	if fault == "kill -9" {
		old.Restart() // it rejoins as the new master's replica
	}
	c.WaitHealthy()
	return r
}

// What a decider, a waiter and the audit see when the replicas cannot
// hold a decision, on Sentinel and Cluster, with 1 s and 2 s callers:
//
//   - replicas hung (frozen: still connected, acknowledging nothing): the
//     script runs, WAIT falls short. The decider is told "decision recorded
//     but not yet durable; re-read" (unavailable, with the record); so is a
//     second decider, with the first one's decision. The waiter does not
//     return. The audit has the decided event (it is in the decision's
//     script: exactly as durable as the decision). Once the replicas are
//     back the waiter wakes with the decision without anyone deciding again,
//     and a re-read (deciding again) answers that it was decided.
//   - a replica killed: the decide fails closed before anything is
//     written (plain unavailable, the record still pending, no decided
//     event), until the replica has been gone for replicaGoneAfter; then the
//     count is lowered (reported) without any WAIT having to complete, and
//     a decide with the same short deadline goes through.
func TestDecisionNotYetDurable(t *testing.T) {
	t.Parallel() // its own Redis topology; most of its time is waiting on failovers
	type deployment struct {
		url      string
		replicas func() []*redistest.Server // of the master holding askops' keys
		restore  func(killed *redistest.Server)
		master   func() *redistest.Server
	}
	key := newRedisKeys(rediskey.Default()).deadlines
	topologies := []struct {
		name  string
		start func(t *testing.T) deployment
	}{
		{"sentinel", func(t *testing.T) deployment {
			d := redistest.StartSentinel(t, 2)
			return deployment{url: d.URL(), replicas: d.Replicas, master: d.Master, restore: func(k *redistest.Server) {
				k.Restart()
				d.WaitReplicas(2, 30*time.Second)
			}}
		}},
		{"cluster", func(t *testing.T) deployment {
			c := redistest.StartCluster(t)
			return deployment{url: c.URL(),
				replicas: func() []*redistest.Server { return []*redistest.Server{c.ReplicaOf(c.MasterOf(key))} },
				master:   func() *redistest.Server { return c.MasterOf(key) },
				restore: func(k *redistest.Server) {
					k.Restart()
					c.WaitHealthy()
				}}
		}},
	}
	for _, topo := range topologies {
		t.Run(topo.name, func(t *testing.T) {
			dep := topo.start(t)
			for _, caller := range []time.Duration{time.Second, 2 * time.Second} {
				t.Run(fmt.Sprintf("hung/caller%s", caller), func(t *testing.T) {
					testHungReplicas(t, dep.url, dep.master(), dep.replicas(), caller)
				})
			}
			for _, caller := range []time.Duration{time.Second, 2 * time.Second} {
				t.Run(fmt.Sprintf("killed/caller%s", caller), func(t *testing.T) {
					dep.master().WaitReplicated(10 * time.Second)
					killed := dep.replicas()[0]
					testKilledReplica(t, dep.url, dep.master(), len(dep.replicas()), killed, caller)
					dep.restore(killed)
				})
			}
		})
	}
}

// decideWithin is one Decide by a caller with deadline caller.
func decideWithin(s *RedisStore, caller time.Duration, id string, o Outcome, by string) (Ask, error) {
	ctx, cancel := context.WithTimeout(context.Background(), caller)
	defer cancel()
	return s.Decide(ctx, id, o, by, "")
}

// decidedEvents are the decided events of id in s's audit.
func decidedEvents(t *testing.T, s *RedisStore, id string) []Outcome {
	t.Helper()
	return auditPick(t, s, func(e Event) (Outcome, bool) {
		return e.Outcome, e.AskID == id && e.Kind != EventAsked
	})
}

// createAsks creates n Asks of sampleRequest(0) to sampleRequest(n-1) on
// s, each due in ttl, and returns their ids in that order: the load the
// failover and hung-replica runs decide and wait on.
func createAsks(ctx context.Context, tb testing.TB, s Store, n int, ttl time.Duration) []string {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		a, err := s.Create(ctx, sampleRequest(i), ttl)
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = a.ID
	}
	return ids
}

func testHungReplicas(t *testing.T, url string, master *redistest.Server, replicas []*redistest.Server, caller time.Duration) {
	opts := Options{Logger: quietLogger()} // askops: the namespace is the hash tag, whose master the caller froze the replicas of
	waiter := newRedisStore(t, url, opts)
	decider := newRedisStore(t, url, opts)
	a, err := waiter.Create(t.Context(), sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	master.WaitReplicated(10 * time.Second)
	woke := waitInBackground(t, waiter, a.ID)
	testwait.Within(t, 10*time.Second, "the Wait registered", func() bool { return waiter.waiting() == 1 })

	for _, r := range replicas {
		r.Freeze()
	}
	_, err = decideWithin(decider, caller, a.ID, Approved, "U1")
	rec, _ := errors.AsType[*Error](err)
	if !NotDurable(err) || ErrorCode(err) != CodeUnavailable || rec == nil || rec.Msg != "decision recorded but not yet durable; re-read" {
		t.Fatalf("decide with the replicas hung: %v, want unavailable: decision recorded but not yet durable; re-read", err)
	}
	if first, ok := rec.Record.(*Ask); !ok || first.Status != Status(Approved) || first.DecidedBy != "U1" {
		t.Errorf("the not-durable answer carries %+v, want the approval by U1", rec.Record)
	}
	_, err = decideWithin(decider, caller, a.ID, Denied, "U2")
	if rec, _ := errors.AsType[*Error](err); !NotDurable(err) || rec == nil || rec.Record.(*Ask).Status != Status(Approved) {
		t.Errorf("a second decide with the replicas hung: %v, want not durable with the first decision", err)
	}
	if got := decidedEvents(t, decider, a.ID); !slices.Equal(got, []Outcome{Approved}) {
		t.Errorf("audit while not durable: decided events %v, want the one approval (it is in the decision's script)", got)
	}
	// A waiter that comes after the decision (its first read finds it
	// decided, not durable) neither acts on it nor gives up.
	lateWoke := waitInBackground(t, waiter, a.ID)
	gctx, cancel := context.WithTimeout(t.Context(), caller)
	if got, err := decider.Get(gctx, a.ID); !NotDurable(err) {
		t.Errorf("Get while not durable: %s %v, want not durable (an API client polling GET /v1/asks/{id} acts on what it reads)", got.Status, err)
	}
	cancel()
	select {
	case got := <-woke:
		t.Fatalf("the waiter returned %s while the decision was not on the replicas", got.Status)
	case got := <-lateWoke:
		t.Fatalf("the waiter that came after the decision returned %s while it was not on the replicas", got.Status)
	case <-time.After(caller + finishBudgetOf(waiter)):
	}

	for _, r := range replicas {
		r.Thaw()
	}
	for _, w := range []struct {
		woke <-chan Ask
		who  string
	}{{woke, "the waiter"}, {lateWoke, "the waiter that came after the decision"}} {
		got := testwait.ReceiveWithin(t, w.woke, 20*time.Second, w.who+" to wake once the replicas came back (nobody decided again)")
		if got.Status != Status(Approved) {
			t.Errorf("%s woke with %s, want approved", w.who, got.Status)
		}
	}
	if got, err := decider.Get(t.Context(), a.ID); err != nil || got.Status != Status(Approved) {
		t.Errorf("Get once durable: %s %v, want approved", got.Status, err)
	}
	_, err = decideWithin(decider, caller, a.ID, Approved, "U1")
	if first, ok := ConflictAsk(err); !ok || first.Status != Status(Approved) || first.DecidedBy != "U1" {
		t.Errorf("re-read after the replicas came back: %v, want it decided (approved by U1)", err)
	}
}

func testKilledReplica(t *testing.T, url string, master *redistest.Server, replicas int, killed *redistest.Server, caller time.Duration) {
	var told targetLog
	opts := Options{Logger: quietLogger(), ReplicaAcksChanged: told.add}
	decider := newRedisStore(t, url, opts)
	a, err := decider.Create(t.Context(), sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if told.last() != replicas {
		t.Fatalf("the store waits for %d replicas, want %d", told.last(), replicas)
	}
	killed.Kill()
	// What is tested is a store that still waits for a replica its master
	// knows is gone. In the instant before the master has noticed, the
	// replica still reads as online, the decision is recorded, and WAIT
	// then reports it not durable: fail closed too, but another case (see
	// testHungReplicas). CI once decided in that instant.
	master.WaitReplicaGone(killed, 10*time.Second)
	_, err = decideWithin(decider, caller, a.ID, Approved, "U1")
	if ErrorCode(err) != CodeUnavailable || NotDurable(err) {
		t.Errorf("decide right after a replica was killed: %v, want unavailable with nothing recorded", err)
	}
	if got, err := decider.Get(t.Context(), a.ID); err != nil || got.Status != StatusPending {
		t.Errorf("after the refused decide the record is %s (%v), want pending", got.Status, err)
	}
	if got := decidedEvents(t, decider, a.ID); len(got) != 0 {
		t.Errorf("audit after the refused decide: decided events %v, want none", got)
	}
	testwait.Within(t, replicaGoneAfter+10*time.Second, "the count lowered once the replica is gone", func() bool { return told.last() == replicas-1 })
	if _, err := decideWithin(decider, caller, a.ID, Approved, "U1"); err != nil {
		t.Errorf("decide with the killed replica counted out: %v", err)
	}
}

// finishBudgetOf is how long a waiter whose first read fails retries it
// before giving up (await's giveUp).
func finishBudgetOf(s *RedisStore) time.Duration { return s.finishBudget() }

// cancelAfterWait is a go-redis hook that ends the decider's context the
// moment the pipeline carrying its WAIT has answered: a decider whose
// deadline WAIT used up, made exact.
type cancelAfterWait struct {
	cancel atomic.Pointer[context.CancelFunc]
}

func (h *cancelAfterWait) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *cancelAfterWait) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *cancelAfterWait) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if f := h.cancel.Load(); c.Name() == "wait" && f != nil {
				(*f)()
			}
		}
		return err
	}
}

// The announcement of a durable decision does not depend on the decider's
// context: a decider whose deadline WAIT used up (here its context ends
// the moment WAIT answers) still has its decision announced, and the
// waiter in another process wakes with it. Before, the announcement was
// published on the spent context, failed ("context canceled"), and the
// waiter slept until its deadline.
func TestAnnouncementOutlivesTheDecidersContext(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	opts := Options{Logger: quietLogger(), ReplicaTimeout: 10 * time.Second}
	waiter := newRedisStore(t, d.URL(), opts)
	client := newRedisClient(t, d.URL())
	var hook cancelAfterWait
	client.AddHook(&hook)
	decider := openRedisStore(t, client, opts)

	a, err := waiter.Create(t.Context(), sampleRequest(1), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	woke := waitInBackground(t, waiter, a.ID)
	testwait.For(t, "the Wait's first read", func() bool { return waiter.waiters.countRead() == 1 })

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	hook.cancel.Store(&cancel)
	if _, err := decider.Decide(ctx, a.ID, Approved, "U1", ""); err != nil {
		t.Fatalf("decide: %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the decider's context was not ended by WAIT's answer: the test tests nothing")
	}
	got := testwait.Receive(t, woke, "the waiter to wake with the decision (its deadline is an hour away)")
	if got.Status != Status(Approved) {
		t.Errorf("the waiter woke with %s, want approved", got.Status)
	}
}

// A decision recorded while the replicas were hung, whose decider then
// died, still wakes its waiter once the replicas hold it: nobody is left
// to announce it (confirmLater died with the decider), so the waiter's own
// store finds it in the audit trail's decided events and reads it. Before,
// the waiter slept until its deadline.
func TestWaiterWakesAfterItsDeciderDied(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	opts := Options{Logger: quietLogger()}
	waiter := newRedisStore(t, d.URL(), opts)
	decider := newRedisStore(t, d.URL(), opts)
	a, err := waiter.Create(t.Context(), sampleRequest(1), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d.Master().WaitReplicated(10 * time.Second)
	woke := waitInBackground(t, waiter, a.ID)
	testwait.For(t, "the Wait's first read", func() bool { return waiter.waiters.countRead() == 1 })

	replica := d.Replicas()[0]
	replica.Freeze()
	if _, err := decideWithin(decider, time.Second, a.ID, Approved, "U1"); !NotDurable(err) {
		replica.Thaw()
		t.Fatalf("decide with the replica hung: %v, want recorded but not yet durable", err)
	}
	_ = decider.Close() // the decider's process is gone, and its follow-up with it
	replica.Thaw()
	got := testwait.Receive(t, woke, "the waiter to wake with the decision (its deadline is an hour away)")
	if got.Status != Status(Approved) || got.DecidedBy != "U1" {
		t.Errorf("the waiter woke with %s by %q, want approved by U1", got.Status, got.DecidedBy)
	}
}

// failoverUnseen makes a SENTINEL FAILOVER whose end the stores' client
// does not hear of: it reaches the sentinels through proxies whose
// connections go silent the moment a replica is promoted, so it keeps
// reaching the old master, still master for ~11 s (Sentinel demotes it
// only after the failover ends), its replicas gone to the promoted one. A
// decision confirmed on the old master meanwhile is erased by its
// demotion. (The same happens without the proxies when the client learns
// late: an outside run saw it move 6 s after the promotion.) It returns
// the URL the stores open, run's failover, and settle: the old master is a
// replica again before anything is counted.
func failoverUnseen(t *testing.T, d *redistest.Sentinel) (url string, failover, settle func()) {
	var proxies []*redistest.Blackhole
	var addrs []string
	for _, s := range d.Sentinels {
		p := redistest.StartBlackhole(t, s.Addr())
		proxies = append(proxies, p)
		addrs = append(addrs, p.Addr())
	}
	var old *redistest.Server
	healed := make(chan struct{})
	failover = func() {
		old = d.Master()
		if err := d.Failover(); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, "a replica promoted", func() bool {
			for _, n := range d.Data {
				if n != old && n.IsMaster() {
					return true
				}
			}
			return false
		})
		for _, p := range proxies {
			p.Partition()
		}
		go func() {
			// Once the old master is demoted, the stores may learn again.
			defer close(healed)
			defer func() {
				for _, p := range proxies {
					p.Heal()
				}
			}()
			for until := time.Now().Add(time.Minute); old.IsMaster() && time.Now().Before(until); time.Sleep(20 * time.Millisecond) {
			}
		}()
	}
	settle = func() {
		<-healed
		testwait.Within(t, time.Minute, "the old master demoted", func() bool { return !old.IsMaster() })
		d.WaitNewMaster(old, time.Minute)
		d.WaitReplicas(2, time.Minute)
	}
	return "redis-sentinel://" + strings.Join(addrs, ",") + "/" + redistest.SentinelMaster, failover, settle
}
