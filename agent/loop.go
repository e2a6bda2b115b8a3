package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/policy"
)

// execute is one run's loop.
func (r *Runner) execute(ctx context.Context, run *Run) Result {
	spec := run.spec
	run.emit(Event{Kind: EventStarted, Text: spec.Task})
	if strings.TrimSpace(spec.Task) == "" {
		return Result{Status: StatusFailed, Err: errors.New("agent: the run has no task")}
	}
	env, err := r.env(spec.Cwd)
	if err != nil {
		return Result{Status: StatusFailed, Err: err}
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: r.cfg.SystemPrompt +
			fmt.Sprintf("\n\nWorkspace: %s\nWorking directory: %s", env.Workspace, env.Cwd)},
		{Role: openai.ChatMessageRoleUser, Content: spec.Task},
	}

	for it := 1; it <= r.cfg.MaxIterations; it++ {
		run.iteration.Store(int64(it))
		resp, err := r.cfg.Model.Complete(ctx, openai.ChatCompletionRequest{
			Model:    r.cfg.ModelName,
			Messages: msgs,
			Tools:    r.defs,
		})
		if ctx.Err() != nil {
			return cancelled(ctx)
		}
		if err != nil {
			return Result{Status: StatusFailed, Err: fmt.Errorf("agent: model: %w", err)}
		}
		if len(resp.Choices) == 0 {
			return Result{Status: StatusFailed, Err: errors.New("agent: the model returned no choices")}
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
		msgs = append(msgs, msg)
		if msg.Content != "" {
			run.emit(Event{Kind: EventAssistant, Text: msg.Content})
		}
		if len(msg.ToolCalls) == 0 {
			return Result{Status: StatusFinished, Answer: msg.Content}
		}

		results := r.turn(ctx, run, env, msg.ToolCalls)
		if ctx.Err() != nil {
			return cancelled(ctx)
		}
		for i, tc := range msg.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{
				Role:       openai.ChatMessageRoleTool,
				ToolCallID: tc.ID,
				Name:       tc.Function.Name,
				Content:    results[i],
			})
		}
	}
	return Result{Status: StatusFailed, Err: fmt.Errorf(
		"agent: the model made %d calls (max_iterations) without giving a final answer; the run was stopped", r.cfg.MaxIterations)}
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
type call struct {
	tc     openai.ToolCall
	tool   Tool
	action Action
	bad    error // malformed: unknown tool, bad arguments, refused path
}

type outcome struct {
	text      string
	performed bool
}

// turn runs one model turn's calls in batches and returns the tool results
// in the model's call order.
func (r *Runner) turn(ctx context.Context, run *Run, env Env, tcs []openai.ToolCall) []string {
	calls := make([]call, len(tcs))
	for i, tc := range tcs {
		calls[i] = r.prepare(env, tc)
	}
	results := make([]string, len(calls))
	var skipped *call // the first side-effect-relevant call of this turn that was not performed

	for i := 0; i < len(calls); {
		c := &calls[i]
		if ctx.Err() != nil {
			results[i] = notPerformedStopped
			i++
			continue
		}
		if c.bad != nil {
			run.emit(r.callEvent(EventToolCall, c))
			results[i] = "error: " + c.bad.Error()
			e := r.callEvent(EventToolResult, c)
			e.Text, e.IsError, e.NotPerformed = results[i], true, true
			run.emit(e)
			if skipped == nil {
				skipped = c // later side effects may depend on what this call meant to do
			}
			i++
			continue
		}
		if skipped != nil && c.tool.Safety != policy.ReadOnly {
			// It was planned on the premise that the earlier call would run.
			run.emit(r.callEvent(EventToolCall, c))
			results[i] = fmt.Sprintf("not performed: an earlier call in this turn (%s, id %s) was not performed, so this call, which has side effects, was skipped. Re-plan with that in mind.",
				skipped.tc.Function.Name, skipped.tc.ID)
			e := r.callEvent(EventToolResult, c)
			e.Text, e.NotPerformed = results[i], true
			run.emit(e)
			i++
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
			i = j
			continue
		}

		o := r.runAlone(ctx, run, env, c, v)
		results[i] = o.text
		if !o.performed && skipped == nil {
			skipped = c
		}
		i++
	}
	return results
}

const notPerformedStopped = "not performed: the run was stopped before this call came up."

func (r *Runner) prepare(env Env, tc openai.ToolCall) call {
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
	a, err := safePrepare(t, env, args)
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
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			e := r.callEvent(EventToolCall, c)
			e.Decision, e.Reason, e.Rule = v.Decision, v.Reason, v.Rule
			run.emit(e)
			results[idx] = r.perform(ctx, run, c)
		})
	}
	wg.Wait()
}

// runAlone takes one call through allow / deny / ask.
func (r *Runner) runAlone(ctx context.Context, run *Run, env Env, c *call, v policy.Verdict) outcome {
	log := r.cfg.Logger.With("run", run.spec.ID, "session", run.spec.SessionID, "tool", c.tool.Name, "call_id", c.tc.ID)
	e := r.callEvent(EventToolCall, c)
	e.Decision, e.Reason, e.Rule = v.Decision, v.Reason, v.Rule
	run.emit(e)

	switch v.Decision {
	case policy.Allow:
		return outcome{text: r.perform(ctx, run, c), performed: true}
	case policy.Deny:
		log.Info("call blocked by policy", "rule", v.Rule, "reason", v.Reason)
		return r.notPerformed(run, c, policyDeniedText(v))
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
		Reason:        v.Reason,
		Rule:          v.Rule,
		Approvals:     v.Approvals,
		Workspace:     env.Workspace,
		Cwd:           env.Cwd,
		ReplyChannel:  run.spec.ReplyChannel,
		ReplyThreadTS: run.spec.ReplyThreadTS,

		SessionName:    run.spec.SessionName,
		SessionStarted: run.spec.SessionStarted,
	}
	if req.SessionStarted.IsZero() {
		req.SessionStarted = run.started
	}
	asked := r.callEvent(EventAsked, c)
	asked.Reason, asked.Rule = v.Reason, v.Rule
	run.emit(asked)
	d := r.approve(ctx, req)
	log.Info("ask decided", "ask", d.AskID, "outcome", d.Outcome, "by", d.By)
	decided := r.callEvent(EventDecided, c)
	decided.AskID, decided.Outcome, decided.By, decided.Reason = d.AskID, d.Outcome, d.By, d.Reason
	run.emit(decided)

	if d.Outcome.Approves() {
		if ctx.Err() != nil {
			// Approved, but the run was stopped meanwhile: nothing starts now.
			return r.notPerformed(run, c, notPerformedStopped)
		}
		return outcome{text: r.perform(ctx, run, c), performed: true}
	}
	return r.notPerformed(run, c, outcomeText(d))
}

// approve asks the Approver and makes sure the answer is terminal and known;
// anything else fails closed as Unavailable.
func (r *Runner) approve(ctx context.Context, req Request) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			d = Decision{Outcome: Unavailable, Reason: fmt.Sprintf("the approver failed: %v", p)}
		}
	}()
	d = r.cfg.Approver.Approve(ctx, req)
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

// perform runs the prepared action and reports its result.
func (r *Runner) perform(ctx context.Context, run *Run, c *call) string {
	out, err := safeRun(ctx, c)
	e := r.callEvent(EventToolResult, c)
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

func safeRun(ctx context.Context, c *call) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s crashed: %v", c.tool.Name, p)
		}
	}()
	return c.action.Run(ctx)
}
