package pending

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/askops/askops/internal/tick"
)

// Catching up on missed announcements.
//
// With replicas to wait for, a decision is announced apart from the
// script that makes it (see decide), and pub/sub is at-most-once. The
// listener re-reads every local waiter after a resubscription, but an
// announcement can also go missing while the subscription stands:
// published on a master the subscription has not moved to yet (a failover
// in progress), never published because the decider was killed before its
// decision became durable (confirmLater, which would announce it, died
// with it), or refused by Redis. So, while Asks wait in this process, its
// store also reads the audit trail's events from where it last looked,
// every catchUpEvery, and queues a read of each Ask that was decided while
// this process waits on it; the read confirms the decision on the
// replicas as every read does. The decided event is written by the
// decision's own script, so it is exactly as durable as the decision: a
// decision a failover takes back takes its event with it.
//
// It costs one XRANGE per catchUpEvery per process while Asks wait (none
// otherwise), and a read only for an Ask whose waiter missed its
// announcement: an announced one has ended and is no longer waited on.

// catchUpEvery is how often the audit trail is read for decisions whose
// announcement a waiter here missed: the bound on how late such a waiter
// wakes, besides the read itself.
const catchUpEvery = 250 * time.Millisecond

// catchUpBack is how far back the trail is read when the reading starts
// (an Ask began to be waited on) and after a failover or a
// resubscription: the new master's entries may carry ids older than the
// last one read from the old master (another machine's clock).
const catchUpBack = 30 * time.Second

// catchUpPage bounds one XRANGE; catchUpPages the XRANGEs of one look.
const (
	catchUpPage  = 500
	catchUpPages = 20
)

// catchUp reads the audit trail for missed decisions until ctx ends.
func (s *RedisStore) catchUp(ctx context.Context) {
	defer close(s.catching)
	from := "" // the id of the last event read; "": start again
	tick.Every(ctx, catchUpEvery, func() {
		if !s.replicas.on() || s.waiters.count() == 0 {
			// Every announcement is in its decision's script, or nobody
			// waits here: a waiter registered later reads its record first.
			from = ""
			return
		}
		if s.catchBack.Swap(false) && from != "" {
			from = eventIDBefore(from, catchUpBack)
		}
		lctx, cancel := context.WithTimeout(ctx, 4*catchUpEvery)
		from = s.catchUpFrom(lctx, from)
		cancel()
	})
}

// catchUpFrom queues a read of every Ask waited on here that the trail
// says was decided after the event from ("": the last catchUpBack), and
// returns the last event read.
func (s *RedisStore) catchUpFrom(ctx context.Context, from string) string {
	if from == "" {
		last, err := s.client.XRevRangeN(ctx, s.keys.audit, "+", "-", 1).Result()
		if err != nil {
			return ""
		}
		if len(last) == 0 {
			return "0-0"
		}
		from = eventIDBefore(last[0].ID, catchUpBack)
	}
	for range catchUpPages {
		msgs, err := s.client.XRangeN(ctx, s.keys.audit, "("+from, "+", catchUpPage).Result()
		if err != nil {
			return from
		}
		for _, m := range msgs {
			from = m.ID
			if kind, _ := m.Values["kind"].(string); kind != string(EventDecided) {
				continue
			}
			id, _ := m.Values["ask_id"].(string)
			s.waiters.reread(id) // only if waited on here and not yet ended

		}
		if len(msgs) < catchUpPage {
			break
		}
	}
	return from
}

// eventIDBefore is the stream id d before id (a stream id is the
// milliseconds of the master's clock, a dash and a sequence number).
func eventIDBefore(id string, d time.Duration) string {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return "0-0"
	}
	return strconv.FormatInt(max(n-d.Milliseconds(), 0), 10) + "-0"
}
