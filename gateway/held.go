package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/pending"
)

// The two front doors where an agent's request stays open until a human
// decides, Claude Code's http hook and a long poll (`bot hook`'s, any API
// client's), wait without a goroutine when the Service has a running
// heldhttp.Held: the handler hands the connection over and returns, and
// the answer is written on it when the Ask ends. Their rules are the
// blocking paths' (claudeHook's Settle, get's watch): the asker leaving
// ends a hook's Ask cancelled (pending.ErrAskerGone) and only ends a long
// poll; the serve stopping answers both at once, with the Ask ended
// cancelled unless a decision got there first.

// holdHook answers Claude Code's hook for c, already authenticated and
// parsed, when the policy asks a human and the connection can be held;
// false: nothing was written, and the hook waits on its handler.
//
// Judging and recording take a turn at the intake (intakeLimit). A hook
// that finds a turn free is judged on its handler, and held only if a
// human must decide; one that finds the intake full (a burst) is held at
// once and waits for its turn as an entry in the intake's queue, so a
// burst of 10,000 is 10,000 queued calls, not 10,000 handlers with their
// goroutines and buffers (about 35 KB each: 374 MB at the peak).
func (api *API) holdHook(w http.ResponseWriter, r *http.Request, event string, c Call) bool {
	svc := api.svc
	if svc.cfg.Held == nil {
		return false
	}
	select {
	case svc.intake <- struct{}{}:
	default:
		if svc.queueHook(w, r, event, c) {
			return true
		}
		arrived := time.Now()
		select { // it cannot be held: it waits for its turn here
		case svc.intake <- struct{}{}:
			if !svc.sinceArrival(&c, arrived) {
				svc.leaveIntake()
				writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused(errIntakeTooLong.Error()), "", nil))
				return true
			}
		case <-r.Context().Done():
			writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused(pending.ErrAskerGone.Error()), "", nil))
			return true
		case <-svc.background.Done():
			writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused(errShutdown.Error()), "", nil))
			return true
		}
	}
	inIntake := true
	leaveIntake := func() {
		if inIntake {
			inIntake = false
			svc.leaveIntake()
		}
	}
	defer leaveIntake()
	req, final, decided := svc.judge(r.Context(), c)
	if decided {
		writeJSON(w, http.StatusOK, svc.claudeAnswer(event, final, c.Tool, c.Input))
		return true
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	conn, ok := svc.cfg.Held.Hold(w, r, func() { cancel(pending.ErrAskerGone) })
	if !ok {
		cancel(context.Canceled)
		leaveIntake() // this one waits for its human on its handler
		ctx, stop := svc.within(r.Context())
		defer stop()
		heldAnswer(event, c, req)(w, svc.settle(ctx, req, c.Timeout))
		return true
	}
	svc.waitHeld(ctx, cancel, conn, event, c, req)
	return true
}

// heldAnswer writes the answer to c's hook once its Ask (of req) ended.
// Only what the answer needs is kept while the hook waits: not the whole
// event (its transcript path, ids), and the command once.
func heldAnswer(event string, c Call, req pending.Request) func(http.ResponseWriter, pending.Ask) {
	tool, input := c.Tool, keepInput(c.Tool, c.Input, req.Call.Command)
	return func(w http.ResponseWriter, a pending.Ask) {
		writeJSON(w, http.StatusOK, claudeAnswerOf(event, a, tool, input.rebuild()))
	}
}

// waitHeld starts the round trip of req, judged for c's held hook on
// conn, and answers the hook when its Ask ends. One context, not within's
// two and their wakes: the held connection's gone callback cancels it
// directly.
func (svc *Service) waitHeld(ctx context.Context, cancel context.CancelCauseFunc, conn *heldhttp.Conn, event string, c Call, req pending.Request) {
	answer := heldAnswer(event, c, req)
	stopServe := context.AfterFunc(svc.background, func() { cancel(errShutdown) })
	end := func(a pending.Ask) {
		stopServe()
		cancel(context.Canceled)
		conn.Answer(func(w http.ResponseWriter) { answer(w, a) })
	}
	if a, decided := svc.launch(ctx, ctx, req, c.Timeout, end); decided {
		end(a)
	}
}

// queuedHook is a held hook waiting for a turn at the intake.
type queuedHook struct {
	svc       *Service
	ctx       context.Context
	cancel    context.CancelCauseFunc
	conn      *heldhttp.Conn
	event     string
	c         Call
	queued    time.Time
	stopServe func() bool
}

// queueHook holds r's connection and queues c's hook for the intake's
// next free turn; false: it cannot be held, and nothing was written.
func (svc *Service) queueHook(w http.ResponseWriter, r *http.Request, event string, c Call) bool {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	conn, ok := svc.cfg.Held.Hold(w, r, func() { cancel(pending.ErrAskerGone) })
	if !ok {
		cancel(context.Canceled)
		return false
	}
	q := &queuedHook{svc: svc, ctx: ctx, cancel: cancel, conn: conn, event: event, c: c, queued: time.Now()}
	svc.running.Add(1) // Close waits for its answer
	// The serve stopping answers a queued hook at once: its connection
	// closing unanswered would let Claude Code go ahead.
	q.stopServe = context.AfterFunc(svc.background, func() { q.refuse(errShutdown) })
	svc.queueMu.Lock()
	svc.queued = append(svc.queued, q)
	svc.queueMu.Unlock()
	svc.admitQueued() // a turn may have freed meanwhile
	return true
}

// sinceArrival takes the time c's hook waited for its turn at the intake
// off its Ask's life: the hook's own timeout runs from its request, so its
// Ask's deadline does too. (The agent's hook timeout is askops' deadline
// plus a margin; a long queue must not eat into it.) false: less than a
// second would be left.
func (svc *Service) sinceArrival(c *Call, arrived time.Time) bool {
	ttl := c.Timeout
	if ttl <= 0 {
		ttl = svc.cfg.MaxTimeout
	}
	c.Timeout = ttl - time.Since(arrived)
	return c.Timeout >= time.Second
}

// errIntakeTooLong is why a hook that waited in the intake's queue until
// its deadline was refused.
var errIntakeTooLong = errors.New("askops was too busy to judge this call before its deadline")

// refuse answers the queued hook with a denial for cause (a second answer
// is a no-op).
func (q *queuedHook) refuse(cause error) {
	q.cancel(cause)
	q.conn.Answer(func(w http.ResponseWriter) {
		writeJSON(w, http.StatusOK, claudeAnswerOf(q.event, refused(cause.Error()), "", nil))
	})
}

// run judges the queued hook in the turn it was given, and gives the turn
// back.
func (q *queuedHook) run() {
	svc := q.svc
	defer svc.running.Done()
	defer svc.leaveIntake()
	if !q.stopServe() {
		return // the serve stopped: already answered
	}
	if cause := context.Cause(q.ctx); cause != nil {
		q.refuse(cause) // the asker left: nobody reads it
		return
	}
	if !svc.sinceArrival(&q.c, q.queued) {
		q.refuse(errIntakeTooLong)
		return
	}
	req, final, decided := svc.judge(q.ctx, q.c)
	if decided {
		q.cancel(context.Canceled)
		q.conn.Answer(func(w http.ResponseWriter) {
			writeJSON(w, http.StatusOK, claudeAnswerOf(q.event, final, q.c.Tool, q.c.Input))
		})
		return
	}
	svc.waitHeld(q.ctx, q.cancel, q.conn, q.event, q.c, req)
}

// leaveIntake gives back a turn at the intake, and hands free turns to
// the queued hooks.
func (svc *Service) leaveIntake() {
	<-svc.intake
	svc.admitQueued()
}

// admitQueued starts the queued hooks while turns are free, each on a
// goroutine of its own for its turn. Every turn given back and every hook
// queued calls it, so a hook queued just as the last turn frees is not
// left waiting.
func (svc *Service) admitQueued() {
	for {
		svc.queueMu.Lock()
		if len(svc.queued) == 0 {
			svc.queueMu.Unlock()
			return
		}
		select {
		case svc.intake <- struct{}{}:
		default:
			svc.queueMu.Unlock()
			return
		}
		q := svc.queued[0]
		svc.queued[0] = nil
		svc.queued = svc.queued[1:]
		svc.queueMu.Unlock()
		go q.run()
	}
}

// intakeLimit bounds the held hooks being judged and recorded at once.
// The rest of a burst waits its turn held, in the intake's queue (above):
// 10,000 hooks arriving together each ran the policy's parse and waited
// for one of the store's few connections deep inside it, and the serve
// took 940 MB RSS that it gave back only slowly once they were held. A
// turn is a millisecond or so, the store's round trip.
const intakeLimit = 64

// heldInput is what a held hook keeps of its tool input for the answer:
// ClaudeAnswer hands a Bash call's input back (toolcall.JudgedInput), any other
// tool's not at all. A Bash input is kept without its command when the
// command is the request's own string, which the waiting round trip holds
// anyway: the command is most of a waiting hook's bytes, and was held
// twice.
type heldInput struct {
	whole   json.RawMessage // the input as it came, when it is not split
	rest    json.RawMessage // else the input's other fields
	command string          // and its command
}

func keepInput(tool string, input json.RawMessage, command string) heldInput {
	if tool != "Bash" {
		return heldInput{}
	}
	var in map[string]json.RawMessage
	var cmd string
	if command == "" || json.Unmarshal(input, &in) != nil || in == nil ||
		json.Unmarshal(in["command"], &cmd) != nil || cmd != command {
		return heldInput{whole: input}
	}
	delete(in, "command")
	rest, err := json.Marshal(in)
	if err != nil {
		return heldInput{whole: input}
	}
	return heldInput{rest: rest, command: command}
}

// rebuild is the input again, the same object (its fields in JSON's key
// order): what toolcall.JudgedInput reads.
func (h heldInput) rebuild() json.RawMessage {
	if h.rest == nil {
		return h.whole
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(h.rest, &in) != nil {
		return nil // cannot happen: rest is keepInput's own JSON
	}
	in["command"], _ = json.Marshal(h.command)
	out, err := json.Marshal(in)
	if err != nil {
		return nil
	}
	return out
}

// holdPoll answers the long poll GET /v1/asks/{id}?wait= from the Ask's
// end, wait's passing or the serve stopping, when the connection can be
// held; by.release ends the poll's hold on the Ask's lease once answered,
// and the asker's poll closed before its answer ends the Ask (askerLeft).
// false: nothing was written, and the poll waits on its handler.
func (api *API) holdPoll(w http.ResponseWriter, r *http.Request, id string, wait time.Duration, by heldBy) bool {
	svc := api.svc
	e, ok := svc.cfg.Asks.(pending.OnEnder)
	if !ok || svc.cfg.Held == nil {
		return false
	}
	p := &heldPoll{api: api, id: id, path: r.URL.Path, by: by, values: context.WithoutCancel(r.Context())}
	p.mu.Lock()
	defer p.mu.Unlock()
	conn, ok := svc.cfg.Held.Hold(w, r, p.left)
	if !ok {
		return false
	}
	p.conn = conn
	svc.running.Add(1) // Close waits for the answer
	p.stopEnd = e.OnEnd(id, p.wake)
	p.stopTimer = time.AfterFunc(wait, p.wake).Stop
	p.stopServe = context.AfterFunc(svc.background, p.wake)
	return true
}

// heldPoll is one long poll waiting without a goroutine.
type heldPoll struct {
	api    *API
	id     string
	path   string // the request's, for the log of a failed answer
	by     heldBy
	values context.Context // the request's values, without its end

	once sync.Once
	gone bool // the asker left: nobody to answer

	mu        sync.Mutex // held while holdPoll registers the wakes below
	conn      *heldhttp.Conn
	stopEnd   func()
	stopTimer func() bool
	stopServe func() bool
}

// left is the asker's connection closing.
func (p *heldPoll) left() {
	p.once.Do(func() {
		p.gone = true
		go p.answer()
	})
}

// wake is called by the store, the timer or the serve stopping (more than
// once, maybe, and maybe while holdPoll still registers): it must not
// block.
func (p *heldPoll) wake() {
	p.once.Do(func() { go p.answer() })
}

func (p *heldPoll) answer() {
	p.mu.Lock()
	p.stopEnd()
	p.stopTimer()
	p.stopServe()
	p.mu.Unlock()
	svc := p.api.svc
	defer svc.running.Done()
	defer p.by.release()
	if p.gone {
		if p.by.asker != "" {
			p.api.askerLeft(p.values, p.id, p.by.asker)
		}
		return
	}
	ctx, cancel := context.WithTimeout(p.values, answerTimeout)
	defer cancel()
	a, err := svc.cfg.Asks.Get(ctx, p.id)
	if _, done := a.Outcome(); err == nil && !done && svc.stopping() {
		a, err = svc.endAtShutdown(ctx, p.id)
	}
	p.conn.Answer(func(w http.ResponseWriter) {
		if err != nil {
			p.api.writeErr(ctx, w, p.path, err)
			return
		}
		writeJSON(w, http.StatusOK, p.api.show(ctx, a))
	})
}

// answerTimeout bounds reading the Ask and writing a held long poll's
// answer once it is due.
const answerTimeout = 10 * time.Second
