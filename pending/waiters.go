package pending

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// waiters maps an Ask id to this process's Waits on it, and holds the ids
// whose records the reader is to fetch for them.
//
// Why a waiter never reads Redis itself: 10,000 waiting Asks are 10,000
// parked goroutines (the callers'), and their stacks, not the store's heap,
// are most of the process's memory. A goroutine that once made a go-redis
// call (or decoded JSON, or logged) has grown its stack to 8 KB, and the
// runtime halves an idle stack only while less than a quarter of it is in
// use, so it would stay at 4-8 KB for the whole wait. Instead a waiter only
// registers here and blocks on its channel; the store's one reader goroutine
// fetches the records of every id marked for reading, many per pipelined
// round trip, and hands each waiter the result. (The compare-and-set at the
// deadline or on cancel runs on a short-lived helper goroutine, see
// RedisStore.finish.)
type waiters struct {
	mu    sync.Mutex
	m     map[string][]*waiter
	dirty map[string]struct{} // ids to read for their waiters
	kick  chan struct{}       // capacity 1: tells the reader that dirty is not empty
}

// waiter is one Wait's registration.
type waiter struct {
	id string
	// reads carries the latest read of the record, from the reader only
	// (capacity 1; a newer read replaces an unconsumed older one, except
	// that an ended record is never replaced: it cannot change back).
	reads chan *readResult
	// ended is set (under waiters.mu) once an ended record was delivered:
	// the Wait has its answer, and nothing read later can change it.
	ended bool
	// read is set (under waiters.mu) by the first delivery: until then
	// the Wait does not know the Ask's deadline.
	read bool
	// wake, for an OnEnd waiter (reads is nil), is called instead of a
	// delivery once a read is not of a pending record.
	wake func()
}

// readResult is one read of a waited-on record, exactly one of end, ask
// and err set.
type readResult struct {
	end *waitEnd // the Ask has ended: what Wait returns
	ask *Ask     // the record, still pending
	err error    // why it could not be read
	// unconfirmed, with err: the record as read, ended, but its end not
	// yet on the replicas (see durable.go). The Ask exists and has this
	// deadline; nothing may act on its end.
	unconfirmed *Ask
}

func newWaiters() *waiters {
	return &waiters{m: make(map[string][]*waiter), dirty: make(map[string]struct{}), kick: make(chan struct{}, 1)}
}

// add registers a Wait on id and queues the first read of its record. The
// order matters: a decision announced after the registration queues another
// read; one made before it is in the first read.
func (w *waiters) add(id string) *waiter {
	wt := &waiter{id: id, reads: make(chan *readResult, 1)}
	w.mu.Lock()
	w.m[id] = append(w.m[id], wt)
	w.markLocked(id)
	w.mu.Unlock()
	return wt
}

// addWake registers an OnEnd waiter on id and queues the first read.
func (w *waiters) addWake(id string, wake func()) *waiter {
	wt := &waiter{id: id, wake: wake}
	w.mu.Lock()
	w.m[id] = append(w.m[id], wt)
	w.markLocked(id)
	w.mu.Unlock()
	return wt
}

// wakeAll wakes every OnEnd waiter once: the store is closing.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ws := range w.m {
		for _, wt := range ws {
			if wt.wake != nil && !wt.ended {
				wt.ended = true
				wt.wake()
			}
		}
	}
}

func (w *waiters) remove(wt *waiter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws := w.m[wt.id]
	for i, x := range ws {
		if x == wt {
			ws[i] = ws[len(ws)-1]
			ws = ws[:len(ws)-1]
			break
		}
	}
	if len(ws) == 0 {
		delete(w.m, wt.id)
		delete(w.dirty, wt.id)
	} else {
		w.m[wt.id] = ws
	}
}

// reread queues a read of id's record if this process waits on it and a
// waiter still lacks its end. The id-alone announcement that follows a
// record announcement (announce.go) so costs no read: that read, one
// pipelined round trip on the reader's goroutine, ran beside the woken
// agent on the way to its next model request (BenchmarkClickToResume,
// replica A's trace).
func (w *waiters) reread(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wt := range w.m[id] {
		if !wt.ended {
			w.markLocked(id)
			return
		}
	}
}

// rereadAll queues a read for every local waiter. It runs after each
// resubscription to decisions, because pub/sub is at-most-once:
// announcements made while the listener was disconnected are lost, but the
// records are not.
func (w *waiters) rereadAll() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for id, ws := range w.m {
		w.markLocked(id)
		n += len(ws)
	}
	return n
}

func (w *waiters) markLocked(id string) {
	w.dirty[id] = struct{}{}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// takeDirty removes and returns up to max ids queued for reading.
func (w *waiters) takeDirty(max int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]string, 0, min(max, len(w.dirty)))
	for id := range w.dirty {
		if len(ids) == max {
			break
		}
		ids = append(ids, id)
		delete(w.dirty, id)
	}
	return ids
}

// deliver hands r to every waiter on id. Deliveries (the reader's, and the
// listener's of an announced record) are serialized by mu and waiters only
// receive, so after emptying a channel the send cannot block.
func (w *waiters) deliver(id string, r *readResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wt := range w.m[id] {
		if wt.wake != nil {
			if r.ask == nil && !wt.ended {
				wt.ended = true
				wt.wake()
			}
			continue
		}
		next := r
		select {
		case old := <-wt.reads:
			if old.end != nil {
				next = old
			}
		default:
		}
		wt.reads <- next
		wt.ended = wt.ended || next.end != nil
		wt.read = true
	}
}

// has reports whether this process waits on id.
func (w *waiters) has(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m[id]) > 0
}

func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ws := range w.m {
		n += len(ws)
	}
	return n
}

// countRead counts the Waits that have had their first read, and so know
// their Ask's deadline.
func (w *waiters) countRead() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, ws := range w.m {
		for _, wt := range ws {
			if wt.read {
				n++
			}
		}
	}
	return n
}

// readBatchMax bounds the number of records the reader fetches in one
// pipeline (10,000 Asks registering at once are 40 round trips, not 10,000).
const readBatchMax = 256

// read is the store's one reader: it fetches the records of the ids queued
// by registrations, announcements and resubscriptions, and delivers them to
// their waiters. A failed read is delivered too (each waiter retries on its
// own schedule, bounded by its deadline) and logged once per batch.
func (s *RedisStore) read(ctx context.Context) {
	defer close(s.reading)
	for {
		select {
		case <-s.waiters.kick:
		case <-ctx.Done():
			return
		}
		for ids := s.waiters.takeDirty(readBatchMax); len(ids) > 0 && ctx.Err() == nil; ids = s.waiters.takeDirty(readBatchMax) {
			s.fetch(ctx, ids)
		}
	}
}

// fetch reads the records of ids in one pipeline and delivers them.
func (s *RedisStore) fetch(ctx context.Context, ids []string) {
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.keys.ask(id))
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		s.opts.Logger.Warn("pending: re-read of waiting asks failed", "asks", len(ids), "err", err)
	}
	results := make([]*readResult, len(ids))
	var ended []string
	for i, id := range ids {
		var r readResult
		results[i] = &r
		h, err := cmds[i].Result()
		switch {
		case err != nil:
			r.err = unavailable("wait", err)
		case len(h) == 0:
			r.err = notFound("wait", id)
		default:
			a, err := s.requests.decodeAsk("wait", id, h)
			switch {
			case err != nil:
				r.err = err
			case a.Status != StatusPending:
				r.end = &waitEnd{ask: a}
				ended = append(ended, id)
			default:
				r.ask = &a
			}
		}
	}
	var confirmed map[string]*readResult
	if s.replicas.on() && len(ended) > 0 {
		confirmed = s.confirmEnded(ctx, "wait", ended)
	}
	for i, id := range ids {
		r := results[i]
		if c, ok := confirmed[id]; ok {
			if c.err != nil && r.end != nil {
				c.unconfirmed = &r.end.ask
			}
			r = c
		}
		s.waiters.deliver(id, r)
	}
}
