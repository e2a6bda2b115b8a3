package pending

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// waiters maps an Ask id to the wake-up channels of this process's Waits on
// it. A channel has capacity 1 and is sent to without blocking, so the
// listener never blocks on a slow waiter and repeated wake-ups coalesce; the
// waiter re-reads the record on each wake-up and decides for itself.
type waiters struct {
	mu sync.Mutex
	m  map[string][]chan struct{}
}

func newWaiters() *waiters { return &waiters{m: make(map[string][]chan struct{})} }

func (w *waiters) add(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	chs := w.m[id]
	for i, c := range chs {
		if c == ch {
			chs[i] = chs[len(chs)-1]
			chs = chs[:len(chs)-1]
			break
		}
	}
	if len(chs) == 0 {
		delete(w.m, id)
	} else {
		w.m[id] = chs
	}
}

func (w *waiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.m[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// wakeAll makes every local waiter re-read its record. It runs after each
// (re)subscription, because pub/sub is at-most-once: announcements made
// while the listener was disconnected are lost, but the records are not.
func (w *waiters) wakeAll() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, chs := range w.m {
		for _, ch := range chs {
			select {
			case ch <- struct{}{}:
			default:
			}
			n++
		}
	}
	return n
}

func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, chs := range w.m {
		n += len(chs)
	}
	return n
}

// subscribe opens a pub/sub connection on the decisions channel and waits for
// Redis to confirm it.
func (s *RedisStore) subscribe(ctx context.Context) (*redis.PubSub, error) {
	ps := s.client.Subscribe(ctx, s.keys.decided)
	msg, err := ps.ReceiveTimeout(ctx, 5*time.Second)
	if err == nil {
		if _, ok := msg.(*redis.Subscription); !ok {
			err = errors.New("unexpected first pub/sub message")
		}
	}
	if err != nil {
		_ = ps.Close()
		return nil, err
	}
	return ps, nil
}

// listen is the store's one listener. go-redis reconnects and resubscribes
// a dropped pub/sub connection on the next Receive; each confirmation of a
// (re)subscription arrives as a *redis.Subscription, after which every local
// waiter re-reads its record. A connection that stays silent for two
// ListenerIdle periods despite a PING is presumed dead (half-open, e.g. a
// vanished network) and replaced.
func (s *RedisStore) listen(ctx context.Context) {
	defer close(s.listening)
	log := s.opts.Logger
	backoff := 50 * time.Millisecond
	silent, failures := 0, 0
	for {
		s.psMu.Lock()
		ps := s.ps
		s.psMu.Unlock()
		if ps == nil { // a replacement failed; try again
			if !s.replacePubSub(ctx) {
				if !sleepCtx(ctx, backoff) {
					return
				}
				backoff = min(2*backoff, time.Second)
			}
			continue
		}
		msg, err := ps.ReceiveTimeout(ctx, s.opts.ListenerIdle)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				silent++
				if silent >= 2 {
					log.Warn("pending: decision listener silent, replacing its connection")
					silent = 0
					s.psMu.Lock()
					s.ps = nil
					s.psMu.Unlock()
					_ = ps.Close()
					continue
				}
				_ = ps.Ping(ctx)
				continue
			}
			// go-redis has already redialled and resubscribed (or failed
			// to); retry at once the first time, then back off while
			// Redis stays unreachable.
			log.Warn("pending: decision listener lost its connection, reconnecting", "err", err)
			if failures > 0 && !sleepCtx(ctx, backoff) {
				return
			}
			if failures > 0 {
				backoff = min(2*backoff, time.Second)
			}
			failures++
			continue
		}
		silent, failures = 0, 0
		backoff = 50 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Message:
			s.waiters.wake(m.Payload)
		case *redis.Subscription:
			// NewRedisStore consumed the first confirmation, so this is a
			// resubscription after a dropped connection.
			if m.Kind == "subscribe" {
				n := s.waiters.wakeAll()
				log.Info("pending: decision listener resubscribed; waiters re-read their asks", "waiters", n)
			}
		}
	}
}

// replacePubSub opens a new subscription in place of a dead one. The fresh
// subscription's confirmation is consumed here, so wake everyone now.
func (s *RedisStore) replacePubSub(ctx context.Context) bool {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ps, err := s.subscribe(sctx)
	if err != nil {
		return false
	}
	s.psMu.Lock()
	if ctx.Err() != nil { // Close ran meanwhile
		s.psMu.Unlock()
		_ = ps.Close()
		return false
	}
	s.ps = ps
	s.psMu.Unlock()
	s.waiters.wakeAll()
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
