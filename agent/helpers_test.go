package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/policy"
)

// The bounded bash calls of these tests re-exec this binary: package
// bound's init (imported by bound_test.go) sets their bound up.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakePolicy answers by a function of the call and records every call it judged.
type fakePolicy struct {
	mu     sync.Mutex
	calls  []policy.Call
	decide func(c policy.Call) policy.Verdict
}

func (p *fakePolicy) Evaluate(_ context.Context, c policy.Call) policy.Verdict {
	p.mu.Lock()
	p.calls = append(p.calls, c)
	f := p.decide
	p.mu.Unlock()
	if f != nil {
		return f(c)
	}
	return bySafety(c)
}

func (p *fakePolicy) judged() []policy.Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]policy.Call(nil), p.calls...)
}

// bySafety is the policy's last step: read-only allows, anything else asks.
func bySafety(c policy.Call) policy.Verdict {
	if c.Safety == policy.ReadOnly {
		return policy.Verdict{Decision: policy.Allow, Reason: "read-only tool"}
	}
	return policy.Verdict{Decision: policy.Ask, Reason: "side effect", Rule: "safety"}
}

func allowAll(policy.Call) policy.Verdict {
	return policy.Verdict{Decision: policy.Allow, Reason: "test allows everything"}
}

// fakeApprover answers Asks with a function (on the run's goroutine, so
// one that blocks holds the run as a blocking approver would, and one
// that panics is the approver failing), telling done on a goroutine of
// its own, and records the requests.
type fakeApprover struct {
	mu       sync.Mutex
	requests []agent.Request
	answer   func(ctx context.Context, req agent.Request) agent.Decision
}

func (a *fakeApprover) Approve(ctx context.Context, req agent.Request, done func(agent.Decision)) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	f := a.answer
	a.mu.Unlock()
	if f == nil {
		go done(decided(req, agent.Unavailable, "", "no answer configured"))
		return
	}
	go done(f(ctx, req))
}

func (a *fakeApprover) asked() []agent.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.Request(nil), a.requests...)
}

func decided(req agent.Request, o agent.Outcome, by, reason string) agent.Decision {
	return agent.Decision{AskID: "ask-" + req.Tool, Outcome: o, By: by, Reason: reason,
		Deadline: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}
}

func answerWith(o agent.Outcome, by, reason string) func(context.Context, agent.Request) agent.Decision {
	return func(_ context.Context, req agent.Request) agent.Decision { return decided(req, o, by, reason) }
}

// events records a run's events.
type events struct {
	mu   sync.Mutex
	list []agent.Event
	seen chan agent.Event // every event, for tests that react to one; buffered
}

func newEvents() *events { return &events{seen: make(chan agent.Event, 1000)} }

func (e *events) record(ev agent.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
	e.seen <- ev
}

func (e *events) all() []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.list...)
}

func (e *events) kinds() []string {
	var out []string
	for _, ev := range e.all() {
		k := string(ev.Kind)
		if ev.CallID != "" {
			k += ":" + ev.CallID
		}
		out = append(out, k)
	}
	return out
}

// waitFor blocks until an event matching f arrives, failing the test after a deadline.
func (e *events) waitFor(t *testing.T, what string, f func(agent.Event) bool) agent.Event {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case ev := <-e.seen:
			if f(ev) {
				return ev
			}
		case <-deadline.C:
			t.Fatalf("no %s event; got %v", what, e.kinds())
		}
	}
}

func (e *events) index(kind agent.EventKind, callID string) int {
	for i, ev := range e.all() {
		if ev.Kind == kind && ev.CallID == callID {
			return i
		}
	}
	return -1
}

type harness struct {
	srv      *fakeopenai.Server
	policy   *fakePolicy
	approver *fakeApprover
	runner   *agent.Runner
	ws       string
	waits    *[]time.Duration
}

// newHarness starts a fake model with replies and a Runner over a fresh
// workspace; edit tunes the Config before the Runner is made.
func newHarness(t *testing.T, replies []fakeopenai.Reply, edit func(*agent.Config)) *harness {
	t.Helper()
	srv := fakeopenai.Start(t, replies...)
	var mu sync.Mutex
	waits := []time.Duration{}
	model := agent.NewModel(srv.BaseURL(), "sk-test", srv.Client(), agent.RetryOptions{
		MaxAttempts: 3,
		Wait: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return ctx.Err()
		},
	})
	h := &harness{srv: srv, policy: &fakePolicy{}, approver: &fakeApprover{}, ws: t.TempDir(), waits: &waits}
	cfg := agent.Config{
		Model:                 model,
		ModelName:             "fake-model",
		Workspace:             h.ws,
		Policy:                h.policy,
		Approver:              h.approver,
		DefaultCommandTimeout: 30 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	r, err := agent.NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.runner = r
	h.ws = r.Workspace()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return h
}

func (h *harness) run(t *testing.T, spec agent.RunSpec) (agent.Result, *events) {
	t.Helper()
	ev := newEvents()
	if spec.Task == "" {
		spec.Task = "do the thing"
	}
	run := h.runner.Start(t.Context(), spec, ev.record)
	return run.Wait(), ev
}

// toolResults returns the tool messages of request n (0-based) by call id.
func toolResults(t *testing.T, srv *fakeopenai.Server, n int) map[string]string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= n {
		t.Fatalf("model got %d requests, want more than %d", len(reqs), n)
	}
	out := map[string]string{}
	for _, m := range reqs[n].Body.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// toolOrder returns the tool_call_ids of request n's tool messages, in order.
func toolOrder(t *testing.T, srv *fakeopenai.Server, n int) []string {
	t.Helper()
	var out []string
	for _, m := range srv.Requests()[n].Body.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m.ToolCallID)
		}
	}
	return out
}

func call(id, name string, args any) fakeopenai.ToolCall {
	s, ok := args.(string)
	if !ok {
		b, _ := json.Marshal(args)
		s = string(b)
	}
	return fakeopenai.ToolCall{ID: id, Name: name, Arguments: s}
}

func bash(id, command string) fakeopenai.ToolCall {
	return call(id, "bash", map[string]any{"command": command})
}

// callTurns is the model's side of a run that makes the given tool calls
// one a turn, in order, and then answers text: the replies most tests of a
// run hand newHarness.
func callTurns(text string, calls ...fakeopenai.ToolCall) []fakeopenai.Reply {
	replies := make([]fakeopenai.Reply, 0, len(calls)+1)
	for _, c := range calls {
		replies = append(replies, fakeopenai.Call(c))
	}
	return append(replies, fakeopenai.Text(text))
}

// bashTurns is callTurns of bash calls with the given commands, whose ids
// are c1, c2, … in order.
func bashTurns(text string, commands ...string) []fakeopenai.Reply {
	calls := make([]fakeopenai.ToolCall, len(commands))
	for i, c := range commands {
		calls[i] = bash("c"+strconv.Itoa(i+1), c)
	}
	return callTurns(text, calls...)
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%q\ndoes not contain %q", got, w)
		}
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// waitGone polls until the process in pidFile is gone (or a zombie), with a deadline.
func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	pid := readPid(t, pidFile)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d from %s is still running", pid, pidFile)
}

// waitPid polls until pidFile holds a pid.
func waitPid(t *testing.T, pidFile string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			return readPid(t, pidFile)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", pidFile)
	return 0
}

func readPid(t *testing.T, pidFile string) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s: %v", pidFile, err)
	}
	return pid
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie has exited; only its parent has not reaped it yet.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return !(i >= 0 && i+2 < len(s) && s[i+2] == 'Z')
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
