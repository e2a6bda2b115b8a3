package gateway

import (
	"context"
	"encoding/json"
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
func (api *API) holdHook(w http.ResponseWriter, r *http.Request, event string, c Call) bool {
	svc := api.svc
	if svc.cfg.Held == nil {
		return false
	}
	select { // a turn at the intake (intakeLimit)
	case svc.intake <- struct{}{}:
	case <-r.Context().Done():
		writeJSON(w, http.StatusOK, ClaudeAnswer(event, refused(pending.ErrAskerGone.Error()), "", nil))
		return true
	case <-svc.background.Done():
		writeJSON(w, http.StatusOK, ClaudeAnswer(event, refused(errShutdown.Error()), "", nil))
		return true
	}
	inIntake := true
	leaveIntake := func() {
		if inIntake {
			inIntake = false
			<-svc.intake
		}
	}
	defer leaveIntake()
	req, final, decided := svc.judge(r.Context(), c)
	if decided {
		writeJSON(w, http.StatusOK, ClaudeAnswer(event, final, c.Tool, c.Input))
		return true
	}
	// Only what the answer needs is kept while the hook waits: not the
	// whole event (its transcript path, ids), and one context below, not
	// within's two and their wakes, since the held connection's gone
	// callback cancels it directly.
	tool, input := c.Tool, keepInput(c.Tool, c.Input, req.Call.Command)
	answer := func(w http.ResponseWriter, a pending.Ask) {
		writeJSON(w, http.StatusOK, ClaudeAnswer(event, a, tool, input.rebuild()))
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	conn, ok := svc.cfg.Held.Hold(w, r, func() { cancel(pending.ErrAskerGone) })
	if !ok {
		cancel(context.Canceled)
		leaveIntake() // this one waits for its human on its handler
		ctx, stop := svc.within(r.Context())
		defer stop()
		answer(w, svc.settle(ctx, req, c.Timeout))
		return true
	}
	stopServe := context.AfterFunc(svc.background, func() { cancel(errShutdown) })
	end := func(a pending.Ask) {
		stopServe()
		cancel(context.Canceled)
		conn.Answer(func(w http.ResponseWriter) { answer(w, a) })
	}
	if a, decided := svc.launch(ctx, ctx, req, c.Timeout, end); decided {
		end(a)
	}
	return true
}

// intakeLimit bounds the held hooks being judged and recorded at once.
// The rest of a burst waits its turn on a shallow stack: 10,000 hooks
// arriving together each ran the policy's parse and waited for one of the
// store's few connections deep inside it, and the serve took 940 MB RSS
// that it gave back only slowly once they were held. A turn is a
// millisecond or so, the store's round trip.
const intakeLimit = 64

// heldInput is what a held hook keeps of its tool input for the answer:
// ClaudeAnswer hands a Bash call's input back (JudgedInput), any other
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
// order): what JudgedInput reads.
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
// held; release ends the poll's hold on the Ask's lease once answered.
// false: nothing was written, and the poll waits on its handler.
func (api *API) holdPoll(w http.ResponseWriter, r *http.Request, id string, wait time.Duration, release func()) bool {
	svc := api.svc
	e, ok := svc.cfg.Asks.(pending.OnEnder)
	if !ok || svc.cfg.Held == nil {
		return false
	}
	p := &heldPoll{api: api, id: id, path: r.URL.Path, release: release, values: context.WithoutCancel(r.Context())}
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
	api     *API
	id      string
	path    string // the request's, for the log of a failed answer
	release func()
	values  context.Context // the request's values, without its end

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
	defer p.release()
	if p.gone {
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
