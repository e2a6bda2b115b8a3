package aap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/askops/askops/internal/recordid"
)

// Notifications (async mode). When a request of an instance with a
// verified receiver becomes terminal, one RequestResolvedEvent is
// recorded (ntf:<event id>, its body fixed once) and queued (the queue:
// a sorted set by next attempt). Its id is derived from the request's,
// so recording it again — a second reader, a replica, the scan after a
// restart — records nothing new. The decision itself is recorded by
// askops' Ask store first; the scan (Run) finds every request of a
// delivering instance that ended and records its event, so a process
// that dies between the two loses no notification: the pair is durable
// together, though not written in one step.
//
// Run sends what is due, each event by one replica at a time (a lease
// claimed for longer than an attempt lasts), to the instance's current
// receiver and secret (a replacement takes over queued events, ids and
// bodies unchanged), with exponential back-off and jitter, Retry-After
// on 429 and 503, until acknowledged or DeliveryWindow after decided_at.
// Removing delivery or deleting the instance ends its events' delivery.

// notification is a recorded event and its delivery state.
type notification struct {
	ID        string          `json:"id"`
	Instance  string          `json:"instance"`
	Request   string          `json:"request"`
	Body      json.RawMessage `json:"body"` // the exact bytes every attempt sends
	DecidedAt time.Time       `json:"decided_at"`
	Attempts  int             `json:"attempts"`
	Acked     bool            `json:"acked,omitempty"`
	Ended     bool            `json:"ended,omitempty"`
}

const (
	queueKey      = "queue"
	deliveringKey = "delivering" // the instances with a receiver (a set)
)

func ntfKey(id string) string   { return "ntf:" + id }
func leaseKey(id string) string { return "lease:" + id }

// eventID is request id's event id: a UUID derived from it, so every
// replica records the same event once.
func eventID(request string) string {
	d := sha256.Sum256([]byte("askops aap request.resolved\x00" + request))
	d[6] = d[6]&0x0f | 0x40
	d[8] = d[8]&0x3f | 0x80
	h := hex.EncodeToString(d[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// notificationLife is how long an event and its request's records are
// kept: the retry window, the grace period after it, and a margin.
const notificationLife = DeliveryWindow + deliveryGrace + time.Hour

// notify records and queues rq's event for decision d, if its instance
// has a receiver that was configured before the decision.
func (s *Server) notify(ctx context.Context, rq request, d decision) error {
	inst, ok, err := s.loadInstance(ctx, rq.Instance)
	if err != nil || !ok || !inst.DeletedAt.IsZero() || inst.Delivery == nil || d.DecidedAt.Before(inst.Delivery.Since) {
		return err
	}
	id := eventID(rq.ID)
	body := jsonBytes(map[string]string{"id": id, "type": "request.resolved", "instance_id": rq.Instance, "request_id": rq.ID, "created_at": stamp(d.DecidedAt)})
	n := notification{ID: id, Instance: rq.Instance, Request: rq.ID, Body: body, DecidedAt: d.DecidedAt}
	claimed, _, err := s.cfg.Store.Claim(ctx, ntfKey(id), jsonBytes(n), notificationLife)
	if err != nil || !claimed {
		return err
	}
	return s.cfg.Store.Schedule(ctx, queueKey, id, s.cfg.Now())
}

// Run is the delivery loop until ctx ends (it returns nil then). It
// records the events of the requests the Ask store says have ended
// (watchEnd) as it hears of them, reads every open request at start and
// every ScanEvery for those it did not hear of (scan), and sends the
// events that are due every DeliveryEvery and after each recording.
func (s *Server) Run(ctx context.Context) error {
	deliver := time.NewTicker(s.cfg.DeliveryEvery)
	defer deliver.Stop()
	rescan := time.NewTicker(s.cfg.ScanEvery)
	defer rescan.Stop()
	scan := func() {
		if err := s.scan(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("aap: could not look for ended requests; trying again", "err", err)
		}
	}
	scan() // what ended while no serve was watching
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.endedSignal:
			s.recordEnded(ctx)
		case <-rescan.C:
			scan()
		case <-deliver.C:
			s.watchAgain(ctx)
		}
		if err := s.deliverDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("aap: could not deliver notifications; trying again", "err", err)
		}
	}
}

// watchEnd asks the Ask store to say when request id may have ended,
// decided on whichever replica: Run then records its event at once
// instead of at the next scan. It holds a map entry in the store, no
// goroutine.
func (s *Server) watchEnd(id string) {
	s.cfg.Asks.OnEnd(id, func() {
		s.endedMu.Lock()
		s.ended = append(s.ended, id)
		s.endedMu.Unlock()
		select {
		case s.endedSignal <- struct{}{}:
		default: // Run is already woken
		}
	})
}

// recordEnded records the events of the requests watchEnd heard may have
// ended (reading one settles its decision and records its event, as a
// long poll's read would). One that had not ended was woken by a failed
// read of the store, which ended its watch: it is watched again at the
// next delivery tick (watchAgain), so its decision is still heard at
// once rather than at the next scan. A failure leaves the request to the
// scan.
func (s *Server) recordEnded(ctx context.Context) {
	for _, id := range s.take(&s.ended) {
		if ended, err := s.recordEndedRequest(ctx, id); err == nil && !ended {
			s.endedMu.Lock()
			s.rewatch = append(s.rewatch, id)
			s.endedMu.Unlock()
		}
	}
}

// watchAgain watches the requests recordEnded found still pending after a
// wake, then reads each once more: a decision made between that wake and
// this watch announced nothing the new watch heard. It runs once a
// delivery tick, so a store that wakes every watch at once (closed) costs
// a read a tick, not a spin.
func (s *Server) watchAgain(ctx context.Context) {
	for _, id := range s.take(&s.rewatch) {
		s.watchEnd(id)
		_, _ = s.recordEndedRequest(ctx, id) // still pending: the watch stands; a failure: logged, the scan's
	}
}

// take empties ids (s.ended or s.rewatch) and returns what it held.
func (s *Server) take(ids *[]string) []string {
	s.endedMu.Lock()
	defer s.endedMu.Unlock()
	out := *ids
	*ids = nil
	return out
}

// recordEndedRequest is recordIfEnded for the request with id: ended
// reports whether it has ended (or is gone), so nothing more is owed.
func (s *Server) recordEndedRequest(ctx context.Context, id string) (ended bool, err error) {
	rq, ok, err := s.loadRequest(ctx, id)
	if err == nil && ok {
		ended, err = s.recordIfEnded(ctx, rq)
	} else if err == nil {
		ended = true // gone: nothing to record
	}
	if err != nil && ctx.Err() == nil {
		s.log.Warn("aap: could not record an ended request's event; the scan will", "ask", id, "err", err)
	}
	return ended, err
}

// scan records the event of every request of a delivering instance that
// has ended (and settles its decision, as a read would).
func (s *Server) scan(ctx context.Context) error {
	insts, err := s.cfg.Store.Members(ctx, deliveringKey)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		ids, err := s.cfg.Store.Members(ctx, openKey(inst))
		if err != nil {
			return err
		}
		for _, id := range ids {
			rq, ok, err := s.loadRequest(ctx, id)
			if err != nil {
				return err
			}
			if !ok {
				continue // still being created, or gone
			}
			if _, err := s.recordIfEnded(ctx, rq); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordIfEnded records rq's event, if rq has ended (ended), and takes it
// out of its instance's open set.
func (s *Server) recordIfEnded(ctx context.Context, rq request) (ended bool, err error) {
	d, err := s.current(ctx, rq, 0)
	if err != nil || d == nil {
		return false, err // nil: still pending
	}
	// Settled by a read that stopped before its event was recorded
	// (current records it when it settles): record it.
	if err := s.notify(ctx, rq, *d); err != nil {
		return true, err
	}
	return true, s.cfg.Store.RemoveMember(ctx, openKey(rq.Instance), rq.ID)
}

// deliverDue sends up to deliveryBatch due events, one at a time.
func (s *Server) deliverDue(ctx context.Context) error {
	ids, err := s.cfg.Store.Due(ctx, queueKey, s.cfg.Now(), deliveryBatch)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return nil
		}
		if err := s.attempt(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// attempt makes one delivery attempt of event id, if this replica holds
// its lease, and schedules the next or ends its delivery.
func (s *Server) attempt(ctx context.Context, id string) error {
	token := recordid.New()
	claimed, _, err := s.cfg.Store.Claim(ctx, leaseKey(id), []byte(token), AttemptTimeout+5*time.Second)
	if err != nil || !claimed {
		return err // another replica has it in flight
	}
	defer s.cfg.Store.Drop(context.WithoutCancel(ctx), leaseKey(id))
	b, ok, err := s.cfg.Store.Get(ctx, ntfKey(id))
	if err != nil {
		return err
	}
	var n notification
	if !ok || json.Unmarshal(b, &n) != nil || n.Acked || n.Ended {
		return s.cfg.Store.Unschedule(ctx, queueKey, id)
	}
	until := n.DecidedAt.Add(DeliveryWindow)
	inst, ok, err := s.loadInstance(ctx, n.Instance)
	if err != nil {
		return err
	}
	if !ok || !inst.DeletedAt.IsZero() || inst.Delivery == nil || !s.cfg.Now().Before(until) {
		return s.end(ctx, n, false) // delivery removed, instance deleted, or the window is over
	}
	if ok, err := s.hostLimit.allow(ctx, destination(inst.Delivery.URL), s.cfg.Now()); err != nil {
		return err
	} else if !ok {
		// The host has had its share this minute: the attempt waits for
		// the next minute and is not counted as one that failed.
		next := s.cfg.Now().Truncate(time.Minute).Add(time.Minute)
		return s.cfg.Store.Schedule(ctx, queueKey, n.ID, next)
	}
	// The protocol's retries end at the window, and so does the attempt
	// in flight: one begun in its last AttemptTimeout is cut at its end.
	actx, cancel := context.WithTimeout(ctx, until.Sub(s.cfg.Now()))
	status, wait, _, postErr := s.post(actx, *inst.Delivery, n.ID, n.Body)
	cancel()
	n.Attempts++
	if postErr == nil && status >= 200 && status < 300 {
		s.log.Info("aap: notification delivered", "ask", n.Request, "event", n.ID, "attempts", n.Attempts)
		return s.end(ctx, n, true)
	}
	next := backoff(n.Attempts)
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		next = max(next, wait)
	}
	at := s.cfg.Now().Add(next)
	s.log.Info("aap: notification not acknowledged; retrying", "ask", n.Request, "event", n.ID, "status", status, "err", postErr, "next", at)
	if !at.Before(until) {
		return s.end(ctx, n, false)
	}
	if err := s.cfg.Store.Put(ctx, ntfKey(n.ID), jsonBytes(n), notificationLife); err != nil {
		return err
	}
	return s.cfg.Store.Schedule(ctx, queueKey, n.ID, at)
}

// end ends n's delivery (acknowledged or given up) and keeps its record
// for the grace period.
func (s *Server) end(ctx context.Context, n notification, acked bool) error {
	n.Acked, n.Ended = acked, true
	if err := s.cfg.Store.Put(ctx, ntfKey(n.ID), jsonBytes(n), notificationLife); err != nil {
		return err
	}
	return s.cfg.Store.Unschedule(ctx, queueKey, n.ID)
}

// backoff is the wait after the attempts-th failed attempt: 5 s doubling
// to an hour, with ±25 % jitter.
func backoff(attempts int) time.Duration {
	d := firstRetry
	for range attempts - 1 {
		d *= 2
		if d >= maxRetryInterval {
			d = maxRetryInterval
			break
		}
	}
	return d*3/4 + rand.N(d/2+1)
}
