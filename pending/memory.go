package pending

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hide "github.com/askops/askops/redact"
)

// MemoryStore is the embedded single-process Store, used when no Redis is
// configured. It keeps the Redis store's contract exactly (the same contract
// tests run against both).
//
// One mutex guards the map and the records, and is only ever held for a few
// map operations: a waiter never holds it while waiting. Each Ask has its own
// done channel, closed once by the one decision that wins (take-once), so any
// number of waiters wake and a decision made before Wait starts is seen.
type MemoryStore struct {
	opts Options

	waits atomic.Int64 // Waits in progress, for tests

	mu     sync.Mutex
	asks   map[string]*memoryAsk
	audit  []Event
	steps  map[string]*memoryStep              // follow-ups by "<id> <step>" (schedule.go)
	chain  chainer                             // the audit chain's head
	leases map[string]*memoryLease             // the Asks somebody holds or held lately (lease.go)
	wakes  map[*memoryAsk]map[*func()]struct{} // OnEnd's waiters (onend.go)
	closed chan struct{}
	once   sync.Once
}

type memoryAsk struct {
	ask    Ask
	done   chan struct{} // closed when ask leaves StatusPending
	expiry string        // the reason an expiry records, once a follow-up ran (schedule.go)
	tried  string        // what the follow-ups did, for expiry
	// unleased: Hold starts no lease (Request.Unleased); keep: how long
	// the record outlives its deadline (Options.retention).
	unleased bool
	keep     time.Duration
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore(opts Options) *MemoryStore {
	return &MemoryStore{
		opts:   opts.withDefaults(),
		asks:   make(map[string]*memoryAsk),
		closed: make(chan struct{}),
	}
}

// Create implements Store.
func (s *MemoryStore) Create(ctx context.Context, req Request, ttl time.Duration) (Ask, error) {
	if err := checkCreate(req, ttl); err != nil {
		return Ask{}, err
	}
	if err := ctx.Err(); err != nil {
		return Ask{}, &Error{Store: "pending", Code: CodeUnavailable, Op: "create", Msg: "context ended", Err: err}
	}
	a := newAsk(atRest(req), s.opts.now(), ttl) // as Redis keeps it: the stores return equal Asks
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.asks[a.ID]; taken {
		return Ask{}, &Error{Store: "pending", Code: CodeConflict, Op: "create", Msg: "ask id already in use"}
	}
	s.asks[a.ID] = &memoryAsk{ask: a, done: make(chan struct{}), unleased: req.Unleased, keep: s.opts.retention(req)}
	s.appendAudit(askedEvent(a))
	return a, nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, id string) (Ask, error) {
	if err := checkID("get", id); err != nil {
		return Ask{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if !ok {
		return Ask{}, notFound("get", id)
	}
	return m.ask, nil
}

// Decide implements Store.
func (s *MemoryStore) Decide(ctx context.Context, id string, outcome Outcome, by, reason string) (Ask, error) {
	if err := checkDecide(id, outcome); err != nil {
		return Ask{}, err
	}
	if humanDecision(outcome) {
		a, _, err := s.cast("decide", id, Ballot{Outcome: outcome, By: by, Reason: reason}, Binding{})
		return a, err
	}
	a, won, err := s.decide(id, outcome, by, hide.Secrets(reason))
	if err != nil {
		return Ask{}, err
	}
	if !won {
		return Ask{}, conflict("decide", a)
	}
	return a, nil
}

// decide is the take-once resolution: it reports whether this call ended the
// Ask with the outcome asked for. A human decision after the deadline ends
// the Ask as Expired instead and does not count as won.
func (s *MemoryStore) decide(id string, outcome Outcome, by, reason string) (Ask, bool, error) {
	now := s.opts.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if !ok {
		return Ask{}, false, notFound("decide", id)
	}
	if m.ask.Status != StatusPending {
		return m.ask, false, nil
	}
	if outcome == Expired && now.Before(m.ask.Deadline) {
		return Ask{}, false, early("decide", id, m.ask.Deadline.Sub(now))
	}
	won := true
	if humanDecision(outcome) && !now.Before(m.ask.Deadline) {
		outcome, by, reason, won = Expired, "", reasonLate, false
	} else if outcome == Expired && by == "" && m.expiry != "" {
		reason = m.expiry // what the follow-ups tried (schedule.go)
	}
	s.end(m, outcome, by, reason, now)
	return m.ask, won, nil
}

// end takes m out of pending: the one transition, its audit event, and
// the wake-up. The caller holds s.mu and has checked m is pending.
func (s *MemoryStore) end(m *memoryAsk, outcome Outcome, by, reason string, now time.Time) {
	m.ask.Status = Status(outcome)
	m.ask.DecidedBy = by
	m.ask.DecidedAt = now
	m.ask.DecisionReason = reason
	close(m.done)
	s.wakeEnded(m)
	s.appendAudit(decidedEvent(m.ask))
}

// Wait implements Store.
func (s *MemoryStore) Wait(ctx context.Context, id string) (Ask, error) {
	end := s.await(ctx, id)
	return end.ask, end.err
}

// WaitFor implements Store: the memory store's reads cannot fail, so it
// is Wait.
func (s *MemoryStore) WaitFor(ctx context.Context, a Ask) (Ask, error) {
	return s.Wait(ctx, a.ID)
}

// await blocks until the Ask ends. As in RedisStore.await, its frame holds
// only pointers, channels and times while it blocks, and Ask values are
// handled by helpers that return before the select: 10,000 waiting
// goroutines' stacks are most of the process's memory, and a frame full of
// Ask copies (this function's was 1.4 KB) grows each of them to 8 KB, which
// the runtime never shrinks while the goroutine is parked that deep.
func (s *MemoryStore) await(ctx context.Context, id string) *waitEnd {
	if err := checkID("wait", id); err != nil {
		return unavailableEnd(id, nil, err)
	}
	m, end := s.waitable(id)
	if end != nil {
		return end
	}
	s.waits.Add(1)
	defer s.waits.Add(-1)
	deadline := s.opts.After(s.deadline(m).Sub(s.opts.Now()))
	for {
		switch s.block(ctx.Done(), m.done, deadline) {
		case wokenRead:
			return s.current(id)
		case wokenDeadline:
			end := s.finish(ctx, id, Expired)
			if end.left > 0 { // the clock stepped back: as on Redis, wait on
				deadline = s.opts.After(end.left)
				continue
			}
			return end
		case wokenDone:
			return s.finish(ctx, id, Cancelled)
		default:
			return s.closedEnd(id)
		}
	}
}

// waitable returns the Ask's entry if it is pending, or else what Wait
// returns at once.
//
//go:noinline
func (s *MemoryStore) waitable(id string) (*memoryAsk, *waitEnd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	switch {
	case !ok:
		return nil, unavailableEnd(id, nil, notFound("wait", id))
	case m.ask.Status != StatusPending:
		return nil, &waitEnd{ask: m.ask}
	}
	return m, nil
}

func (s *MemoryStore) deadline(m *memoryAsk) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return m.ask.Deadline
}

// block is where a waiting goroutine spends its time (see await).
//
//go:noinline
func (s *MemoryStore) block(done, decided <-chan struct{}, deadline <-chan time.Time) woken {
	select {
	case <-decided:
		return wokenRead
	case <-deadline:
		return wokenDeadline
	case <-done:
		return wokenDone
	case <-s.closed:
		return wokenClosed
	}
}

// current returns the ended Ask as Wait does.
//
//go:noinline
func (s *MemoryStore) current(id string) *waitEnd {
	a, err := s.Get(context.Background(), id)
	if err != nil {
		return unavailableEnd(id, nil, err)
	}
	return &waitEnd{ask: a}
}

//go:noinline
func (s *MemoryStore) closedEnd(id string) *waitEnd {
	a, _ := s.Get(context.Background(), id)
	return unavailableEnd(id, &a, &Error{Store: "pending", Code: CodeUnavailable, Op: "wait", Msg: "store closed"})
}

// finish records the waiter's own ending (expired or cancelled) by the same
// take-once path as a click; if a decision got there first, it is returned.
//
//go:noinline
func (s *MemoryStore) finish(ctx context.Context, id string, outcome Outcome) *waitEnd {
	reason := reasonDeadline
	if outcome == Cancelled {
		reason = CancelReason(ctx)
	}
	a, _, err := s.decide(id, outcome, "", reason)
	if left, ok := earlyLeft(err); ok {
		return &waitEnd{left: max(left, time.Millisecond)}
	}
	if err != nil {
		return unavailableEnd(id, nil, err)
	}
	return &waitEnd{ask: a}
}

// SetMessage implements Store.
func (s *MemoryStore) SetMessage(ctx context.Context, id, channel, ts string) error {
	if err := checkID("set_message", id); err != nil {
		return err
	}
	return s.withAsk("set_message", id, func(m *memoryAsk) error {
		m.ask.Channel, m.ask.MessageTS = channel, ts
		return nil
	})
}

// withAsk runs f on the Ask id under the store's lock, or returns op's
// not-found error when the store holds no such Ask: the shape of every
// memory-store write that changes one Ask in place and answers only an
// error (SetMessage, AddCopy, ConfirmDirect).
func (s *MemoryStore) withAsk(op, id string, f func(m *memoryAsk) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if !ok {
		return notFound(op, id)
	}
	return f(m)
}

// ListPending implements Store.
func (s *MemoryStore) ListPending(ctx context.Context, f Filter) ([]Ask, error) {
	s.mu.Lock()
	var out []Ask
	for _, m := range s.asks {
		if m.ask.Status == StatusPending && f.matches(m.ask) {
			out = append(out, m.ask)
		}
	}
	s.mu.Unlock()
	sortOldestFirst(out)
	return out, nil
}

// Sweep implements Store. It also drops records whose retention has passed.
func (s *MemoryStore) Sweep(ctx context.Context, now time.Time) ([]Ask, error) {
	s.mu.Lock()
	var due []string
	for id, m := range s.asks {
		switch {
		case m.ask.Status == StatusPending && !m.ask.Deadline.After(now):
			due = append(due, id)
		case m.ask.Status != StatusPending && now.After(m.ask.Deadline.Add(m.keep)):
			delete(s.asks, id)
		}
	}
	s.mu.Unlock()
	var out []Ask
	for _, id := range due {
		a, won, err := s.decide(id, Expired, "", reasonDeadline)
		if err == nil && won {
			out = append(out, a)
		}
	}
	sortOldestFirst(out)
	return out, nil
}

// Audit implements Store.
func (s *MemoryStore) Audit(ctx context.Context, limit int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.audit)
	if limit > 0 && limit < n {
		n = limit
	}
	return slices.Clone(s.audit[:n]), nil
}

// Close implements Store: waiters still blocked return Unavailable.
func (s *MemoryStore) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.wakeAll()
	})
	return nil
}

// appendAudit adds e, dropping the oldest events beyond AuditMaxLen. The
// caller holds s.mu.
func (s *MemoryStore) appendAudit(e Event) Event {
	e = s.chain.link(e, s.opts.AuditMaxLen)
	s.audit = append(s.audit, e)
	if over := int64(len(s.audit)) - s.opts.AuditMaxLen; over > 0 {
		s.audit = slices.Delete(s.audit, 0, int(over))
	}
	return e
}

func (f Filter) matches(a Ask) bool {
	return (f.SessionID == "" || f.SessionID == a.SessionID) && (f.RunID == "" || f.RunID == a.RunID)
}

func sortOldestFirst(asks []Ask) {
	slices.SortFunc(asks, func(a, b Ask) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

func askedEvent(a Ask) Event {
	return Event{Kind: EventAsked, AskID: a.ID, RunID: a.RunID, Tool: a.Tool, By: a.StartedBy, Reason: a.Reason,
		Detail: cutDetail(a.Summary, maxDetail), At: a.CreatedAt}
}

func decidedEvent(a Ask) Event {
	return Event{Kind: EventDecided, AskID: a.ID, RunID: a.RunID, Tool: a.Tool, Outcome: Outcome(a.Status),
		By: a.DecidedBy, Reason: a.DecisionReason, At: a.DecidedAt}
}

// waiting reports how many Waits are blocked (tests poll it instead of sleeping).
func (s *MemoryStore) waiting() int { return int(s.waits.Load()) }
