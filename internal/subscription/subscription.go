// Package subscription keeps one Redis pub/sub subscription of a process
// alive and hands its messages to the process.
//
// Pub/sub is at-most-once and its connection can fail three ways, each
// handled here once for every listener in askops:
//   - dropped (CLIENT KILL, a Redis restart): go-redis redials and
//     resubscribes on the next Receive; the loop backs off while Redis stays
//     unreachable, and reports the resubscription, since messages published
//     meanwhile are lost;
//   - silent (half-open: the network vanished without a FIN or RST): a
//     Receive that waits an idle period gets a PING out; two silent periods
//     in a row replace the connection;
//   - not yet there: Subscribe returns only once Redis has confirmed the
//     subscription, so nothing relies on one that does not exist.
package subscription

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/sleep"
)

// confirmTimeout bounds the wait for Redis to confirm a (re)subscription.
const confirmTimeout = 5 * time.Second

// Backoff between attempts while Redis is unreachable.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// Options tune a Subscription.
type Options struct {
	// Idle is how long the loop waits for any message before pinging the
	// connection; two silent periods in a row mean a dead (half-open)
	// connection, which is then replaced. Default 15s.
	Idle time.Duration
	// Logger gets the connection's troubles. Default slog.Default().
	Logger *slog.Logger
	// Name starts every log line, e.g. "pending: decision listener".
	// Default "subscription to CHANNEL".
	Name string
	// RetryAtOnce makes the first Receive after a lost connection run
	// without waiting (go-redis has usually redialled already), and only
	// the following ones back off. Without it every retry waits first.
	RetryAtOnce bool
}

// Handlers are what the process does with the subscription's events. They
// run on the subscription's one goroutine, one at a time, so a slow handler
// delays the next message.
type Handlers struct {
	// Message gets the payload of each message; ctx ends when Close is
	// called. Required.
	Message func(ctx context.Context, payload string)
	// Resubscribed runs after each resubscription that follows the first
	// (a redialled or replaced connection): messages published while the
	// connection was down are lost, so whoever needs them re-reads the
	// state they announce. May be nil.
	Resubscribed func()
}

// Subscription is one confirmed subscription and the goroutine that keeps
// it alive; Close ends both.
type Subscription struct {
	client  redis.UniversalClient
	channel string
	opts    Options
	h       Handlers

	cancel context.CancelFunc
	done   chan struct{} // closed when the loop returns

	mu sync.Mutex
	ps *redis.PubSub // nil while a replacement is pending, and after Close
}

// Subscribe subscribes to channel, waits (within ctx) for Redis to confirm
// it, and starts the loop that dispatches its messages to h until Close.
// The caller keeps ownership of client.
func Subscribe(ctx context.Context, client redis.UniversalClient, channel string, opts Options, h Handlers) (*Subscription, error) {
	if h.Message == nil {
		return nil, errors.New("subscription: no Message handler")
	}
	if opts.Idle <= 0 {
		opts.Idle = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = "subscription to " + channel
	}
	s := &Subscription{client: client, channel: channel, opts: opts, h: h, done: make(chan struct{})}
	ps, err := s.confirm(ctx)
	if err != nil {
		return nil, err
	}
	s.ps = ps
	lctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(lctx)
	return s, nil
}

// Renew drops the subscription's connection so the loop opens a new one
// (on whatever server the client now names, after a failover the new
// master), confirms it and runs Resubscribed, which re-reads what a lost
// message would have said. A process that learns its Redis failed over
// calls it instead of waiting for the old connection to go silent.
func (s *Subscription) Renew() {
	s.mu.Lock()
	ps := s.ps
	s.ps = nil
	s.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
	}
}

// Close stops the loop, waits for it to return and closes the connection.
// It does not close the client. Calling it again does nothing.
func (s *Subscription) Close() error {
	s.cancel()
	s.mu.Lock()
	ps := s.ps
	s.ps = nil
	s.mu.Unlock()
	if ps != nil {
		_ = ps.Close() // unblocks the loop's Receive
	}
	<-s.done
	return nil
}

// confirm opens a pub/sub connection on the channel and waits for Redis to
// confirm the subscription.
func (s *Subscription) confirm(ctx context.Context) (*redis.PubSub, error) {
	ps := s.client.Subscribe(ctx, s.channel)
	msg, err := ps.ReceiveTimeout(ctx, confirmTimeout)
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

// run is the subscription's one goroutine.
func (s *Subscription) run(ctx context.Context) {
	defer close(s.done)
	log := s.opts.Logger
	backoff := minBackoff
	silent, failures := 0, 0
	for ctx.Err() == nil {
		s.mu.Lock()
		ps := s.ps
		s.mu.Unlock()
		if ps == nil { // the silent connection was dropped, or its replacement failed
			if !s.replace(ctx) {
				if !sleep.For(ctx, backoff) {
					return
				}
				backoff = min(2*backoff, maxBackoff)
			}
			continue
		}
		msg, err := ps.ReceiveTimeout(ctx, s.opts.Idle)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if silent++; silent >= 2 {
					log.Warn(s.opts.Name + " silent, replacing its connection")
					silent = 0
					s.mu.Lock()
					s.ps = nil
					s.mu.Unlock()
					_ = ps.Close()
					continue
				}
				_ = ps.Ping(ctx)
				continue
			}
			// go-redis has already redialled and resubscribed (or failed
			// to); back off while Redis stays unreachable.
			log.Warn(s.opts.Name+" lost its connection, reconnecting", "err", err)
			if failures > 0 || !s.opts.RetryAtOnce {
				if !sleep.For(ctx, backoff) {
					return
				}
				backoff = min(2*backoff, maxBackoff)
			}
			failures++
			continue
		}
		silent, failures, backoff = 0, 0, minBackoff
		switch m := msg.(type) {
		case *redis.Message:
			s.h.Message(ctx, m.Payload)
		case *redis.Subscription:
			// Subscribe consumed the first confirmation, so this is go-redis
			// resubscribing after a dropped connection.
			if m.Kind == "subscribe" {
				s.resubscribed()
			}
		}
	}
}

// replace opens a new subscription in place of a dead one. Its
// confirmation is consumed here, so it counts as a resubscription now.
func (s *Subscription) replace(ctx context.Context) bool {
	cctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	ps, err := s.confirm(cctx)
	if err != nil {
		return false
	}
	s.mu.Lock()
	if ctx.Err() != nil { // Close ran meanwhile
		s.mu.Unlock()
		_ = ps.Close()
		return false
	}
	s.ps = ps
	s.mu.Unlock()
	s.resubscribed()
	return true
}

func (s *Subscription) resubscribed() {
	s.opts.Logger.Info(s.opts.Name + " resubscribed")
	if s.h.Resubscribed != nil {
		s.h.Resubscribed()
	}
}
