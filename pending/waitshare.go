package pending

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Shared WAITs.
//
// WAIT blocks the connection it runs on until the replicas acknowledge or
// it times out, and it must run on a connection that wrote after what it
// is to cover. With a replica hung (connected, acknowledging nothing),
// every decide's WAIT ran to ReplicaTimeout on a connection of its own,
// so a store's few connections to the master served about two decides a
// second and the rest queued behind them past their callers' deadlines.
//
// So a decide's own WAIT, pipelined with its write, waits at most
// firstWait, which healthy replicas answer well within. If that falls
// short, the decide lets its connection go and joins the next shared
// round on its master: one connection per master that checks it still
// reaches that master (run_id), writes the fence after every joiner's
// write was answered, and WAITs for the most replicas any joiner needs,
// in slices of waitSlice. However many decides wait, a hung replica holds
// one connection.

// firstWait bounds the WAIT pipelined with a decide's write.
const firstWait = 20 * time.Millisecond

// replicaWaits is the store's shared WAIT rounds, per master run_id.
type replicaWaits struct {
	mu      sync.Mutex
	next    map[string]*waitRound // the round that starts next, open to joiners
	running map[string]bool       // a goroutine runs this master's rounds
}

// waitRound is one shared WAIT.
type waitRound struct {
	runID string        // the master's
	node  *redis.Client // reaches the master (the first joiner's)
	need  int           // the most replicas a joiner needs
	until time.Time     // the latest joiner's end
	done  chan struct{} // closed once got and err are set
	got   int
	err   error
}

var errStoreClosed = errors.New("store closed")

// sharedWait waits until need replicas of the master with runID hold what
// this process wrote to it before the call, or until end, and returns how
// many did. node reaches that master.
func (s *RedisStore) sharedWait(ctx context.Context, node *redis.Client, runID string, need int, end time.Time) (int, error) {
	got := 0
	for time.Now().Before(end) {
		r := s.joinWait(node, runID, need, end)
		t := time.NewTimer(time.Until(end))
		select {
		case <-r.done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		select {
		case <-r.done:
		default:
			return got, ctx.Err() // the deadline came first
		}
		if r.err != nil {
			return got, r.err
		}
		got = r.got
		// The monitor may have counted a replica out meanwhile.
		if need = min(need, s.replicas.needOf(runID)); got >= need {
			return got, nil
		}
	}
	return got, nil
}

// joinWait joins the round of runID that starts next, starting its runner
// if none runs.
func (s *RedisStore) joinWait(node *redis.Client, runID string, need int, end time.Time) *waitRound {
	w := &s.waits
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == nil {
		w.next, w.running = map[string]*waitRound{}, map[string]bool{}
	}
	r := w.next[runID]
	if r == nil {
		r = &waitRound{runID: runID, node: node, need: need, until: end, done: make(chan struct{})}
		w.next[runID] = r
	} else {
		r.need, r.until = max(r.need, need), latest(r.until, end)
	}
	if w.running[runID] {
		return r
	}
	s.laterMu.Lock()
	defer s.laterMu.Unlock()
	if s.laterClosed {
		delete(w.next, runID)
		r.err = errStoreClosed
		close(r.done)
		return r
	}
	w.running[runID] = true
	s.later.Go(func() { s.runWaits(runID) })
	return r
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// runWaits runs the rounds of runID while joiners come.
func (s *RedisStore) runWaits(runID string) {
	w := &s.waits
	for {
		w.mu.Lock()
		r := w.next[runID]
		delete(w.next, runID)
		if r == nil {
			delete(w.running, runID)
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		r.got, r.err = s.waitRound(r)
		close(r.done)
	}
}

// waitRound is one round: on one connection, the master's run_id, the
// fence, then WAIT for at most waitSlice.
func (s *RedisStore) waitRound(r *waitRound) (int, error) {
	ctx, cancel := context.WithDeadline(s.bg, r.until.Add(replyMargin))
	defer cancel()
	conn := r.node.Conn()
	defer func() { _ = conn.Close() }()
	var info *redis.StringCmd
	wait := redis.NewIntCmd(ctx, "wait", r.need, waitMillis(r.until))
	if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Info(ctx, "server")
		p.Incr(ctx, s.keys.fence)
		_ = p.Process(ctx, wait)
		return nil
	}); err != nil {
		return 0, err
	}
	runID := ""
	for line := range strings.SplitSeq(info.Val(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			runID = v
		}
	}
	if runID != r.runID {
		return 0, fmt.Errorf("the shared WAIT reached the master %s, not %s (a failover)", runID, r.runID)
	}
	return int(wait.Val()), nil
}
