package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/policy"
)

func TestApprovedCallRunsAndItsOutputReachesTheModel(t *testing.T) {
	h := newHarness(t, bashTurns("it said hello", "echo hello from bash"), nil)
	h.approver.answer = answerWith(agent.Approved, "U42", "")

	started := time.Date(2026, 12, 2, 14, 2, 0, 0, time.UTC)
	res, ev := h.run(t, agent.RunSpec{ID: "run-1", SessionID: "sess-1", StartedBy: "U1", Label: "ops", Mode: policy.ModeAsk,
		ReplyChannel: "C1", ReplyThreadTS: "171.1", SessionName: "thread 'say hello'", SessionStarted: started})

	if res.Status != agent.StatusFinished || res.Answer != "it said hello" {
		t.Fatalf("result = %+v", res)
	}
	got := toolResults(t, h.srv, 1)["c1"]
	mustContain(t, got, "hello from bash", "[exit code: 0]")

	asks := h.approver.asked()
	if len(asks) != 1 {
		t.Fatalf("approver asked %d times, want 1", len(asks))
	}
	want := agent.Request{
		RunID: "run-1", SessionID: "sess-1", Label: "ops", StartedBy: "U1",
		Tool: "bash", Args: `{"command":"echo hello from bash"}`, Summary: "echo hello from bash",
		Call:   agent.Effect{Kind: agent.EffectCommand, Command: "echo hello from bash"},
		Reason: "side effect", Rule: "safety", Workspace: h.ws, Cwd: h.ws,
		ReplyChannel: "C1", ReplyThreadTS: "171.1", SessionName: "thread 'say hello'", SessionStarted: started,
	}
	if asks[0] != want {
		t.Errorf("request = %+v\nwant      %+v", asks[0], want)
	}
	judged := h.policy.judged()
	wantCall := policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: "echo hello from bash", Cwd: h.ws,
		Workspace: h.ws, SessionID: "sess-1", Mode: policy.ModeAsk, Resolved: true, Exact: true}
	if len(judged) != 1 || judged[0] != wantCall {
		t.Errorf("policy judged %+v, want %+v", judged, wantCall)
	}

	wantKinds := []string{"started", "tool_call:c1", "asked:c1", "decided:c1", "tool_result:c1", "assistant", "finished"}
	if got := ev.kinds(); !slices.Equal(got, wantKinds) {
		t.Errorf("events = %v, want %v", got, wantKinds)
	}
	d := ev.all()[ev.index(agent.EventDecided, "c1")]
	if d.Outcome != agent.Approved || d.By != "U42" {
		t.Errorf("decided event = %+v", d)
	}
	// The model was offered the product's tools with their argument fields.
	var names []string
	for _, tool := range h.srv.Requests()[0].Body.Tools {
		names = append(names, tool.Function.Name)
	}
	if !slices.Equal(names, []string{"bash", "read_file", "write_file", "edit_file", "list_files"}) {
		t.Errorf("tools offered = %v", names)
	}
}

func TestDeniedCallDoesNotRunAndTheModelLearnsWhy(t *testing.T) {
	h := newHarness(t, bashTurns("understood, I will not touch it", "touch marker"), nil)
	h.approver.answer = answerWith(agent.Denied, "alice", "not during the freeze")

	res, ev := h.run(t, agent.RunSpec{SessionID: "s"})

	if res.Status != agent.StatusFinished || res.Answer != "understood, I will not touch it" {
		t.Fatalf("result = %+v", res)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Fatal("the denied command ran")
	}
	got := toolResults(t, h.srv, 1)["c1"]
	want := "permission denied by alice: not during the freeze. The action was not performed. Do not retry the same call; take a different approach or explain what you need."
	if got != want {
		t.Errorf("tool result = %q\nwant %q", got, want)
	}
	r := ev.all()[ev.index(agent.EventToolResult, "c1")]
	if !r.NotPerformed {
		t.Errorf("tool_result event not marked NotPerformed: %+v", r)
	}
}

func TestEveryOutcomeHasItsOwnText(t *testing.T) {
	cases := []struct {
		name   string
		answer func(context.Context, agent.Request) agent.Decision
		policy func(policy.Call) policy.Verdict
		want   []string
	}{
		{name: "denied", answer: answerWith(agent.Denied, "bob", "too risky"),
			want: []string{"permission denied by bob: too risky", "not performed", "Do not retry"}},
		{name: "denied without reason", answer: answerWith(agent.Denied, "", ""),
			want: []string{"permission denied by an approver: no reason given"}},
		{name: "expired", answer: answerWith(agent.Expired, "", ""),
			want: []string{"no one approved this call before its deadline (2026-11-29T14:00:00Z)", "not performed", "Do not retry"}},
		{name: "expired after follow-ups", answer: answerWith(agent.Expired, "", "nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m)"),
			want: []string{"expired: nobody answered in 15m (reminded at 5m, escalated to S_ONCALL at 10m). no one approved", "not performed", "Do not retry"}},
		{name: "cancelled", answer: answerWith(agent.Cancelled, "", "the run was stopped by U9"),
			want: []string{"approval request was cancelled before anyone decided (the run was stopped by U9)", "not performed"}},
		{name: "unavailable", answer: answerWith(agent.Unavailable, "", "slack is down"),
			want: []string{"could not reach anyone who may approve (slack is down)", "not performed", "Do not retry"}},
		{name: "approver returns a pending ask", answer: func(_ context.Context, req agent.Request) agent.Decision {
			return agent.Decision{Outcome: "pending"}
		}, want: []string{"could not reach anyone who may approve", `no decision (status "pending")`, "not performed"}},
		{name: "policy deny", policy: func(policy.Call) policy.Verdict {
			return policy.Verdict{Decision: policy.Deny, Reason: "touching markers is forbidden", Rule: `rules[0] (deny bash "touch")`}
		}, want: []string{`blocked by policy (rules[0] (deny bash "touch")): touching markers is forbidden.`, "not performed", "Do not retry"}},
		{name: "policy panics", policy: func(policy.Call) policy.Verdict { panic("bug") },
			want: []string{"blocked by policy (built-in): the policy failed on this call."}},
		{name: "approver panics", answer: func(context.Context, agent.Request) agent.Decision { panic("bug") },
			want: []string{"could not reach anyone who may approve (the approver failed: bug)"}},
		{name: "policy gives nonsense", policy: func(policy.Call) policy.Verdict {
			return policy.Verdict{Decision: "maybe"}
		}, want: []string{"blocked by policy", `no usable decision ("maybe")`}},
	}
	texts := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, bashTurns("ok", "touch marker"), nil)
			h.approver.answer = tc.answer
			h.policy.decide = tc.policy

			res, _ := h.run(t, agent.RunSpec{})

			if res.Status != agent.StatusFinished {
				t.Fatalf("result = %+v; a non-approval must not end the run", res)
			}
			if exists(filepath.Join(h.ws, "marker")) {
				t.Fatal("the command ran")
			}
			got := toolResults(t, h.srv, 1)["c1"]
			mustContain(t, got, tc.want...)
			texts[tc.name] = got
		})
	}
	seen := map[string]string{}
	for name, text := range texts {
		if other, dup := seen[text]; dup {
			t.Errorf("%s and %s give the same text %q", name, other, text)
		}
		seen[text] = name
	}
}

// barrierTool is a read-only tool whose calls each wait until n of them have
// started, so the test finishes only if they run at the same time.
func barrierTool(n int) agent.Tool {
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	return agent.Tool{
		Name:        "probe",
		Description: "test probe",
		Params:      []agent.Param{{Name: "name", Type: agent.String, Required: true}},
		Safety:      policy.ReadOnly,
		Prepare: func(env agent.Env, a agent.Args) (agent.Action, error) {
			name := a.String("name")
			return agent.Action{Summary: "probe " + name, Run: func(ctx context.Context) (string, error) {
				mu.Lock()
				started++
				if started == n {
					close(all)
				}
				mu.Unlock()
				// The timer only turns a wrong (sequential) implementation into
				// a failure instead of a hang; a right one never waits on it.
				timer := time.NewTimer(20 * time.Second)
				defer timer.Stop()
				select {
				case <-all:
					return "probed " + name, nil
				case <-timer.C:
					return "", errors.New("not all probes started: the calls did not run concurrently")
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}}, nil
		},
	}
}

func TestReadOnlyCallsInOneTurnRunConcurrently(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(
			call("p1", "probe", map[string]any{"name": "one"}),
			call("p2", "probe", map[string]any{"name": "two"}),
			call("p3", "probe", map[string]any{"name": "three"}),
		),
		fakeopenai.Text("probed"),
	}, func(c *agent.Config) { c.Tools = []agent.Tool{barrierTool(3)} })

	res, ev := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	results := toolResults(t, h.srv, 1)
	for id, name := range map[string]string{"p1": "one", "p2": "two", "p3": "three"} {
		if results[id] != "probed "+name {
			t.Errorf("%s result = %q", id, results[id])
		}
	}
	// Every call started before any finished.
	lastStart, firstEnd := -1, len(ev.all())
	for _, id := range []string{"p1", "p2", "p3"} {
		lastStart = max(lastStart, ev.index(agent.EventToolCall, id))
		firstEnd = min(firstEnd, ev.index(agent.EventToolResult, id))
	}
	if lastStart > firstEnd {
		t.Errorf("calls did not overlap: %v", ev.kinds())
	}
	// Results go back in the model's order whatever order they finished in.
	if got := toolOrder(t, h.srv, 1); !slices.Equal(got, []string{"p1", "p2", "p3"}) {
		t.Errorf("tool message order = %v", got)
	}
}

func TestSideEffectAfterAnAskWaitsForTheDecision(t *testing.T) {
	for _, tc := range []struct {
		outcome   agent.Outcome
		wantWrite bool
	}{
		{agent.Approved, true},
		{agent.Denied, false}, // planned on the premise the first call ran: skipped
	} {
		t.Run(string(tc.outcome), func(t *testing.T) {
			var ev *events
			h := newHarness(t, []fakeopenai.Reply{
				fakeopenai.Call(
					bash("c1", "echo one > a.txt"),
					call("c2", "write_file", map[string]any{"path": "b.txt", "content": "two"}),
					call("c3", "read_file", map[string]any{"path": "a.txt"}),
				),
				fakeopenai.Text("done"),
			}, nil)
			// write_file is allowed outright; only bash asks.
			h.policy.decide = func(c policy.Call) policy.Verdict {
				if c.Tool == "write_file" {
					return policy.Verdict{Decision: policy.Allow, Reason: "test"}
				}
				return bySafety(c)
			}
			var sawWrite, sawCall2 bool
			h.approver.answer = func(ctx context.Context, req agent.Request) agent.Decision {
				// While this Ask is undecided, nothing after it has started.
				sawWrite = exists(filepath.Join(h.ws, "b.txt"))
				sawCall2 = ev.index(agent.EventToolCall, "c2") >= 0
				return decided(req, tc.outcome, "carol", "")
			}
			ev = newEvents()
			res := h.runner.Start(t.Context(), agent.RunSpec{Task: "t"}, ev.record).Wait()
			if res.Status != agent.StatusFinished {
				t.Fatalf("result = %+v", res)
			}
			if sawWrite || sawCall2 {
				t.Fatalf("the side-effect call started before the Ask ahead of it was decided (file %v, event %v)", sawWrite, sawCall2)
			}
			if ev.index(agent.EventToolCall, "c2") < ev.index(agent.EventDecided, "c1") {
				t.Errorf("c2 came up before c1 was decided: %v", ev.kinds())
			}
			if got := exists(filepath.Join(h.ws, "b.txt")); got != tc.wantWrite {
				t.Errorf("b.txt written = %v, want %v", got, tc.wantWrite)
			}
			results := toolResults(t, h.srv, 1)
			if !tc.wantWrite {
				mustContain(t, results["c2"], "not performed", "earlier call in this turn (bash, id c1)")
				mustContain(t, results["c3"], "a.txt does not exist") // read-only calls still go ahead
			} else {
				mustContain(t, results["c2"], "wrote 3 bytes to b.txt")
				mustContain(t, results["c3"], "one")
			}
			if got := toolOrder(t, h.srv, 1); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
				t.Errorf("tool message order = %v", got)
			}
		})
	}
}

func TestGrantFromAnEarlierApprovalAllowsALaterCallInTheSameTurn(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(bash("c1", "make test"), bash("c2", "make test")),
		fakeopenai.Text("done"),
	}, nil)
	var mu sync.Mutex
	granted := false
	h.policy.decide = func(c policy.Call) policy.Verdict {
		mu.Lock()
		defer mu.Unlock()
		if granted {
			return policy.Verdict{Decision: policy.Allow, Reason: "session grant", Grant: "g1"}
		}
		return bySafety(c)
	}
	h.approver.answer = func(_ context.Context, req agent.Request) agent.Decision {
		mu.Lock()
		granted = true // what the wiring does on "Approve for session"
		mu.Unlock()
		return decided(req, agent.ApprovedSession, "dave", "")
	}
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	if n := len(h.approver.asked()); n != 1 {
		t.Errorf("asked %d times, want 1 (the second call is covered by the grant)", n)
	}
	for id, out := range toolResults(t, h.srv, 1) {
		if !strings.Contains(out, "[exit code:") {
			t.Errorf("%s did not run: %q", id, out)
		}
	}
}

func TestStopDuringAnAskCancelsIt(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(bash("c1", "touch marker"))}, nil)
	ctxEnded := make(chan error, 1)
	h.approver.answer = func(ctx context.Context, req agent.Request) agent.Decision {
		<-ctx.Done()
		ctxEnded <- context.Cause(ctx)
		return decided(req, agent.Cancelled, "", "the run was stopped")
	}
	ev := newEvents()
	run := h.runner.Start(t.Context(), agent.RunSpec{ID: "r-ask", Task: "t"}, ev.record)
	ev.waitFor(t, "asked", func(e agent.Event) bool { return e.Kind == agent.EventAsked })
	if infos := h.runner.Runs(); len(infos) != 1 || infos[0].ID != "r-ask" {
		t.Errorf("Runs() = %+v", infos)
	}
	if !h.runner.Stop("r-ask") {
		t.Fatal("Stop did not find the run")
	}
	res := run.Wait()
	if res.Status != agent.StatusCancelled || !errors.Is(res.Err, agent.ErrStopped) {
		t.Fatalf("result = %+v", res)
	}
	if cause := <-ctxEnded; !errors.Is(cause, agent.ErrStopped) {
		t.Errorf("approver's ctx cause = %v", cause)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Error("the command ran")
	}
	d := ev.all()[ev.index(agent.EventDecided, "c1")]
	if d.Outcome != agent.Cancelled {
		t.Errorf("decided = %+v", d)
	}
	if last := ev.all()[len(ev.all())-1]; last.Kind != agent.EventFailed || !errors.Is(last.Err, agent.ErrStopped) {
		t.Errorf("last event = %+v", last)
	}
	if len(h.runner.Runs()) != 0 || h.runner.Stop("r-ask") {
		t.Error("the stopped run is still listed")
	}
	if n := len(h.srv.Requests()); n != 1 {
		t.Errorf("model called %d times after the stop, want no more calls", n)
	}
}

func TestStopDuringALongCommandKillsItsProcessGroup(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(bash("c1", "sleep 60 & echo $! > child.pid; wait")),
	}, func(c *agent.Config) { c.Policy = &fakePolicy{decide: allowAll} })
	ev := newEvents()
	run := h.runner.Start(t.Context(), agent.RunSpec{Task: "t"}, ev.record)
	pidFile := filepath.Join(h.ws, "child.pid")
	waitPid(t, pidFile)
	if !h.runner.Stop(run.ID()) {
		t.Fatal("Stop did not find the run")
	}
	res := run.Wait()
	if res.Status != agent.StatusCancelled {
		t.Fatalf("result = %+v", res)
	}
	waitGone(t, pidFile)
	r := ev.all()[ev.index(agent.EventToolResult, "c1")]
	mustContain(t, r.Text, "stopped", "child processes were killed")
}

func TestCommandTimeoutKillsChildrenAndKeepsPartialOutput(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(call("c1", "bash", map[string]any{
			"command":         "echo partial output; sleep 60 & echo $! > child.pid; wait",
			"timeout_seconds": 1,
		})),
		fakeopenai.Text("it timed out"),
	}, func(c *agent.Config) { c.Policy = &fakePolicy{decide: allowAll} })
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	got := toolResults(t, h.srv, 1)["c1"]
	mustContain(t, got, "partial output", "[timed out after 1s: the command and its child processes were killed; the output above is partial]")
	waitGone(t, filepath.Join(h.ws, "child.pid"))
}

func TestOutputIsCappedHeadAndTail(t *testing.T) {
	h := newHarness(t, bashTurns("ok", `head -c 100000 /dev/zero | tr '\0' a; echo; echo END; exit 3`), func(c *agent.Config) {
		c.Policy = &fakePolicy{decide: allowAll}
		c.MaxOutputBytes = 1000
	})
	h.run(t, agent.RunSpec{})
	got := toolResults(t, h.srv, 1)["c1"]
	// 100000 a's, "\n", "END\n" = 100005 bytes; 500 kept at each end.
	mustContain(t, got, strings.Repeat("a", 500)+"\n[… 99005 bytes cut …]\n", "END\n[exit code: 3]")
	if len(got) > 1100 {
		t.Errorf("result is %d bytes", len(got))
	}
}

func TestMalformedCallsAreExplainedNeverRun(t *testing.T) {
	cases := []struct {
		name string
		call fakeopenai.ToolCall
		want []string
	}{
		{"invalid JSON", call("c1", "write_file", `{"path": "x.txt", "content": `),
			[]string{"invalid arguments for write_file", "must be a JSON object", "unexpected end of JSON input"}},
		{"not an object", call("c1", "write_file", `["x.txt"]`),
			[]string{"must be a JSON object"}},
		{"unknown tool", call("c1", "delete_everything", `{}`),
			[]string{`unknown tool "delete_everything"`, "bash, edit_file, list_files, read_file, write_file"}},
		{"missing field", call("c1", "write_file", `{"path":"x.txt"}`),
			[]string{`missing required field "content" (string)`, "Expected fields: path (string), content (string)"}},
		{"mistyped field", call("c1", "bash", `{"command": 5}`),
			[]string{`field "command" must be a string, got a number 5`}},
		{"mistyped integer", call("c1", "bash", `{"command": "touch x.txt", "timeout_seconds": "ten"}`),
			[]string{`field "timeout_seconds" must be an integer, got a string "ten"`}},
		{"fractional integer", call("c1", "bash", `{"command": "touch x.txt", "timeout_seconds": 1.5}`),
			[]string{`field "timeout_seconds" must be an integer, got 1.5`}},
		{"unknown field", call("c1", "write_file", `{"path":"x.txt","content":"hi","mode":"0777"}`),
			[]string{`unknown field "mode"`}},
		{"negative timeout", call("c1", "bash", `{"command": "touch x.txt", "timeout_seconds": -1}`),
			[]string{`"timeout_seconds" must be positive`}},
		{"timeout over the maximum", call("c1", "bash", `{"command": "touch x.txt", "timeout_seconds": 999999}`),
			[]string{`more than the maximum of 1800`}},
		{"empty command", call("c1", "bash", `{"command": "  "}`),
			[]string{`field "command" is empty`}},
		{"edit with empty old_string", call("c1", "edit_file", `{"path":"x.txt","old_string":"","new_string":"a"}`),
			[]string{`"old_string" is empty`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(tc.call), fakeopenai.Text("sorry")}, nil)
			h.approver.answer = answerWith(agent.Approved, "U1", "")
			res, ev := h.run(t, agent.RunSpec{})
			if res.Status != agent.StatusFinished {
				t.Fatalf("result = %+v", res)
			}
			got := toolResults(t, h.srv, 1)["c1"]
			if !strings.HasPrefix(got, "error: ") {
				t.Errorf("result %q does not start with error:", got)
			}
			mustContain(t, got, tc.want...)
			if exists(filepath.Join(h.ws, "x.txt")) {
				t.Error("the call ran")
			}
			if n := len(h.policy.judged()); n != 0 {
				t.Errorf("a malformed call reached the policy (%d times)", n)
			}
			if n := len(h.approver.asked()); n != 0 {
				t.Errorf("a malformed call reached a human (%d times)", n)
			}
			r := ev.all()[ev.index(agent.EventToolResult, "c1")]
			if !r.IsError || !r.NotPerformed {
				t.Errorf("event = %+v", r)
			}
		})
	}
}

func TestMissingToolCallIDsAreFilledIn(t *testing.T) {
	h := newHarness(t, callTurns("ok", call("", "list_files", ``)), nil)
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	req := h.srv.Requests()[1].Body
	asst := req.Messages[2]
	if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID == "" {
		t.Fatalf("assistant message = %+v", asst)
	}
	if got := toolOrder(t, h.srv, 1); !slices.Equal(got, []string{asst.ToolCalls[0].ID}) {
		t.Errorf("tool ids = %v, want %s", got, asst.ToolCalls[0].ID)
	}
}

func TestMaxIterationsEndsTheRunClearly(t *testing.T) {
	h := newHarness(t, nil, func(c *agent.Config) { c.MaxIterations = 3 })
	h.srv.Then(func(n int, _ openai.ChatCompletionRequest) fakeopenai.Reply {
		return fakeopenai.Call(call(fmt.Sprintf("c%d", n), "list_files", `{}`))
	})
	res, ev := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFailed || res.Iterations != 3 {
		t.Fatalf("result = %+v", res)
	}
	mustContain(t, res.Err.Error(), "max_iterations", "3")
	if n := len(h.srv.Requests()); n != 3 {
		t.Errorf("model called %d times, want 3", n)
	}
	if last := ev.all()[len(ev.all())-1]; last.Kind != agent.EventFailed {
		t.Errorf("last event = %+v", last)
	}
}

func TestModelRateLimitedThenAnswers(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.RateLimited("2"), fakeopenai.Text("hello")}, nil)
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished || res.Answer != "hello" {
		t.Fatalf("result = %+v", res)
	}
	if !slices.Equal(*h.waits, []time.Duration{2 * time.Second}) {
		t.Errorf("waits = %v, want the server's Retry-After of 2s", *h.waits)
	}
	if n := len(h.srv.Requests()); n != 2 {
		t.Errorf("requests = %d", n)
	}
}

func TestModelFailureAfterTheBudgetFailsTheRun(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Error(503, "overloaded"), fakeopenai.Error(503, "overloaded"), fakeopenai.Error(503, "overloaded"),
	}, nil)
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFailed {
		t.Fatalf("result = %+v", res)
	}
	mustContain(t, res.Err.Error(), "after 3 attempt(s)", "503", "overloaded")
}

func TestWorkspaceMustBeADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, file, "x")
	for _, tc := range []struct{ ws, want string }{
		{filepath.Join(dir, "missing"), "does not exist"},
		{file, "is not a directory"},
		{"", "no directory"},
	} {
		_, err := agent.NewRunner(agent.Config{
			Model: agent.NewModel("http://127.0.0.1:1/v1", "", nil, agent.RetryOptions{}), ModelName: "m",
			Workspace: tc.ws, Policy: &fakePolicy{}, Approver: &fakeApprover{},
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("workspace %q: err = %v, want %q", tc.ws, err, tc.want)
		}
	}
}

func TestRunInASubdirectory(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(bash("c1", "pwd"), call("c2", "read_file", map[string]any{"path": "note.txt"})),
		fakeopenai.Text("ok"),
	}, func(c *agent.Config) { c.Policy = &fakePolicy{decide: allowAll} })
	writeFile(t, filepath.Join(h.ws, "sub", "note.txt"), "in sub\n")
	res, _ := h.run(t, agent.RunSpec{Cwd: "sub"})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	results := toolResults(t, h.srv, 1)
	mustContain(t, results["c1"], filepath.Join(h.ws, "sub")+"\n")
	mustContain(t, results["c2"], "1\tin sub")

	// A working directory outside the workspace fails the run at its start.
	res, _ = h.run(t, agent.RunSpec{Cwd: "../"})
	if res.Status != agent.StatusFailed || !strings.Contains(res.Err.Error(), "leaves the workspace") {
		t.Fatalf("result = %+v", res)
	}
}

func TestAMalformedCallSkipsTheSideEffectsPlannedAfterIt(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{
		fakeopenai.Call(
			call("c1", "write_file", `{"path":"run.sh"}`), // content missing
			bash("c2", "bash run.sh > ran.txt"),
		),
		fakeopenai.Text("ok"),
	}, func(c *agent.Config) { c.Policy = &fakePolicy{decide: allowAll} })
	res, _ := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("result = %+v", res)
	}
	if exists(filepath.Join(h.ws, "ran.txt")) {
		t.Error("the command planned on the failed write ran")
	}
	mustContain(t, toolResults(t, h.srv, 1)["c2"], "not performed", "(write_file, id c1)")
}

func TestARunWithoutATaskFails(t *testing.T) {
	h := newHarness(t, nil, nil)
	res := h.runner.Start(t.Context(), agent.RunSpec{Task: "  "}, nil).Wait()
	if res.Status != agent.StatusFailed || !strings.Contains(res.Err.Error(), "no task") {
		t.Fatalf("result = %+v", res)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}

func TestStopWhileTheModelThinks(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	h := newHarness(t, []fakeopenai.Reply{{Hold: hold, Content: "never seen"}}, nil)
	ev := newEvents()
	run := h.runner.Start(t.Context(), agent.RunSpec{Task: "t"}, ev.record)
	for deadline := time.Now().Add(20 * time.Second); len(h.srv.Requests()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the model was never called")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.runner.Stop(run.ID())
	res := run.Wait()
	if res.Status != agent.StatusCancelled || !errors.Is(res.Err, agent.ErrStopped) {
		t.Fatalf("result = %+v", res)
	}
}

func TestParentContextEndCancelsTheRun(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(bash("c1", "touch marker"))}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	h.approver.answer = func(ctx context.Context, req agent.Request) agent.Decision {
		cancel() // e.g. the bot is shutting down while the Ask waits
		<-ctx.Done()
		return decided(req, agent.Cancelled, "", "shutting down")
	}
	res := h.runner.Start(ctx, agent.RunSpec{Task: "t"}, nil).Wait()
	if res.Status != agent.StatusCancelled || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("result = %+v", res)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Error("the command ran")
	}
}

func TestApprovedButStoppedMeanwhileDoesNotRun(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(bash("c1", "touch marker"))}, nil)
	var run *agent.Run
	started := make(chan struct{})
	h.approver.answer = func(ctx context.Context, req agent.Request) agent.Decision {
		<-started
		h.runner.Stop(run.ID())
		<-ctx.Done()
		return decided(req, agent.Approved, "late-clicker", "") // a click that raced the stop
	}
	run = h.runner.Start(t.Context(), agent.RunSpec{Task: "t"}, nil)
	close(started)
	if res := run.Wait(); res.Status != agent.StatusCancelled {
		t.Fatalf("result = %+v", res)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Error("an approval that arrived after the stop ran the command")
	}
}

func TestDuplicateRunIDIsRefused(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	h := newHarness(t, []fakeopenai.Reply{{Hold: hold}}, nil)
	first := h.runner.Start(t.Context(), agent.RunSpec{ID: "same", Task: "t"}, nil)
	second := h.runner.Start(t.Context(), agent.RunSpec{ID: "same", Task: "t"}, nil).Wait()
	if second.Status != agent.StatusFailed || !strings.Contains(second.Err.Error(), "already running") {
		t.Fatalf("second = %+v", second)
	}
	h.runner.Stop("same")
	if res := first.Wait(); res.Status != agent.StatusCancelled {
		t.Fatalf("first = %+v", res)
	}
}

// Then gets the run's result once it ends, whether it was asked for while
// the run waited for a human or after it ended; the Runner's Shutdown
// waits for it.
func TestThenGetsTheResultBeforeAndAfterTheEnd(t *testing.T) {
	h := newHarness(t, []fakeopenai.Reply{fakeopenai.Call(bash("c1", "touch marker"))}, nil)
	h.approver.answer = func(ctx context.Context, req agent.Request) agent.Decision {
		<-ctx.Done()
		return decided(req, agent.Cancelled, "", "the run was stopped")
	}
	ev := newEvents()
	run := h.runner.Start(t.Context(), agent.RunSpec{ID: "r-then", Task: "t"}, ev.record)
	ev.waitFor(t, "asked", func(e agent.Event) bool { return e.Kind == agent.EventAsked })
	var before agent.Result
	run.Then(func(res agent.Result) { before = res })
	if err := h.runner.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if before.RunID != "r-then" || before.Status != agent.StatusCancelled {
		t.Fatalf("Then while waiting got %+v once the Runner's Shutdown returned", before)
	}
	var after agent.Result
	run.Then(func(res agent.Result) { after = res })
	if after != before {
		t.Fatalf("Then after the end got %+v, want %+v", after, before)
	}
}
