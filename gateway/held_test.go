package gateway

import (
	"context"
	"encoding/json"
	"github.com/askops/askops/gateway/toolcall"
	"net/http"
	"net/http/httptrace"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// Hooks and long polls behave the same whether their connections are held
// (heldhttp) or they wait on their handlers: each case runs both ways, and
// checks which way it ran.
func bothWays(t *testing.T, run func(t *testing.T, s *stack)) {
	for _, unheld := range []bool{false, true} {
		name := "held"
		if unheld {
			name = "on its handler"
		}
		t.Run(name, func(t *testing.T) {
			s := newStack(t, stackOptions{unheld: unheld})
			run(t, s)
		})
	}
}

// heldWhileWaiting checks that the waiting request is held exactly when
// the stack holds requests.
func heldWhileWaiting(t *testing.T, s *stack) {
	t.Helper()
	if s.svc.cfg.Held == nil {
		return
	}
	testwait.For(t, "the waiting request held", func() bool { return s.svc.cfg.Held.Count() == 1 })
}

// longPoll starts token's long poll of Ask id through the API at srv and
// returns where its answer comes once the poll waits (held, where the
// stack holds requests).
func longPoll(t *testing.T, s *stack, srv, id, token string) <-chan reply {
	t.Helper()
	got := make(chan reply, 1)
	go func() { got <- call(t, "GET", srv+"/v1/asks/"+id+"?wait=60s", token, nil) }()
	heldWhileWaiting(t, s)
	return got
}

const deployHook = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`

func TestHookAnsweredByADecision(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		r := approvedHook(t, s, deployHook)
		if r.Status != 200 || !strings.Contains(string(r.Raw), `"behavior":"allow"`) {
			t.Errorf("hook answer: %d %s", r.Status, r.Raw)
		}
		if s.svc.cfg.Held != nil && s.svc.cfg.Held.Count() != 0 {
			t.Errorf("%d requests still held after the answer", s.svc.cfg.Held.Count())
		}
	})
}

// approvedHook posts hook to s's Claude Code endpoint, approves its Ask
// through the API once it is shown and held, and returns the hook's answer.
func approvedHook(t *testing.T, s *stack, hook string) reply {
	t.Helper()
	srv := apiServer(t, s)
	got := make(chan reply, 1)
	go func() { got <- call(t, "POST", srv.URL+"/v1/hooks/claude", askToken, hook) }()
	a := s.posted(t, t.Context())
	heldWhileWaiting(t, s)
	if r := call(t, "POST", srv.URL+"/v1/asks/"+a.ID+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("decide: %d %s", r.Status, r.Raw)
	}
	return <-got
}

// A hook whose agent stops waiting (Claude Code's timeout, the user's
// Esc) ends its Ask cancelled, saying so: it must not outlive its asker.
func TestHookWhoseAskerLeavesEndsItsAsk(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv := apiServer(t, s)
		ctx, leave := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/hooks/claude", strings.NewReader(deployHook))
			req.Header.Set("Authorization", "Bearer "+askToken)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		a := s.posted(t, t.Context())
		heldWhileWaiting(t, s)
		leave()
		if err := <-done; err == nil {
			t.Fatal("the hook request got an answer after it was cancelled")
		}
		var rec pending.Ask
		testwait.Within(t, 10*time.Second, "the Ask to end", func() bool {
			rec, _ = s.asks.Get(t.Context(), a.ID)
			_, ended := rec.Outcome()
			return ended
		})
		if rec.Status != pending.Status(pending.Cancelled) || rec.DecisionReason != pending.ReasonAskerGone {
			t.Errorf("the Ask of a gone hook: %s (%q), want cancelled: %s", rec.Status, rec.DecisionReason, pending.ReasonAskerGone)
		}
	})
}

func TestHookAnsweredAtShutdownEitherWay(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv := apiServer(t, s)
		got := make(chan reply, 1)
		go func() { got <- call(t, "POST", srv.URL+"/v1/hooks/claude", askToken, deployHook) }()
		s.posted(t, t.Context())
		heldWhileWaiting(t, s)
		s.svc.Stop()
		r := <-got
		if r.Status != 200 || !strings.Contains(string(r.Raw), `"behavior":"deny"`) || !strings.Contains(string(r.Raw), "cancelled") {
			t.Errorf("hook answer at shutdown: %d %s", r.Status, r.Raw)
		}
	})
}

// createAsk creates a pending Ask through the API and returns its id.
func createAsk(t *testing.T, srv string) string {
	t.Helper()
	r := call(t, "POST", srv+"/v1/asks", askToken, bashAsk("make deploy"))
	id, _ := r.Body["id"].(string)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK || id == "" {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return id
}

// postedAsk is an API server over s and one Ask made through it, pending
// and posted: the start of every long-poll test.
func postedAsk(t *testing.T, s *stack) (srv, id string) {
	t.Helper()
	srv = apiServer(t, s).URL
	id = createAsk(t, srv)
	s.posted(t, t.Context())
	return srv, id
}

func TestLongPollAnsweredByADecision(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv, id := postedAsk(t, s)
		got := longPoll(t, s, srv, id, askToken)
		if r := call(t, "POST", srv+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "deny", "reason": "not today"}); r.Status != 200 {
			t.Fatalf("decide: %d %s", r.Status, r.Raw)
		}
		r := <-got
		if r.Status != 200 || r.Body["status"] != "denied" || r.Body["id"] != id {
			t.Errorf("long poll answer: %d %s", r.Status, r.Raw)
		}
	})
}

func TestLongPollAnsweredWhenItsWaitIsOver(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv, id := postedAsk(t, s)
		r := call(t, "GET", srv+"/v1/asks/"+id+"?wait=1s", askToken, nil)
		if r.Status != 200 || r.Body["status"] != "pending" {
			t.Errorf("long poll after its wait: %d %s", r.Status, r.Raw)
		}
	})
}

// pollAndLeave long polls id with token and closes the connection once the
// poll waits, as a killed client's kernel does.
func pollAndLeave(t *testing.T, s *stack, srv, id, token string) {
	t.Helper()
	ctx, leave := context.WithCancel(t.Context())
	done := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(done)
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), "GET", srv+"/v1/asks/"+id+"?wait=60s", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-sent
	heldWhileWaiting(t, s)
	leave()
	<-done
	if s.svc.cfg.Held != nil {
		testwait.For(t, "the poll let go", func() bool { return s.svc.cfg.Held.Count() == 0 })
	}
}

// An onlooker's long poll (a token with scope decide, not the asker's):
// its client leaving ends the poll, not the Ask, and a new poll finds it
// still pending.
func TestLongPollWhoseOnlookerLeavesLeavesTheAsk(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv, id := postedAsk(t, s)
		pollAndLeave(t, s, srv, id, consoleToken)
		if r := call(t, "GET", srv+"/v1/asks/"+id, askToken, nil); r.Status != 200 || r.Body["status"] != "pending" {
			t.Errorf("after the onlooker's poll left: %d %s", r.Status, r.Raw)
		}
	})
}

// The asker's long poll closed before its answer (the asker killed, its
// connection dropped with it) ends the Ask cancelled, "the agent stopped
// waiting", at once: not when its lease lapses (here it never would: no
// sweep runs), so no decision in the meantime is recorded for a call
// nobody waits for.
func TestLongPollWhoseAskerLeavesEndsTheAsk(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv, id := postedAsk(t, s)
		pollAndLeave(t, s, srv, id, askToken)
		var rec pending.Ask
		testwait.For(t, "the Ask to end", func() bool {
			rec, _ = s.asks.Get(t.Context(), id)
			return rec.Status != pending.StatusPending
		})
		endedAskerGone(t, srv, rec)
	})
}

// endedAskerGone checks that rec, ended, is an Ask whose asker left:
// cancelled with pending.ReasonAskerGone, and a decision sent through the
// API at srv afterwards is refused naming that reason.
func endedAskerGone(t *testing.T, srv string, rec pending.Ask) {
	t.Helper()
	if rec.Status != pending.Status(pending.Cancelled) || rec.DecisionReason != pending.ReasonAskerGone {
		t.Errorf("the Ask of the asker that left is %s (%q), want cancelled: %s", rec.Status, rec.DecisionReason, pending.ReasonAskerGone)
	}
	r := call(t, "POST", srv+"/v1/asks/"+rec.ID+"/decision", consoleToken, map[string]any{"decision": "approve"})
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Raw), pending.ReasonAskerGone) {
		t.Errorf("approving after the asker left: %d %s", r.Status, r.Raw)
	}
}

// Only the asker keeps its Ask alive: once the asker stops polling, an
// onlooker reading the Ask (short polls, or a long poll held open) does
// not renew its lease, and the lease sweep ends it.
func TestOnlookerKeepsNoAskAlive(t *testing.T) {
	for _, poll := range []string{"short polls", "a long poll"} {
		t.Run(poll, func(t *testing.T) {
			s := newStack(t, stackOptions{leaseTTL: 200 * time.Millisecond})
			srv, id := postedAsk(t, s)
			if r := call(t, "GET", srv+"/v1/asks/"+id, askToken, nil); r.Status != 200 { // the asker's last poll: the lease starts
				t.Fatalf("asker's poll: %d %s", r.Status, r.Raw)
			}
			var long <-chan reply
			if poll == "a long poll" {
				long = longPoll(t, s, srv, id, consoleToken)
			}
			testwait.For(t, "the lease sweep to end the Ask nobody asks for", func() bool {
				if poll == "short polls" {
					call(t, "GET", srv+"/v1/asks/"+id, consoleToken, nil)
				}
				if _, err := s.asks.SweepLeases(t.Context()); err != nil {
					t.Fatal(err)
				}
				rec, _ := s.asks.Get(t.Context(), id)
				return rec.Status != pending.StatusPending
			})
			if poll == "a long poll" {
				if r := <-long; r.Status != 200 || r.Body["status"] != "cancelled" {
					t.Errorf("the onlooker's long poll: %d %s", r.Status, r.Raw)
				}
			}
		})
	}
}

func TestLongPollAnsweredAtShutdown(t *testing.T) {
	bothWays(t, func(t *testing.T, s *stack) {
		srv, id := postedAsk(t, s)
		got := longPoll(t, s, srv, id, askToken)
		s.svc.Stop()
		r := <-got
		if r.Status != 200 || r.Body["status"] != "cancelled" {
			t.Errorf("long poll at shutdown: %d %s", r.Status, r.Raw)
		}
	})
}

// A held Bash hook keeps its input without the command and builds it again
// for the answer: what an allow hands back must be what JudgedInput makes
// of the input as it came, whatever the input's shape.
func TestHeldInputRebuildsTheJudgedInput(t *testing.T) {
	for _, tc := range []struct{ tool, input string }{
		{"Bash", `{"command":"make deploy"}`},
		{"Bash", `{"command":"make   deploy  &&  echo '<done>'","description":"ship it","timeout":60000}`},
		{"Bash", `{"description":"d","command":"echo \"a\\tb\" \u00e9"}`},
		{"Bash", `{"cmd":"make deploy"}`},
		{"Bash", `{"command":["make","deploy"]}`},
		{"Bash", `{"command":"ls","command":"rm -rf /tmp/x"}`},
		{"Write", `{"file_path":"/tmp/a","content":"x"}`},
	} {
		input := json.RawMessage(tc.input)
		m := toolcall.Map(tc.tool, input, "/tmp")
		kept := keepInput(tc.tool, input, m.Shown.Command)
		want := claudeAnswerOf(hook.EventPermissionRequest, pending.Ask{Status: pending.Status(pending.Approved)}, tc.tool, input)
		got := claudeAnswerOf(hook.EventPermissionRequest, pending.Ask{Status: pending.Status(pending.Approved)}, tc.tool, kept.rebuild())
		if !sameJSON(t, want.HookSpecificOutput.Decision.UpdatedInput, got.HookSpecificOutput.Decision.UpdatedInput) {
			t.Errorf("%s %s: updatedInput %s, want %s", tc.tool, tc.input,
				got.HookSpecificOutput.Decision.UpdatedInput, want.HookSpecificOutput.Decision.UpdatedInput)
		}
		if tc.tool == "Bash" && kept.rest != nil && strings.Contains(string(kept.rest), "deploy") {
			t.Errorf("%s: the kept rest %s still holds the command", tc.input, kept.rest)
		}
	}
}

// sameJSON: a and b are the same JSON value (both absent counts).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// The allow of a held hook hands back the judged input with every other
// field the agent sent, as the hook waiting on its handler does.
func TestHookAllowHandsBackTheJudgedInput(t *testing.T) {
	const event = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash",` +
		`"tool_input":{"command":"make   deploy","description":"ship it","timeout":60000}}`
	bothWays(t, func(t *testing.T, s *stack) {
		r := approvedHook(t, s, event)
		var ans hook.Answer
		if err := json.Unmarshal(r.Raw, &ans); err != nil || ans.HookSpecificOutput.Decision == nil {
			t.Fatalf("hook answer: %d %s (%v)", r.Status, r.Raw, err)
		}
		want := json.RawMessage(`{"command":"make deploy","description":"ship it","timeout":60000}`)
		if in := ans.HookSpecificOutput.Decision.UpdatedInput; !sameJSON(t, in, want) {
			t.Errorf("updatedInput %s, want %s", in, want)
		}
	})
}

// A burst of held hooks is judged and recorded intakeLimit at a time: a
// hook beyond the limit records no Ask until a turn frees, then goes on.
func TestHeldHookIntakeWaitsItsTurn(t *testing.T) {
	s := newStack(t, stackOptions{})
	srv := apiServer(t, s)
	for range intakeLimit {
		s.svc.intake <- struct{}{}
	}
	got := make(chan reply, 1)
	go func() { got <- call(t, "POST", srv.URL+"/v1/hooks/claude", askToken, deployHook) }()
	// It waits held, its handler gone, not on a goroutine of its own.
	testwait.For(t, "the hook to be held while it waits for its turn", func() bool { return s.svc.cfg.Held.Count() == 1 })
	// Without the limit the Ask is recorded within milliseconds.
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if asks, err := s.asks.ListPending(t.Context(), pending.Filter{}); err != nil || len(asks) != 0 {
			t.Fatalf("with the intake full, a hook recorded %d Asks (%v)", len(asks), err)
		}
	}
	s.svc.leaveIntake() // one turn frees
	a := s.posted(t, t.Context())
	if r := call(t, "POST", srv.URL+"/v1/asks/"+a.ID+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("decide: %d %s", r.Status, r.Raw)
	}
	if r := <-got; r.Status != 200 || !strings.Contains(string(r.Raw), `"behavior":"allow"`) {
		t.Errorf("hook answer once its turn came: %d %s", r.Status, r.Raw)
	}
	if n := len(s.svc.intake); n != intakeLimit-1 {
		t.Errorf("the intake holds %d turns after the hook, want %d (its turn given back)", n, intakeLimit-1)
	}
}

// fillIntake takes every turn at the intake; the returned func gives them
// back.
func fillIntake(s *stack) (release func()) {
	for range intakeLimit {
		s.svc.intake <- struct{}{}
	}
	return func() {
		for range intakeLimit {
			s.svc.leaveIntake()
		}
	}
}

// A hook queued for the intake when the serve stops is answered with a
// denial at once: its connection closing unanswered would let Claude Code
// go ahead.
func TestQueuedHookIsDeniedWhenTheServeStops(t *testing.T) {
	s := newStack(t, stackOptions{})
	srv := apiServer(t, s)
	release := fillIntake(s)
	got := make(chan reply, 1)
	go func() { got <- call(t, "POST", srv.URL+"/v1/hooks/claude", askToken, deployHook) }()
	testwait.For(t, "the hook to be queued", func() bool { return s.svc.cfg.Held.Count() == 1 })
	s.svc.Stop()
	var r reply
	select {
	case r = <-got:
	case <-time.After(10 * time.Second): // it would be answered only once a turn frees
		release()
		t.Fatal("a queued hook was not answered when the serve stopped")
	}
	if r.Status != 200 || !strings.Contains(string(r.Raw), `"behavior":"deny"`) || !strings.Contains(string(r.Raw), errShutdown.Error()) {
		t.Fatalf("queued hook at shutdown: %d %s", r.Status, r.Raw)
	}
	release()
	if asks, err := s.asks.ListPending(t.Context(), pending.Filter{}); err != nil || len(asks) != 0 {
		t.Fatalf("the stopped serve recorded %d Asks for the queued hook (%v)", len(asks), err)
	}
}

// A hook whose agent left while it was queued is not judged when its turn
// comes: no Ask is recorded for a call nobody waits for.
func TestQueuedHookWhoseAgentLeftRecordsNoAsk(t *testing.T) {
	s := newStack(t, stackOptions{})
	srv := apiServer(t, s)
	release := fillIntake(s)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/hooks/claude", strings.NewReader(deployHook))
		req.Header.Set("Authorization", "Bearer "+askToken)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	testwait.For(t, "the hook to be queued", func() bool { return s.svc.cfg.Held.Count() == 1 })
	cancel()
	<-done
	testwait.For(t, "the agent's leaving to be seen", func() bool { return s.svc.cfg.Held.Count() == 0 })
	release()
	testwait.For(t, "the queue to drain", func() bool {
		s.svc.queueMu.Lock()
		defer s.svc.queueMu.Unlock()
		return len(s.svc.queued) == 0 && len(s.svc.intake) == 0
	})
	if evs, err := s.asks.(pending.AuditLog).AuditSince(t.Context(), time.Time{}); err != nil || len(evs) != 0 {
		t.Fatalf("%d audit events for a hook whose agent left (%v): %+v", len(evs), err, evs)
	}
}

// A hook's Ask deadline runs from the hook's request, not from its turn at
// the intake: the agent's own hook timeout (askops' deadline plus a
// margin) started when it sent the hook.
func TestQueuedHookDeadlineCountsTheQueue(t *testing.T) {
	s := newStack(t, stackOptions{timeout: time.Minute})
	srv := apiServer(t, s)
	release := fillIntake(s)
	got := make(chan reply, 1)
	go func() { got <- call(t, "POST", srv.URL+"/v1/hooks/claude", askToken, deployHook) }()
	testwait.For(t, "the hook to be queued", func() bool { return s.svc.cfg.Held.Count() == 1 })
	time.Sleep(1500 * time.Millisecond) // the queue the hook waits in
	release()
	a := s.posted(t, t.Context())
	if life := a.Deadline.Sub(a.CreatedAt); life > time.Minute-time.Second {
		t.Errorf("the Ask lives %s from its creation; want approvals.timeout less the 1.5 s queued", life)
	}
	if r := call(t, "POST", srv.URL+"/v1/asks/"+a.ID+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("decide: %d %s", r.Status, r.Raw)
	}
	if r := <-got; !strings.Contains(string(r.Raw), `"behavior":"allow"`) {
		t.Errorf("hook answer: %d %s", r.Status, r.Raw)
	}
}
