package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Grace is how long past its timeout a command hook (`bot hook`) may
// take to answer, counted from its start, whatever fails under it: a
// frozen serve, a network that drops packets, Redis stopped, a store that
// will not open. The agent lets a call through (or to its own approval)
// when its hook outlives the agent's timeout, so the hook's own bound is
// what keeps every failure a deny.
const Grace = 2 * time.Second

// The hook's bound, Grace after its timeout, is spent so (Run):
const (
	// hookSettleEnd: the Settler's context ends this long before the
	// bound, so it can still end its Ask (a DELETE, a cancel) in time;
	// Client.Settle keeps cancelTimeout of it for that.
	hookSettleEnd = 700 * time.Millisecond
	// hookAnswerBy: whatever the Settler does, the answer is written this
	// long before the bound.
	hookAnswerBy = 500 * time.Millisecond
	// hookExitBy: closing what Open opened is waited for until this long
	// before the bound, then the hook returns (and its process exits, so
	// the agent, which reads the answer to its end, has it).
	hookExitBy = 400 * time.Millisecond
)

// Run is one command hook: a Claude Code or Codex hook event read from
// In, its answer written to Out, within Timeout plus Grace of Start
// whatever happens. Every failure is a deny with exit 0, except input it
// cannot read (exit 2, which blocks the call too).
type Run struct {
	Agent string // AgentClaude or AgentCodex
	By    string // who asks
	// Workspace is the session's root as the agent's process gives it
	// (Call.Workspace): "" when it gives none.
	Workspace string
	In        io.Reader
	Out       io.Writer
	Err       io.Writer
	// Start is when the hook started, and Timeout how long a human has
	// from then: the call's Ask ends by Start+Timeout, and the answer is
	// written by Start+Timeout+Grace. Timeout 0: not known here (a
	// serve's approvals.timeout): the Settler bounds the wait by the Ask's
	// deadline, and the hook has no bound of its own.
	Start   time.Time
	Timeout time.Duration
	// Open connects to askops once the event is read (within the bound);
	// close is called once the call is settled.
	Open func(ctx context.Context) (s Settler, close func(), err error)
	// Judged is a call's input as askops judged it (toolcall's
	// JudgedInput), handed back with a Claude Code allow of a Bash call as
	// updatedInput; nil hands back none (the call runs as the model wrote
	// it).
	Judged func(tool string, input json.RawMessage) json.RawMessage
}

// Open is Run.Open for a Settler already open.
func Open(s Settler) func(context.Context) (Settler, func(), error) {
	return func(context.Context) (Settler, func(), error) { return s, func() {}, nil }
}

// Answer reads the hook's event, settles its call and writes the answer;
// it returns the hook's exit code.
func (h Run) Answer(ctx context.Context) int {
	var bound time.Time
	if h.Timeout > 0 {
		bound = h.Start.Add(h.Timeout + Grace)
	}
	ev, c, err := h.read(bound)
	if err != nil {
		fmt.Fprintf(h.Err, "askops: unreadable hook input, refusing the call: %v\n", err)
		return ExitUnreadable
	}
	settled := make(chan Ask, 1)
	closed := make(chan struct{})
	sctx, stop := ctx, context.CancelFunc(func() {})
	if !bound.IsZero() {
		sctx, stop = context.WithDeadline(ctx, bound.Add(-hookSettleEnd))
	}
	defer stop()
	go func() {
		defer close(closed)
		s, closeFn, err := h.Open(sctx)
		if err != nil {
			settled <- refused(err.Error())
			return
		}
		defer closeFn()
		if h.Timeout > 0 {
			// The Ask ends by Start+Timeout, however long opening took.
			left := time.Until(h.Start.Add(h.Timeout)).Truncate(time.Millisecond)
			if left < min(minHookWait, h.Timeout/2) {
				settled <- refused(fmt.Sprintf("askops took too long to start: %s of the hook's %s were left", max(left, 0), h.Timeout))
				return
			}
			if c.Timeout <= 0 || c.Timeout > left {
				c.Timeout = left
			}
		}
		settled <- s.Settle(sctx, c)
	}()
	var a Ask
	if bound.IsZero() {
		a = <-settled
	} else {
		t := time.NewTimer(time.Until(bound.Add(-hookAnswerBy)))
		select {
		case a = <-settled:
		case <-t.C:
			a = refused(fmt.Sprintf("askops did not answer within %s", h.Timeout+Grace-hookAnswerBy))
		}
		t.Stop()
	}
	code := h.write(ev, a)
	if bound.IsZero() {
		<-closed
		return code
	}
	t := time.NewTimer(time.Until(bound.Add(-hookExitBy)))
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C: // what is still closing is left to the process's exit
	}
	return code
}

// minHookWait is the least time a hook's Ask is opened for (or half the
// hook's timeout, if that is shorter): less is refused at once rather than
// shown to an approver who cannot act in time.
const minHookWait = time.Second

// read reads the hook's event from In by bound (zero: no bound) and
// returns it with its Call.
func (h Run) read(bound time.Time) (Event, Call, error) {
	type read struct {
		b   []byte
		err error
	}
	got := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(h.In, MaxBody+1))
		got <- read{b, err}
	}()
	var r read
	if bound.IsZero() {
		r = <-got
	} else {
		t := time.NewTimer(time.Until(bound.Add(-hookAnswerBy)))
		defer t.Stop()
		select {
		case r = <-got:
		case <-t.C:
			return Event{}, Call{}, fmt.Errorf("no event on stdin within %s", h.Timeout+Grace-hookAnswerBy)
		}
	}
	if r.err == nil && len(r.b) > MaxBody {
		r.err = fmt.Errorf("over %d bytes", MaxBody)
	}
	if r.err != nil {
		return Event{}, Call{}, r.err
	}
	ev, err := ParseEvent(r.b)
	if err != nil {
		return Event{}, Call{}, err
	}
	if h.Agent == AgentCodex && ev.HookEventName != EventPermissionRequest {
		return Event{}, Call{}, fmt.Errorf("bot hook codex answers PermissionRequest, not %s", ev.HookEventName)
	}
	// The command hook runs where the agent's files are: its paths are
	// judged where they resolve (resolve.go), not as the agent spelled them.
	c := ev.Call(h.Agent)
	c.Workspace = h.Workspace
	c = ResolvePaths(c)
	c.By = h.By
	return ev, c, nil
}

// write writes the agent's answer for a and returns the exit code.
func (h Run) write(ev Event, a Ask) int {
	var answer Answer
	if h.Agent == AgentCodex {
		answer = CodexAnswer(a)
	} else {
		var judged json.RawMessage
		if ev.ToolName == "Bash" && len(ev.ToolInput) > 0 && h.Judged != nil {
			judged = h.Judged(ev.ToolName, ev.ToolInput)
		}
		answer = ClaudeAnswer(ev.HookEventName, a, judged)
	}
	enc := json.NewEncoder(h.Out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(answer); err != nil {
		fmt.Fprintf(h.Err, "askops: could not write the answer: %v\n", err)
		return ExitUnreadable // blocks the call: fail closed
	}
	return ExitAnswered
}
