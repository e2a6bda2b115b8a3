package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/testwait"
)

// parkingApprover keeps each ask until the test answers it, as the round
// trip keeps a parked Ask: no goroutine waits.
type parkingApprover struct {
	mu    sync.Mutex
	asked []parkedAsk
}

type parkedAsk struct {
	ctx  context.Context
	req  agent.Request
	done func(agent.Decision)
}

func (p *parkingApprover) Approve(ctx context.Context, req agent.Request, done func(agent.Decision)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, parkedAsk{ctx, req, done})
}

func (p *parkingApprover) parked() []parkedAsk {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]parkedAsk(nil), p.asked...)
}

// askThenAnswer is a model asking each run for one bash call (touch the
// file named in its task) and answering "done" once it has a result.
func askThenAnswer(_ int, req openai.ChatCompletionRequest) fakeopenai.Reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == openai.ChatMessageRoleTool {
		return fakeopenai.Text("done")
	}
	return fakeopenai.Call(bash("c1", "touch "+req.Messages[1].Content))
}

// Runs waiting for their human hold no goroutine,
// and each goes on from its decision.
func TestRunsWaitingForTheirHumanHoldNoGoroutine(t *testing.T) {
	p := &parkingApprover{}
	h := newHarness(t, nil, func(c *agent.Config) { c.Approver = p })
	h.srv.Then(askThenAnswer)
	const runs = 50
	before := runtime.NumGoroutine()
	started := make([]*agent.Run, runs)
	for i := range runs {
		started[i] = h.runner.Start(t.Context(), agent.RunSpec{Task: fmt.Sprintf("marker-%d", i)}, nil)
	}
	testwait.For(t, "every run to ask", func() bool { return len(p.parked()) == runs })
	// Idle model connections close in their own time; blocked runs would
	// be 50 goroutines more however long one waits.
	testwait.For(t, "the runs' goroutines to be gone", func() bool { return runtime.NumGoroutine()-before < runs/2 })
	for _, a := range p.parked() {
		go a.done(agent.Decision{AskID: "ask-" + a.req.RunID, Outcome: agent.Approved, By: "U_ANA"})
	}
	for i, run := range started {
		if res := run.Wait(); res.Status != agent.StatusFinished || res.Answer != "done" {
			t.Fatalf("run %d: %+v", i, res)
		}
		if !exists(filepath.Join(h.ws, fmt.Sprintf("marker-%d", i))) {
			t.Fatalf("run %d: the approved command did not run", i)
		}
	}
}

// A run stopped while parked ends cancelled: the Ask's context ends (the
// round trip ends the Ask cancelled and answers), and nothing runs.
func TestAParkedRunStoppedEndsCancelled(t *testing.T) {
	p := &parkingApprover{}
	h := newHarness(t, nil, func(c *agent.Config) { c.Approver = p })
	h.srv.Then(askThenAnswer)
	run := h.runner.Start(t.Context(), agent.RunSpec{ID: "r-park", Task: "marker"}, nil)
	testwait.For(t, "the run to ask", func() bool { return len(p.parked()) == 1 })
	h.runner.Stop("r-park")
	a := p.parked()[0]
	<-a.ctx.Done()
	a.done(agent.Decision{AskID: "ask-1", Outcome: agent.Cancelled, Reason: "the run was stopped"})
	if res := run.Wait(); res.Status != agent.StatusCancelled || !errors.Is(res.Err, agent.ErrStopped) {
		t.Fatalf("result %+v", res)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Error("the command ran")
	}
}

// An approver answering something that is no decision fails closed.
func TestAParkedRunsUnknownAnswerIsUnavailable(t *testing.T) {
	p := &parkingApprover{}
	h := newHarness(t, nil, func(c *agent.Config) { c.Approver = p })
	h.srv.Then(askThenAnswer)
	ev := newEvents()
	run := h.runner.Start(t.Context(), agent.RunSpec{Task: "marker"}, ev.record)
	testwait.For(t, "the run to ask", func() bool { return len(p.parked()) == 1 })
	p.parked()[0].done(agent.Decision{Outcome: "pending"})
	if res := run.Wait(); res.Status != agent.StatusFinished {
		t.Fatalf("result %+v", res)
	}
	if exists(filepath.Join(h.ws, "marker")) {
		t.Error("the command ran on an answer that was no decision")
	}
	if d := ev.all()[ev.index(agent.EventDecided, "c1")]; d.Outcome != agent.Unavailable {
		t.Errorf("decided %+v, want unavailable", d)
	}
}
