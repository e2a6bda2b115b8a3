package pending

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/tick"
)

// Durable decisions.
//
// Redis replicates asynchronously: a decision the master acknowledged can
// vanish when a replica that never got it is promoted. So with replicas, a
// decision is confirmed (Decide returns it, a waiter acts on it) only once
// WAIT says the replicas hold it.
//
// How many (replica_acks auto): every replica the master now holding
// askops' keys has had, each counted from the moment it is online until it
// has been gone for replicaGoneAfter. Waiting for one of two is not enough
// (measured: 16 of 200 confirmed decisions lost in a SENTINEL FAILOVER):
// the promoted replica stops copying from the old master at once, the
// other keeps acknowledging the old master's writes until Sentinel moves
// it, and then drops them in its resync. So a replica that leaves its
// master still counts for a while: the old master of a failover, which
// cannot tell a replica promoted away from one that died, goes on refusing
// until it is demoted. Only a replica gone for longer than any failover
// takes to demote the old master is dropped from the count, and it counts
// again the moment it is back. Counting the replicas once, when the store
// opened, lost 45 and 14 of 200 confirmed decisions in a failover after a
// replica that was down at open had come back: WAIT asked for one copy of
// two.
//
// A replica is counted out only while whoever names the master vouches
// that this one still is it (vouchedFor): the sentinels, the Cluster's
// other masters; a lone server is its own word. The old master of a
// SENTINEL FAILOVER stays master for ~11 s (Sentinel demotes it only after
// the failover ends), its replicas gone to the promoted one, and a
// connection the failover client has not moved yet still reaches it:
// counting its replicas out after replicaGoneAfter confirmed decisions on
// it with no WAIT at all, which its demotion then erased (1 in 600 in an
// outside fault run). Unvouched, it keeps waiting for every replica it
// had, so a decide there fails closed and is retried on the new master.
//
// A new master (another run_id: a failover happened) is held to the
// replicas it has, perhaps none (a Cluster shard whose other node died),
// and its count rises as they join.
//
// The count is kept per master, by run_id, and judged on the connection
// that runs the decision: during a failover the pool holds connections to
// the old master and the new one, and judging the old one's WAIT by the
// new one's count once confirmed a decision the old one then lost.
//
// What each side sees:
//
//   - Fewer replicas online than the count, before anything is written:
//     the decide fails closed (unavailable); nothing was recorded.
//   - The script ran but WAIT fell short within the caller's deadline: the
//     decision stands in Redis but is not confirmed. Decide answers
//     ErrNotDurable ("decision recorded but not yet durable; re-read"),
//     with the record; nobody is woken. A waiter acts on it only once a
//     later read finds it durable (confirmEnded), or takes the store's
//     word at the next read if a failover took it back (pending again).
//   - The audit's decided event is in the same script as the decision:
//     it is exactly as durable as the decision itself.
//
// WAIT is bounded by the caller's deadline (less replyMargin) and by
// ReplicaTimeout, and is asked in slices of waitSlice, so a short caller
// still gets its answer in time and a count lowered meanwhile (a replica
// found gone by the monitor, watchReplicas) is used at once.
type replicaAcks struct {
	mode   acksMode
	fixed  int  // acksFixed: always this many
	single bool // one server, neither Sentinel nor Cluster: no WAIT while it has no replica
	log    *slog.Logger
	// changed is told the count of the master holding askops' keys each
	// time it changes (the metric).
	changed func(int)

	mu      sync.Mutex
	masters map[string]*masterReplicas // by run_id
	current string                     // the master last seen holding askops' keys
	told    int                        // the count last logged and reported (-1: none yet)
}

type acksMode int

const (
	acksAuto acksMode = iota
	acksFixed
	acksOff
)

// masterReplicas is what one master's replicas have been.
type masterReplicas struct {
	seen   map[string]time.Time // replica ip:port -> when this master last listed it online
	online int                  // online at the last look
	looked time.Time
	// disowned: at the last ask, nobody vouched that it is still the
	// master (see vouchedFor); logged once per change.
	disowned bool
}

// Timings of the count. replicaGoneAfter is longer than a failover takes
// to demote the old master (Sentinel's and the Cluster's, ~1-2 s here), so
// the old master never counts the promoted replica out while it still
// takes writes; short enough that a replica that really died stops
// decisions for seconds, not until someone notices.
const (
	replicaGoneAfter = 5 * time.Second
	replicaLookEvery = 500 * time.Millisecond
	// forgetMaster drops the count of a master not seen for this long.
	forgetMaster = time.Minute
	waitSlice    = 250 * time.Millisecond
	// onlinePause is how often a decide looks again while fewer replicas
	// are online than must hold it.
	onlinePause = 25 * time.Millisecond
	// replyMargin is left of the caller's deadline for WAIT's reply to
	// arrive.
	replyMargin = 100 * time.Millisecond
)

// ErrNotDurable is the cause of a decide whose script ran but whose WAIT
// fell short: the decision stands in Redis (a later read may confirm it,
// a failover may take it back), so the caller must neither act on it nor
// report it undone. Its Error's Record is the Ask as the script left it.
var ErrNotDurable = errors.New("decision recorded but not yet durable; re-read")

// NotDurable reports whether err is a decision recorded but not yet on
// the replicas.
func NotDurable(err error) bool { return errors.Is(err, ErrNotDurable) }

// NotDurableNotice is what a decider is told when their decision was
// recorded but is not yet on the replicas (NotDurable): every front door
// says it in these words instead of "nothing changed", which would be
// untrue.
const NotDurableNotice = "Your decision was recorded but is not yet safe on the Redis replicas, so nothing acts on it yet; askops carries it out by itself once they hold it. Look again in a moment."

// on reports whether decisions go through durable.
func (r *replicaAcks) on() bool {
	switch r.mode {
	case acksOff:
		return false
	case acksFixed:
		return true
	}
	if !r.single {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.masters[r.current]
	return m == nil || len(m.seen) > 0
}

// look is one INFO server + replication of the server holding askops'
// keys.
type look struct {
	runID    string
	master   bool     // role:master
	replicas []string // online replicas, ip:port
}

func parseLook(info string) (look, error) {
	var l look
	role := ""
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			l.runID = v
		}
		if v, ok := strings.CutPrefix(line, "role:"); ok {
			role = v
		}
		if name, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(name, "slave") && strings.Contains(v, "state=") {
			f := map[string]string{}
			for kv := range strings.SplitSeq(v, ",") {
				k, val, _ := strings.Cut(kv, "=")
				f[k] = val
			}
			if f["state"] == "online" {
				l.replicas = append(l.replicas, f["ip"]+":"+f["port"])
			}
		}
	}
	if l.runID == "" || role == "" {
		return look{}, errors.New("INFO has no run_id or role")
	}
	l.master = role == "master"
	return l, nil
}

// goneDue reports whether a replica of the master l looked at has been
// gone long enough to be counted out, if somebody vouches for the master.
func (r *replicaAcks) goneDue(l look, now time.Time) bool {
	if r.mode != acksAuto {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.masters[l.runID]
	if m == nil {
		return false
	}
	for addr, at := range m.seen {
		if now.Sub(at) >= replicaGoneAfter && !slices.Contains(l.replicas, addr) {
			return true
		}
	}
	return false
}

// vouch records whether the master with runID was vouched for (err: why
// not), logging a change.
func (r *replicaAcks) vouch(runID string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.masters[runID]
	if m == nil || m.disowned == (err != nil) {
		return
	}
	m.disowned = err != nil
	if err != nil {
		r.log.Warn("pending: a replica of the master holding askops' keys is gone, and nobody vouches that it is still the master: decisions on it keep waiting for every replica it had",
			"master_run_id", runID, "err", err)
	} else {
		r.log.Info("pending: the master holding askops' keys is vouched for again", "master_run_id", runID)
	}
}

// observe records what a look at a master found and returns how many
// replicas must hold a decision on it, and how many are online. A replica
// gone for replicaGoneAfter is counted out only when vouched says that
// somebody vouches the master is still the one holding askops' keys.
func (r *replicaAcks) observe(l look, now time.Time, current, vouched bool) (need, online int) {
	if r.mode == acksFixed {
		return r.fixed, len(l.replicas)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.masters == nil {
		r.masters = map[string]*masterReplicas{}
	}
	m := r.masters[l.runID]
	why := "rejoined"
	if m == nil {
		m = &masterReplicas{seen: map[string]time.Time{}}
		r.masters[l.runID] = m
		why = "new master"
	}
	for _, addr := range l.replicas {
		m.seen[addr] = now
	}
	for addr, at := range m.seen {
		if vouched && now.Sub(at) >= replicaGoneAfter {
			delete(m.seen, addr)
			why = "gone for " + replicaGoneAfter.String()
		}
	}
	m.online, m.looked = len(l.replicas), now
	for id, other := range r.masters {
		if now.Sub(other.looked) > forgetMaster {
			delete(r.masters, id)
		}
	}
	if current || r.current == "" {
		r.current = l.runID
	}
	if r.current == l.runID && len(m.seen) != r.told {
		if r.told < 0 {
			why = "start"
		}
		r.told = len(m.seen)
		r.log.Info("pending: decisions wait for this many replicas of the master holding askops' keys",
			"replicas", r.told, "online", m.online, "why", why, "master_run_id", l.runID, "seen", slices.Sorted(maps.Keys(m.seen)))
		if r.changed != nil {
			r.changed(r.told)
		}
	}
	return len(m.seen), m.online
}

// needOf is the count of the master with runID now (the monitor may have
// lowered it since the decision's look).
func (r *replicaAcks) needOf(runID string) int {
	if r.mode == acksFixed {
		return r.fixed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.masters[runID]; m != nil {
		return len(m.seen)
	}
	return 0
}

// openReplicaAcks resolves Options.ReplicaAcks at open and, for auto,
// takes the first look.
func (s *RedisStore) openReplicaAcks(ctx context.Context) error {
	r := &s.replicas
	r.log, r.changed, r.told = s.opts.Logger, s.opts.ReplicaAcksChanged, -1
	switch n := s.opts.ReplicaAcks; {
	case n < 0:
		r.mode = acksOff
		return nil
	case n > 0:
		r.mode, r.fixed = acksFixed, n
		s.opts.Logger.Info("pending: decisions wait for a fixed number of replicas (replica_acks)", "replicas", n)
		if r.changed != nil {
			r.changed(n)
		}
		return nil
	}
	r.mode = acksAuto
	switch c := s.client.(type) {
	case *redis.ClusterClient, failoverClient:
	case *redis.Client:
		// go-redis names its Sentinel failover client's address so.
		r.single = c.Options().Addr != "FailoverClient"
	default:
		return fmt.Errorf("a %T cannot wait for replicas: set ReplicaAcks to -1", c)
	}
	return s.lookAtReplicas(ctx)
}

// watchReplicas looks at the replicas of the master holding askops' keys
// every replicaLookEvery, so the count rises as soon as one rejoins and
// falls once one is gone for good, whether or not anything is decided
// meanwhile.
func (s *RedisStore) watchReplicas(ctx context.Context) {
	defer close(s.watching)
	if s.replicas.mode != acksAuto {
		return
	}
	tick.Every(ctx, replicaLookEvery, func() {
		lctx, cancel := context.WithTimeout(ctx, replicaLookEvery)
		_ = s.lookAtReplicas(lctx) // a failed look changes nothing: the count stays
		cancel()
	})
}

func (s *RedisStore) lookAtReplicas(ctx context.Context) error {
	node, err := s.slotNode(ctx)
	if err != nil {
		return err
	}
	info, err := node.Info(ctx, "server", "replication").Result()
	if err != nil {
		return err
	}
	l, err := parseLook(info)
	if err != nil {
		return err
	}
	if l.master {
		s.replicas.mu.Lock()
		before := s.replicas.current
		s.replicas.mu.Unlock()
		now := time.Now()
		vouched := false
		if s.replicas.goneDue(l, now) {
			err := s.vouchedFor(ctx, l.runID, node)
			s.replicas.vouch(l.runID, err)
			vouched = err == nil
		}
		s.replicas.observe(l, now, true, vouched)
		if before != "" && before != l.runID && s.decisions != nil {
			// A failover: the decision subscription may still sit on the
			// demoted master, which hears nothing until it has resynced
			// (measured 8-10 s). Move it to the new master now; its
			// resubscription re-reads every local waiter.
			s.opts.Logger.Info("pending: the master holding askops' keys changed; moving the decision subscription to it", "from", before, "to", l.runID)
			s.decisions.Renew()
			s.catchBack.Store(true)
		}
	}
	return nil
}

// failoverClient is a Sentinel group's client as internal/redisconn opens
// it: go-redis' failover client (Node), and the sentinels' own word on
// which master they name (NamedMaster: its run id, or "" and why not).
type failoverClient interface {
	redis.UniversalClient
	Node() *redis.Client
	NamedMaster(ctx context.Context) (runID string, err error)
}

// vouchedFor asks whoever names the master holding askops' keys whether it
// is still the master with runID (node reaches it): nil if so. The
// sentinels for a Sentinel group (a majority names it, settled); on a
// Cluster, every other master that answers names node as the master of
// askops' slot; a lone server (a look found it master) vouches for itself.
// A go-redis failover client opened elsewhere has no sentinels to ask:
// nobody vouches.
func (s *RedisStore) vouchedFor(ctx context.Context, runID string, node *redis.Client) error {
	switch c := s.client.(type) {
	case failoverClient:
		named, err := c.NamedMaster(ctx)
		if err != nil {
			return err
		}
		if named != runID {
			return fmt.Errorf("the sentinels name the master %s, not %s", named, runID)
		}
		return nil
	case *redis.ClusterClient:
		return s.clusterVouches(ctx, c, node.Options().Addr)
	case *redis.Client:
		if s.replicas.single {
			return nil
		}
	}
	return errors.New("no sentinels to ask")
}

// clusterVouches asks every other master of the Cluster which node serves
// askops' slot: nil when at least one answers and all that answer name
// addr.
func (s *RedisStore) clusterVouches(ctx context.Context, c *redis.ClusterClient, addr string) error {
	slot, err := c.ClusterKeySlot(ctx, s.keys.deadlines).Result()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	agree := 0
	var disagree []string
	_ = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if m.Options().Addr == addr {
			return nil
		}
		// CLUSTER SLOTS, not SHARDS: a Redis before 7.0 knows only it.
		cmd := redis.NewClusterSlotsCmd(ctx, "cluster", "slots")
		_ = m.Process(ctx, cmd)
		slots, err := cmd.Result()
		if err != nil {
			return nil // an unreachable master vouches for nothing
		}
		owner := ""
		for _, r := range slots {
			if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
				owner = r.Nodes[0].Addr
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if owner == addr {
			agree++
		} else {
			disagree = append(disagree, m.Options().Addr+" names "+owner)
		}
		return nil
	})
	if agree == 0 || len(disagree) > 0 {
		return fmt.Errorf("the other masters do not all name %s as the master of askops' slot (%d agree; %s)", addr, agree, strings.Join(disagree, ", "))
	}
	return nil
}

// slotNode is the client of the one server that holds askops' keys (on a
// Cluster, the master of their slot). Commands pipelined on one of its
// connections share it, which WAIT needs: it counts the replicas that have
// everything that connection wrote.
func (s *RedisStore) slotNode(ctx context.Context) (*redis.Client, error) {
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, s.keys.deadlines)
	case failoverClient:
		return c.Node(), nil
	case *redis.Client: // one server, or Sentinel's failover client
		return c, nil
	default:
		return nil, fmt.Errorf("a %T cannot wait for replicas: set ReplicaAcks to -1", c)
	}
}

// durable runs cmd on the server holding askops' keys and returns its reply
// once the replicas hold what it wrote (see durableCmd).
func (s *RedisStore) durable(ctx context.Context, cmd func(redis.Scripter) *redis.Cmd) ([]any, error) {
	c, err := s.durableCmd(ctx, cmd)
	if c == nil {
		return nil, err
	}
	res, cerr := c.Slice()
	if cerr != nil {
		return nil, cerr
	}
	return res, err
}

// followBudget bounds how long a caller without a deadline (the reader)
// follows redirects and failovers before it is told unavailable.
const followBudget = 5 * time.Second

// durableCmd is durable for a reply of any shape. It returns:
//
//   - cmd's reply and nil: the replicas hold what it wrote;
//   - cmd's reply and an error wrapping ErrNotDurable: cmd ran, WAIT fell
//     short within the caller's deadline;
//   - nil and an error: cmd did not run (or it cannot be told whether it
//     did: the connection broke mid-way).
//
// A redirect or a failover seen before cmd ran (MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN, READONLY, a server that turned replica, a refused dial) is
// followed: the slot map is reloaded and cmd sent again to the server now
// holding askops' keys, until the caller's deadline.
func (s *RedisStore) durableCmd(ctx context.Context, cmd func(redis.Scripter) *redis.Cmd) (*redis.Cmd, error) {
	giveUp := time.Now().Add(followBudget)
	if d, ok := ctx.Deadline(); ok {
		giveUp = d.Add(-replyMargin)
	}
	for {
		c, moved, err := s.durableOnce(ctx, cmd)
		if moved == nil {
			return c, err
		}
		if !s.follow(ctx, moved, giveUp) {
			return nil, err
		}
	}
}

// redirect is why a command did not run where it was sent, and where to.
type redirect struct{ to string } // to: MOVED's address, or "" (reload and look again)

func (s *RedisStore) durableOnce(ctx context.Context, cmd func(redis.Scripter) *redis.Cmd) (*redis.Cmd, *redirect, error) {
	node, err := s.slotNode(ctx)
	if err != nil {
		return nil, notRun(err), err
	}
	conn := node.Conn()
	release := sync.OnceFunc(func() { _ = conn.Close() })
	defer release()

	// Which master this connection reaches, and its replicas, before
	// anything is written: too few online fails closed here.
	info, err := conn.Info(ctx, "server", "replication").Result()
	if err != nil {
		return nil, notRun(err), err
	}
	l, err := parseLook(info)
	if err != nil {
		return nil, nil, err
	}
	if !l.master {
		err := errors.New("the server holding askops' keys is a replica now")
		return nil, &redirect{}, err // demoted by a failover: find the new master
	}
	start := time.Now()
	end := s.waitUntil(ctx, start)
	need, online := s.replicas.observe(l, start, false, false) // only the monitor counts a replica out (vouchedFor)
	for online < need {
		// A replica resyncing after a failover is back in a moment, a
		// dead one is counted out by the monitor: look again until the
		// deadline, then fail closed with nothing written.
		if !time.Now().Add(onlinePause).Before(end) {
			return nil, nil, fmt.Errorf("%d of the %d replicas that must hold a decision are online; nothing was recorded", online, need)
		}
		time.Sleep(onlinePause)
		info, err := conn.Info(ctx, "server", "replication").Result()
		if err != nil {
			return nil, notRun(err), err
		}
		if l, err = parseLook(info); err != nil || !l.master {
			return nil, &redirect{}, fmt.Errorf("the server holding askops' keys changed role: %v", err)
		}
		need, online = s.replicas.observe(l, time.Now(), false, false)
	}
	var c *redis.Cmd
	var wait *redis.IntCmd
	if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		c = cmd(p)
		p.Incr(ctx, s.keys.fence)
		// At most firstWait here: a longer wait is shared (waitshare.go).
		wait = redis.NewIntCmd(ctx, "wait", need, waitMillis(earlier(end, time.Now().Add(firstWait))))
		_ = p.Process(ctx, wait)
		return nil
	}); err != nil {
		if cerr := c.Err(); cerr != nil && !isNetworkErr(cerr) {
			if r := notRun(cerr); r != nil {
				return nil, r, cerr // refused, not run: MOVED, READONLY, …
			}
			return nil, nil, cerr // the script's own error
		}
		if c.Err() == nil {
			// cmd ran; the fence or WAIT did not answer.
			return c, nil, fmt.Errorf("%w: %v", ErrNotDurable, err)
		}
		// No answer at all (the connection broke, the deadline passed):
		// cmd may have run. Not "nothing recorded", then: re-read.
		return nil, nil, fmt.Errorf("%w: no answer after it was sent: %v", ErrNotDurable, err)
	}
	got := int(wait.Val())
	if need = min(need, s.replicas.needOf(l.runID)); got < need && time.Now().Before(end) {
		// Short: let the connection go and wait with every other decide
		// on this master (the monitor may count a replica out meanwhile).
		release()
		if n, err := s.sharedWait(ctx, node, l.runID, need, end); err == nil || n > got {
			got = n
		}
	}
	if need = min(need, s.replicas.needOf(l.runID)); got >= need {
		return c, nil, nil
	}
	return c, nil, fmt.Errorf("%w: %d of %d replicas confirmed within %s", ErrNotDurable, got, need, time.Since(start).Round(time.Millisecond))
}

// waitUntil is when WAIT must have answered: the caller's deadline less
// replyMargin, and at most ReplicaTimeout after start.
func (s *RedisStore) waitUntil(ctx context.Context, start time.Time) time.Time {
	end := start.Add(s.opts.ReplicaTimeout)
	if d, ok := ctx.Deadline(); ok && d.Add(-replyMargin).Before(end) {
		end = d.Add(-replyMargin)
	}
	return end
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// waitMillis is WAIT's timeout for a wait until end, in waitSlice pieces,
// never 0 (which would wait forever).
func waitMillis(end time.Time) int64 {
	return max(min(time.Until(end), waitSlice).Milliseconds(), 1)
}

// notRun says whether err means the command was not run where it was sent
// and should be sent again where askops' keys now are (nil: no).
func notRun(err error) *redirect {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	if rerr, ok := errors.AsType[redis.Error](err); ok {
		msg := rerr.Error()
		if addr, ok := strings.CutPrefix(msg, "MOVED "); ok {
			_, to, _ := strings.Cut(addr, " ")
			return &redirect{to: to}
		}
		for _, p := range []string{"ASK ", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING", "READONLY"} {
			if strings.HasPrefix(msg, p) {
				return &redirect{}
			}
		}
		return nil
	}
	return &redirect{} // no answer before anything was sent: a dead or unreachable server
}

func isNetworkErr(err error) bool {
	_, isRedis := errors.AsType[redis.Error](err)
	return err != nil && !isRedis && !errors.Is(err, redis.Nil)
}

// follow gets ready to send a refused command again: on a Cluster, it
// reloads the slot map and, after MOVED, waits until the map names the
// new master; anywhere, it pauses briefly (a Sentinel client finds the new
// master on its next dial). It reports false once giveUp has passed.
func (s *RedisStore) follow(ctx context.Context, r *redirect, giveUp time.Time) bool {
	const pause = 20 * time.Millisecond
	cc, isCluster := s.client.(*redis.ClusterClient)
	for {
		if !time.Now().Add(pause).Before(giveUp) {
			return false
		}
		if isCluster {
			cc.ReloadState(ctx)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
		if !isCluster || r.to == "" {
			return true
		}
		if n, err := cc.MasterForKey(ctx, s.keys.deadlines); err == nil && n.Options().Addr == r.to {
			return true
		}
	}
}

// confirmLaterFor bounds how long confirmLater follows one decision.
const confirmLaterFor = time.Minute

// confirmLater follows a decision recorded but not yet durable, so that
// it wakes its waiters once the replicas hold it without anyone deciding
// again (the one who clicked was told to re-read, not to click twice): it
// reads the record through durable, backing off, and announces the id once
// that read confirms it (every waiter then confirms it again for itself).
// It stops when the record is pending again (a failover took the decision
// back: nothing to announce), gone, after confirmLaterFor, or at Close.
func (s *RedisStore) confirmLater(id string) {
	s.retryLater(time.Now().Add(confirmLaterFor), 100*time.Millisecond, unconfirmedRetry, func() bool {
		ctx, cancel := context.WithTimeout(s.bg, s.opts.ReplicaTimeout+2*replyMargin)
		defer cancel()
		r := s.confirmEnded(ctx, "decide", []string{id})[id]
		if r.end != nil {
			s.announce(id, nil) // each waiter reads and confirms it
		}
		return r.end != nil || r.ask != nil || ErrorCode(r.err) != CodeUnavailable
	})
}

// endLater records the cancellation a waiter could not (its asker went
// away while the store was unreachable) once the store answers again,
// backing off, so the Ask's buttons cannot approve a call nobody waits
// for. It stops once recorded, when a decision got there first, when the
// record is gone, at the Ask's deadline (a decision after it is recorded
// as expired; with the deadline unknown, after confirmLaterFor) or at
// Close. Meanwhile the lease lapses too, and its sweep may end the Ask
// first.
func (s *RedisStore) endLater(id string, last *Ask, reason string) {
	until := time.Now().Add(confirmLaterFor)
	if last != nil {
		until = last.Deadline
	}
	s.retryLater(until, 100*time.Millisecond, time.Second, func() bool {
		ctx, cancel := context.WithTimeout(s.bg, s.finishBudget())
		defer cancel()
		_, _, err := s.decide(ctx, "wait", id, Cancelled, "", reason)
		if err == nil {
			s.opts.Logger.Info("pending: recorded the end of a wait once the store answered again", "ask", id)
		}
		return ErrorCode(err) != CodeUnavailable
	})
}

// announceTimeout bounds one announcement of a durable decision.
const announceTimeout = time.Second

// announce wakes the waiters of id, whose end the replicas hold, in every
// process: its record h (nil: unknown), signed, then the id alone on the
// decided channel (see announce.go: a waiter ends on the record; the id
// alone makes it read and confirm the record for itself). It runs on a
// goroutine and a context of
// its own, never on the decider's: WAIT may have used up the decider's
// deadline (an outside fault run saw "could not announce a decision:
// context deadline exceeded" leave 22 waiters to their deadlines, 21 s
// late), and the decider's answer need not wait for it. A failed
// announcement is retried as a decision not yet durable is followed
// (retryLater), until confirmLaterFor or Close.
func (s *RedisStore) announce(id string, h map[string]string) {
	payloads := []string{id}
	if rec := s.recordAnnouncement(id, h); rec != "" {
		payloads = []string{rec, id}
	}
	s.retryLater(time.Now().Add(confirmLaterFor), 0, time.Second, func() bool {
		ctx, cancel := context.WithTimeout(s.bg, announceTimeout)
		defer cancel()
		var err error
		for len(payloads) > 0 && err == nil {
			if err = s.client.Publish(ctx, s.keys.decided, payloads[0]).Err(); err == nil {
				payloads = payloads[1:]
			}
		}
		if err != nil && s.bg.Err() == nil {
			s.opts.Logger.Warn("pending: could not announce a decision; trying again", "ask", id, "err", err)
		}
		return err == nil
	})
}

// retryLater runs try on a goroutine of its own, first after first (0: at
// once) and then backing off from 100 ms to maxBackoff, until it reports
// done, until passes, or the store closes (Close waits for it).
func (s *RedisStore) retryLater(until time.Time, first, maxBackoff time.Duration, try func() (done bool)) {
	s.laterMu.Lock()
	defer s.laterMu.Unlock()
	if s.laterClosed {
		return
	}
	s.later.Go(func() {
		pause := first
		for backoff := 100 * time.Millisecond; time.Now().Before(until); backoff = min(2*backoff, maxBackoff) {
			if pause > 0 {
				select {
				case <-s.bg.Done():
					return
				case <-time.After(pause):
				}
			} else if s.bg.Err() != nil {
				return
			}
			if try() {
				return
			}
			pause = backoff
		}
	})
}

// confirmEnded re-reads the ended records of ids through durable, so a
// waiter acts only on a decision the replicas hold. (A read can see a
// decision whose WAIT is still running, or one made on a master about to
// lose it to a failover.)
func (s *RedisStore) confirmEnded(ctx context.Context, op string, ids []string) map[string]*readResult {
	const script = "local out = {}\nfor i, k in ipairs(KEYS) do out[i] = redis.call('HGETALL', k) end\nreturn out"
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.keys.ask(id)
	}
	res, err := s.durable(ctx, func(p redis.Scripter) *redis.Cmd { return p.Eval(ctx, script, keys) })
	out := make(map[string]*readResult, len(ids))
	for i, id := range ids {
		var r readResult
		var h map[string]string
		ferr := err
		if ferr == nil && i < len(res) {
			h, ferr = flatToMap(res[i])
		}
		switch {
		case ferr != nil:
			r.err = unavailable(op, ferr)
		case len(h) == 0:
			r.err = notFound(op, id)
		default:
			a, derr := s.requests.decodeAsk(op, id, h)
			switch {
			case derr != nil:
				r.err = derr
			case a.Status != StatusPending:
				r.end = &waitEnd{ask: a}
			default:
				r.ask = &a // taken back by a failover: pending again
			}
		}
		out[id] = &r
	}
	return out
}
