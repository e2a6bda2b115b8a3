package pending

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Durable decisions.
//
// Redis replicates asynchronously: a decision the master acknowledged can
// vanish when a replica that never got it is promoted. So with replicas, a
// decision is confirmed (Decide returns it, a waiter acts on it) only once
// WAIT says the replicas hold it.
//
// How many: all the replicas the master has. Waiting for one of two is not
// enough (measured: 16 of 200 confirmed decisions lost in a SENTINEL
// FAILOVER): the promoted replica stops copying from the old master at
// once, the other keeps acknowledging the old master's writes until
// Sentinel moves it, and then drops them in its resync.
//
// When the count may drop: only on a new master (another run_id). The old
// master cannot tell a replica promoted away from a replica that died, so
// there a shortfall is an error; a new master, fresh from a failover, is
// held to the replicas it has (perhaps none, as on a Cluster shard whose
// other node died), and the count rises again, up to the target, as
// replicas join it. An explicit Options.ReplicaAcks never changes.
type replicaAcks struct {
	target int  // 0: no WAIT at all
	strict bool // Options.ReplicaAcks > 0: never lowered

	mu        sync.Mutex
	acks      int       // what WAIT must reach now
	master    string    // run_id the count was set for
	checkedAt time.Time // last count of a new master's replicas
}

func (r *replicaAcks) on() bool { return r.target > 0 }

func (r *replicaAcks) now() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.acks
}

// raiseEvery is how often a master held to fewer replicas than the target
// is asked whether more have joined.
const raiseEvery = 2 * time.Second

// openReplicaAcks resolves Options.ReplicaAcks at open.
func (s *RedisStore) openReplicaAcks(ctx context.Context) error {
	r := &s.replicas
	if n := s.opts.ReplicaAcks; n != 0 {
		r.target, r.acks, r.strict = max(n, 0), max(n, 0), n > 0
		return nil
	}
	node, err := s.slotNode(ctx)
	if err != nil {
		return err
	}
	m, err := masterInfo(ctx, node)
	if err != nil {
		return err
	}
	r.target, r.acks, r.master, r.checkedAt = m.replicas, m.replicas, m.runID, time.Now()
	return nil
}

// master is what INFO says of the server holding askops' keys.
type master struct {
	runID    string
	replicas int
}

func masterInfo(ctx context.Context, node *redis.Client) (master, error) {
	info, err := node.Info(ctx, "server", "replication").Result()
	if err != nil {
		return master{}, err
	}
	return parseMasterInfo(info)
}

func parseMasterInfo(info string) (master, error) {
	var m master
	var err error
	found := false
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			m.runID = v
		}
		if v, ok := strings.CutPrefix(line, "connected_slaves:"); ok {
			m.replicas, err = strconv.Atoi(v)
			found = err == nil
		}
	}
	if !found || m.runID == "" {
		return master{}, errors.New("INFO has no run_id or connected_slaves")
	}
	return m, nil
}

// slotNode is the client of the one server that holds askops' keys (on a
// Cluster, the master of their slot). Commands pipelined on it share one
// connection, which WAIT needs: it counts the replicas that have everything
// that connection wrote.
func (s *RedisStore) slotNode(ctx context.Context) (*redis.Client, error) {
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, s.keys.deadlines)
	case *redis.Client: // one server, or Sentinel's failover client
		return c, nil
	default:
		return nil, fmt.Errorf("a %T cannot wait for replicas: set ReplicaAcks to -1", c)
	}
}

// durable runs cmd, a fence write and WAIT in one pipeline on the server
// holding askops' keys, and returns cmd's reply once the replicas hold all
// of it. The fence write is there because WAIT covers what its connection
// wrote, and cmd may write nothing (a losing decide, a read).
func (s *RedisStore) durable(ctx context.Context, cmd func(redis.Scripter) *redis.Cmd) ([]any, error) {
	c, err := s.durableCmd(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return c.Slice()
}

// durableCmd is durable for a reply of any shape: cmd, answered only once
// the replicas hold what it wrote.
func (s *RedisStore) durableCmd(ctx context.Context, cmd func(redis.Scripter) *redis.Cmd) (*redis.Cmd, error) {
	node, err := s.slotNode(ctx)
	if err != nil {
		return nil, err
	}
	s.maybeRaise(ctx, node)
	acks := s.replicas.now()
	var c *redis.Cmd
	var wait *redis.IntCmd
	var info *redis.StringCmd
	if _, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
		c = cmd(p)
		p.Incr(ctx, s.keys.fence)
		wait = redis.NewIntCmd(ctx, "wait", acks, s.opts.ReplicaTimeout.Milliseconds())
		_ = p.Process(ctx, wait)
		// Which master answered WAIT must come from the same connection:
		// during a failover a pool holds connections to the old master
		// and the new one, and judging the old one's WAIT by the new
		// one's run_id once confirmed a decision the old one then lost.
		info = p.Info(ctx, "server", "replication")
		return nil
	}); err != nil {
		return nil, err
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	got := int(wait.Val())
	if got >= acks || s.lowered(info.Val(), got) {
		return c, nil
	}
	return nil, fmt.Errorf("%d of %d replicas confirmed within %s", got, acks, s.opts.ReplicaTimeout)
}

// lowered reports whether got replicas are enough after all: true when the
// server is a new master (a failover happened) that has no more than got
// replicas, whose count then becomes the requirement.
func (s *RedisStore) lowered(info string, got int) bool {
	r := &s.replicas
	if r.strict {
		return false
	}
	m, err := parseMasterInfo(info)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.runID == r.master {
		return false // the same master lost replicas: one may be promoted away
	}
	r.master, r.acks, r.checkedAt = m.runID, min(r.target, m.replicas), time.Now()
	s.opts.Logger.Warn("pending: a new master holds askops' keys; decisions wait for its replicas", "replicas", r.acks, "target", r.target)
	return got >= r.acks
}

// maybeRaise counts the replicas of a master held to fewer than the
// target, at most every raiseEvery, and raises the requirement as they
// join.
func (s *RedisStore) maybeRaise(ctx context.Context, node *redis.Client) {
	r := &s.replicas
	r.mu.Lock()
	due := !r.strict && r.acks < r.target && time.Since(r.checkedAt) >= raiseEvery
	if due {
		r.checkedAt = time.Now()
	}
	r.mu.Unlock()
	if !due {
		return
	}
	m, err := masterInfo(ctx, node)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.runID == r.master && m.replicas > r.acks {
		r.acks = min(r.target, m.replicas)
	}
}

// confirmEnded re-reads the ended records of ids through durable, so a
// waiter acts only on a decision the replicas hold. (A read can see a
// decision whose WAIT is still running, or one made on a master about to
// lose it to a failover.)
func (s *RedisStore) confirmEnded(ctx context.Context, ids []string) map[string]*readResult {
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
			r.err = unavailable("wait", ferr)
		case len(h) == 0:
			r.err = notFound("wait", id)
		default:
			a, derr := decodeAsk("wait", id, h)
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
