package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/policy"
)

// execute runs run's loop and calls finish with its Result, once: on this
// goroutine, or, when the run waited for a human, on the goroutine that
// brought the decision.
func (r *Runner) execute(ctx context.Context, run *Run, finish func(Result)) {
	spec := run.spec
	run.emit(Event{Kind: EventStarted, Text: spec.Task})
	if strings.TrimSpace(spec.Task) == "" {
		finish(Result{Status: StatusFailed, Err: errors.New("agent: the run has no task")})
		return
	}
	env, err := r.env(spec.Cwd)
	if err != nil {
		finish(Result{Status: StatusFailed, Err: err})
		return
	}
	// Room for the first turn (its call and result) from the start.
	msgs := make([]openai.ChatCompletionMessage, 0, 4)
	msgs = append(msgs,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: r.systemPrompt(env)},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: spec.Task})
	l := &loop{r: r, ctx: ctx, run: run, env: env, finish: finish, msgs: msgs}
	l.next()
}

// maxKeptPrompts bounds the system prompts kept for sharing: one per
// working directory runs start in, which a team keeps to a handful.
const maxKeptPrompts = 256

// systemPrompt is a run's first message: the configured prompt and where
// the run works. Runs in one directory share one copy of it (up to
// maxKeptPrompts directories), so 10,000 waiting runs do not each keep a
// kilobyte of the same text.
func (r *Runner) systemPrompt(env Env) string {
	r.promptsMu.Lock()
	defer r.promptsMu.Unlock()
	if p, ok := r.prompts[env.Cwd]; ok {
		return p
	}
	p := r.cfg.SystemPrompt + fmt.Sprintf("\n\nWorkspace: %s\nWorking directory: %s", env.Workspace, env.Cwd)
	if len(r.prompts) < maxKeptPrompts {
		r.prompts[env.Cwd] = p
	}
	return p
}

// loop is a run's loop as its state: the conversation, and the model
// turn whose calls are being taken through the policy. Kept as state, not
// on a goroutine's stack, so that a run waiting for its human can park.
type loop struct {
	r      *Runner
	ctx    context.Context
	run    *Run
	env    Env
	finish func(Result)

	msgs []openai.ChatCompletionMessage
	it   int
	turn *turn // nil between model turns
}

// turn is one model turn's calls in progress.
type turn struct {
	calls   []call
	results []string
	i       int   // the next call to take
	skipped *call // the first side-effect-relevant call of this turn that was not performed
}

// next goes on with the run until it ends (finish) or parks for a human,
// whose decision calls next again.
func (l *loop) next() {
	for {
		if l.turn == nil {
			if res, ended := l.ask(); ended {
				l.finish(res)
				return
			}
		}
		if parked := l.runCalls(); parked {
			return
		}
		if l.ctx.Err() != nil {
			l.finish(cancelled(l.ctx))
			return
		}
		for i, c := range l.turn.calls {
			tc := c.tc
			l.msgs = append(l.msgs, openai.ChatCompletionMessage{
				Role:       openai.ChatMessageRoleTool,
				ToolCallID: tc.ID,
				Name:       tc.Function.Name,
				Content:    l.turn.results[i],
			})
		}
		l.turn = nil
	}
}

// ask asks the model for its next turn and starts it (l.turn), or says
// how the run ended: the model's answer, a failure, a stop, or
// MaxIterations spent.
func (l *loop) ask() (Result, bool) {
	r, ctx, run := l.r, l.ctx, l.run
	if l.it >= r.cfg.MaxIterations {
		return Result{Status: StatusFailed, Err: fmt.Errorf(
			"agent: the model made %d calls (max_iterations) without giving a final answer; the run was stopped", r.cfg.MaxIterations)}, true
	}
	l.it++
	it := l.it
	run.iteration.Store(int64(it))
	resp, err := r.cfg.Model.Complete(ctx, openai.ChatCompletionRequest{
		Model:    r.cfg.ModelName,
		Messages: l.msgs,
		Tools:    r.defs,
	})
	if ctx.Err() != nil {
		return cancelled(ctx), true
	}
	if err != nil {
		return Result{Status: StatusFailed, Err: fmt.Errorf("agent: model: %w", err)}, true
	}
	if len(resp.Choices) == 0 {
		return Result{Status: StatusFailed, Err: errors.New("agent: the model returned no choices")}, true
	}
	msg := resp.Choices[0].Message
	msg.Role = openai.ChatMessageRoleAssistant
	for i := range msg.ToolCalls {
		// Some local servers omit ids; the tool results must still pair up.
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", it, i+1)
		}
		if msg.ToolCalls[i].Type == "" {
			msg.ToolCalls[i].Type = openai.ToolTypeFunction
		}
	}
	l.msgs = append(l.msgs, msg)
	if msg.Content != "" {
		run.emit(Event{Kind: EventAssistant, Text: msg.Content})
	}
	if len(msg.ToolCalls) == 0 {
		return Result{Status: StatusFinished, Answer: msg.Content}, true
	}
	t := &turn{calls: make([]call, len(msg.ToolCalls)), results: make([]string, len(msg.ToolCalls))}
	for i := range msg.ToolCalls {
		t.calls[i] = r.prepare(l.env, &msg.ToolCalls[i])
	}
	l.turn = t
	return Result{}, false
}

func cancelled(ctx context.Context) Result {
	return Result{Status: StatusCancelled, Err: context.Cause(ctx)}
}

// env resolves the run's working directory inside the workspace.
func (r *Runner) env(cwd string) (Env, error) {
	env := Env{
		Workspace:      r.workspace,
		Cwd:            r.workspace,
		MaxOutputBytes: r.cfg.MaxOutputBytes,
		DefaultTimeout: r.cfg.DefaultCommandTimeout,
		MaxTimeout:     r.cfg.MaxCommandTimeout,
	}
	if cwd == "" {
		return env, nil
	}
	p, err := confine(r.workspace, r.workspace, cwd)
	if err != nil {
		return Env{}, fmt.Errorf("agent: working directory: %w", err)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return Env{}, fmt.Errorf("agent: working directory %q is not a directory inside the workspace", cwd)
	}
	env.Cwd = filepath.Clean(p)
	return env, nil
}

// call is one tool call of a turn, decoded and prepared (or refused).
// It points at its tool and at the model's call in the conversation
// rather than copying them: a waiting run keeps its calls.
type call struct {
	tc     *openai.ToolCall
	tool   *Tool
	action Action
	bad    error // malformed: unknown tool, bad arguments, refused path
}

type outcome struct {
	text      string
	performed bool
}

// runCalls takes the turn's calls, from the next one, in batches, leaving
// the tool results in the model's call order; parked: a call waits for its
// human, and its decision goes on from there.
func (l *loop) runCalls() (parked bool) {
	r, ctx, run, env, t := l.r, l.ctx, l.run, l.env, l.turn
	calls, results := t.calls, t.results
	for t.i < len(calls) {
		i := t.i
		c := &calls[i]
		if ctx.Err() != nil {
			results[i] = notPerformedStopped
			t.i++
			continue
		}
		r.refresh(env, c)
		if c.bad != nil {
			run.emit(r.callEvent(EventToolCall, c))
			results[i] = "error: " + c.bad.Error()
			e := r.callEvent(EventToolResult, c)
			e.Text, e.IsError, e.NotPerformed = results[i], true, true
			run.emit(e)
			if t.skipped == nil {
				t.skipped = c // later side effects may depend on what this call meant to do
			}
			t.i++
			continue
		}
		if t.skipped != nil && c.tool.Safety != policy.ReadOnly {
			// It was planned on the premise that the earlier call would run.
			run.emit(r.callEvent(EventToolCall, c))
			results[i] = fmt.Sprintf("not performed: an earlier call in this turn (%s, id %s) was not performed, so this call, which has side effects, was skipped. Re-plan with that in mind.",
				t.skipped.tc.Function.Name, t.skipped.tc.ID)
			e := r.callEvent(EventToolResult, c)
			e.Text, e.NotPerformed = results[i], true
			run.emit(e)
			t.i++
			continue
		}

		v := r.evaluate(ctx, run, env, c)
		if v.Decision == policy.Allow && c.tool.Safety == policy.ReadOnly {
			// Gather the following read-only calls the policy allows too.
			batch := []int{i}
			verdicts := []policy.Verdict{v}
			j := i + 1
			for ; j < len(calls); j++ {
				n := &calls[j]
				r.refresh(env, n)
				if n.bad != nil || n.tool.Safety != policy.ReadOnly {
					break
				}
				nv := r.evaluate(ctx, run, env, n)
				if nv.Decision != policy.Allow {
					break // judged again when its own turn comes
				}
				batch = append(batch, j)
				verdicts = append(verdicts, nv)
			}
			r.runBatch(ctx, run, calls, batch, verdicts, results)
			t.i = j
			continue
		}

		o, parked := r.runAlone(ctx, run, env, c, v, func(o outcome) {
			t.took(c, o)
			l.next()
		})
		if parked {
			return true
		}
		t.took(c, o)
	}
	return false
}

// took records the outcome of c, the turn's next call, and moves on.
func (t *turn) took(c *call, o outcome) {
	t.results[t.i] = o.text
	if !o.performed && t.skipped == nil {
		t.skipped = c
	}
	t.i++
}

const notPerformedStopped = "not performed: the run was stopped before this call came up."

func (r *Runner) prepare(env Env, tc *openai.ToolCall) call {
	c := call{tc: tc}
	t, ok := r.tools[tc.Function.Name]
	if !ok {
		c.bad = fmt.Errorf("unknown tool %q; the available tools are: %s", tc.Function.Name, toolNames(r.tools))
		return c
	}
	c.tool = t
	args, err := parseArgs(t.Name, t.Params, tc.Function.Arguments)
	if err != nil {
		c.bad = err
		return c
	}
	a, err := safePrepare(*t, env, args)
	if err != nil {
		c.bad = err
		return c
	}
	if a.Run == nil {
		c.bad = fmt.Errorf("tool %s prepared nothing to run", t.Name)
		return c
	}
	c.action = a
	return c
}

// refresh prepares c again as it comes up, if it is a file tool's: its path
// is resolved, and then judged, as the calls ahead of it in the turn left
// the files, not as they were when the turn began. A command ahead of it
// may have made a directory on its path a symlink into .git, or its file a
// symlink to .env.
func (r *Runner) refresh(env Env, c *call) {
	if policy.IsFileTool(c.tc.Function.Name) {
		*c = r.prepare(env, c.tc)
	}
}

func safePrepare(t Tool, env Env, args Args) (a Action, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s failed while reading its arguments: %v", t.Name, p)
		}
	}()
	return t.Prepare(env, args)
}

func (r *Runner) evaluate(ctx context.Context, run *Run, env Env, c *call) (v policy.Verdict) {
	defer func() {
		if p := recover(); p != nil {
			r.cfg.Logger.Error("policy panicked; call denied", "run", run.spec.ID, "tool", c.tool.Name, "panic", p)
			v = policy.Verdict{Decision: policy.Deny, Reason: "the policy failed on this call"}
		}
	}()
	mode := run.modeNow(ctx, r.cfg.Logger.With("run", run.spec.ID, "session", run.spec.SessionID))
	v = r.cfg.Policy.Evaluate(ctx, policy.Call{
		Tool:      c.tool.Name,
		Safety:    c.tool.Safety,
		Command:   c.action.Command,
		Path:      c.action.Path,
		Cwd:       env.Cwd,
		Workspace: env.Workspace,
		SessionID: run.spec.SessionID,
		Mode:      mode,
		// The agent's tools confine every path to its real place in the
		// workspace (confine) on this machine's file system.
		Resolved: true,
		Exact:    true,
	})
	switch v.Decision {
	case policy.Allow, policy.Ask, policy.Deny:
	default:
		// A verdict we do not understand never lets a call run.
		v = policy.Verdict{Decision: policy.Deny, Reason: fmt.Sprintf("the policy gave no usable decision (%q)", v.Decision), Rule: v.Rule}
	}
	return v
}

func (r *Runner) callEvent(kind EventKind, c *call) Event {
	return Event{Kind: kind, Tool: c.tc.Function.Name, CallID: c.tc.ID, Args: c.tc.Function.Arguments, Summary: c.action.Summary}
}

// runBatch runs allowed read-only calls concurrently and waits for all.
func (r *Runner) runBatch(ctx context.Context, run *Run, calls []call, batch []int, verdicts []policy.Verdict, results []string) {
	sem := make(chan struct{}, r.cfg.MaxParallel)
	var wg sync.WaitGroup
	for k, idx := range batch {
		c := &calls[idx]
		v := verdicts[k]
		act := c.action.Run // batched calls are read-only tools: their plain action
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			e := r.callEvent(EventToolCall, c)
			e.Decision, e.Reason, e.Rule = v.Decision, v.Reason, v.Rule
			run.emit(e)
			results[idx] = r.perform(ctx, run, c, act, "")
		})
	}
	wg.Wait()
}

// runAlone takes one call through allow / deny / ask. An ask parks:
// runAlone returns parked, and resume gets the outcome later, on the
// decision's goroutine. Otherwise it returns the outcome.
func (r *Runner) runAlone(ctx context.Context, run *Run, env Env, c *call, v policy.Verdict, resume func(outcome)) (o outcome, parked bool) {
	// Built when a line is written, not kept while the run is parked (a
	// logger with its attributes is about 1 KB).
	log := func() *slog.Logger {
		return r.cfg.Logger.With("run", run.spec.ID, "session", run.spec.SessionID, "tool", c.tool.Name, "call_id", c.tc.ID)
	}
	bounded := c.action.Bounded != nil && r.cfg.Bound != nil
	if v.Decision == policy.Allow && bounded && !r.cfg.Bound.Active() && r.cfg.Bound.Required() {
		// No person looked, and nothing would hold the command to what
		// the policy read: a person looks.
		v.Decision = policy.Ask
		v.Reason = fmt.Sprintf("%s; but no OS bound is available here (%s) and agent.bound.mode is required, so a person decides", v.Reason, r.cfg.Bound.Describe())
		if run.currentMode() == policy.ModeNever {
			v.Decision = policy.Deny
			v.Reason = "mode never: " + v.Reason + " — no one is asked in this session"
		}
	}
	e := r.callEvent(EventToolCall, c)
	e.Decision, e.Reason, e.Rule = v.Decision, v.Reason, v.Rule
	run.emit(e)

	switch v.Decision {
	case policy.Allow:
		if bounded && r.cfg.Bound.Active() {
			return outcome{text: r.perform(ctx, run, c, c.action.Bounded, "yes ("+r.cfg.Bound.Describe()+")"), performed: true}, false
		}
		note := ""
		if bounded {
			note = "no (" + r.cfg.Bound.Describe() + ")"
		}
		return outcome{text: r.perform(ctx, run, c, c.action.Run, note), performed: true}, false
	case policy.Deny:
		log().Info("call blocked by policy", "rule", v.Rule, "reason", v.Reason)
		return r.notPerformed(run, c, policyDeniedText(v)), false
	}

	req := Request{
		RunID:         run.spec.ID,
		SessionID:     run.spec.SessionID,
		Label:         run.spec.Label,
		StartedBy:     run.spec.StartedBy,
		Tool:          c.tool.Name,
		Args:          c.tc.Function.Arguments,
		Summary:       c.action.Summary,
		Call:          c.action.Effect,
		Path:          c.action.Path,
		Reason:        r.withBoundNote(v.Reason),
		Rule:          v.Rule,
		Approvals:     v.Approvals,
		Workspace:     env.Workspace,
		Cwd:           env.Cwd,
		ReplyChannel:  run.spec.ReplyChannel,
		ReplyThreadTS: run.spec.ReplyThreadTS,

		SessionName:    run.spec.SessionName,
		SessionStarted: run.spec.SessionStarted,
		Reading:        v.Reading,
	}
	if req.SessionStarted.IsZero() {
		req.SessionStarted = run.started
	}
	asked := r.callEvent(EventAsked, c)
	asked.Reason, asked.Rule = v.Reason, v.Rule
	run.emit(asked)
	decided := func(d Decision) outcome {
		log().Info("ask decided", "ask", d.AskID, "outcome", d.Outcome, "by", d.By)
		e := r.callEvent(EventDecided, c)
		e.AskID, e.Outcome, e.By, e.Reason = d.AskID, d.Outcome, d.By, d.Reason
		run.emit(e)
		if d.Outcome.Approves() {
			if ctx.Err() != nil {
				// Approved, but the run was stopped meanwhile: nothing starts now.
				return r.notPerformed(run, c, notPerformedStopped)
			}
			note := ""
			if bounded {
				note = "no, approved by " + d.By
			}
			return outcome{text: r.perform(ctx, run, c, c.action.Run, note), performed: true}
		}
		return r.notPerformed(run, c, outcomeText(d))
	}
	r.approve(ctx, req, func(d Decision) { resume(decided(d)) })
	return outcome{}, true
}

// approve asks the Approver: done gets the Decision once, on a goroutine
// of its own, terminal and known however the approver fails (anything
// else fails closed as Unavailable).
func (r *Runner) approve(ctx context.Context, req Request, done func(Decision)) {
	var once sync.Once
	answer := func(d Decision) { once.Do(func() { done(d) }) }
	defer func() {
		if p := recover(); p != nil {
			go answer(Decision{Outcome: Unavailable, Reason: fmt.Sprintf("the approver failed: %v", p)})
		}
	}()
	r.cfg.Approver.Approve(ctx, req, func(d Decision) { answer(checked(d)) })
}

// checked is d, or Unavailable when d's outcome is not a terminal one the
// agent knows.
func checked(d Decision) Decision {
	if !d.Outcome.Valid() {
		d.Reason = fmt.Sprintf("the approver returned no decision (status %q)", d.Outcome)
		d.Outcome = Unavailable
	}
	return d
}

func (r *Runner) notPerformed(run *Run, c *call, text string) outcome {
	e := r.callEvent(EventToolResult, c)
	e.Text, e.NotPerformed = text, true
	run.emit(e)
	return outcome{text: text}
}

// withBoundNote is an Ask's reason with the run's bound said, one
// sentence, so every Ask shows what holds the calls no person looks at.
func (r *Runner) withBoundNote(reason string) string {
	b := r.cfg.Bound
	switch {
	case b == nil:
		return reason
	case b.Active():
		return reason + " — Bound: " + b.Describe() + "; commands allowed without a person run inside it, an approved one runs as approved."
	case b.Required():
		return reason + " — Bound: " + b.Describe() + "; agent.bound.mode is required, so every command is asked about."
	}
	return reason + " — Warning: bound " + b.Describe() + "; commands allowed without a person run unbounded."
}

// perform runs the prepared action with run and reports its result.
// bounded is what the result's event says of the bound ("" for no bound).
func (r *Runner) perform(ctx context.Context, run *Run, c *call, do func(context.Context) (string, error), bounded string) string {
	out, err := safeRun(ctx, c, do)
	if bounded != "" {
		r.cfg.Logger.Info("command ran", "run", run.spec.ID, "session", run.spec.SessionID, "tool", c.tool.Name, "call_id", c.tc.ID, "bounded", bounded)
	}
	e := r.callEvent(EventToolResult, c)
	e.Bounded = bounded
	if err != nil {
		out = "error: " + err.Error()
		e.IsError = true
	}
	if out == "" {
		out = "(no output)"
	}
	// Built-in tools cap their own output (leaving room for a status line);
	// this is the net for tools that do not.
	out = capText(out, r.cfg.MaxOutputBytes+1024)
	e.Text = out
	run.emit(e)
	return out
}

func safeRun(ctx context.Context, c *call, do func(context.Context) (string, error)) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s crashed: %v", c.tool.Name, p)
		}
	}()
	return do(ctx)
}
