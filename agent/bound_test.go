package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/bound"
	"github.com/askops/askops/policy"
)

// newBound is a real bound over this kernel (or, with none, a bound that
// finds no support, in mode).
func newBound(t *testing.T, mode bound.Mode, sup bound.Support) *bound.Bound {
	t.Helper()
	b, err := bound.New(bound.Config{Mode: mode, Support: sup, Writable: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gitWorkspace(t *testing.T, ws string) {
	t.Helper()
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
}

func resultOf(t *testing.T, ev *events, callID string) agent.Event {
	t.Helper()
	for _, e := range ev.all() {
		if e.Kind == agent.EventToolResult && e.CallID == callID {
			return e
		}
	}
	t.Fatalf("no tool result for %s; events %v", callID, ev.kinds())
	return agent.Event{}
}

// allowFirstThenAsk is a policy that allows the first call it judges, for
// the reason allowed, and asks for every later one: a run whose first call
// runs on the policy's word (bounded) and whose second runs on a person's.
func allowFirstThenAsk(allowed string) func(policy.Call) policy.Verdict {
	n := 0
	return func(policy.Call) policy.Verdict {
		n++
		if n == 1 {
			return policy.Verdict{Decision: policy.Allow, Reason: allowed}
		}
		return policy.Verdict{Decision: policy.Ask, Reason: "asks"}
	}
}

// A command the policy allowed runs inside the bound: its write into .git
// fails with the system's error, its workspace write lands, and its
// result says it was bounded. The same command approved by a person runs
// as approved, and says so.
func TestAllowedCommandsRunBoundedApprovedOnesAsApproved(t *testing.T) {
	sup := bound.Probe(t.Context(), "")
	if !sup.Enough() || !sup.Namespaces {
		t.Fatalf("this machine offers no whole bound: %s (%s)", sup, sup.Why)
	}
	cmd := "echo bounded > made.txt; echo x > .git/HEAD"
	h := newHarness(t, bashTurns("done", cmd, cmd), func(c *agent.Config) { c.Bound = newBound(t, bound.Required, sup) })
	gitWorkspace(t, h.ws)
	h.policy.decide = allowFirstThenAsk("the rules allow it")
	h.approver.answer = answerWith(agent.Approved, "U_ANA", "")
	res, ev := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("run: %+v", res)
	}
	first := resultOf(t, ev, "c1")
	mustContain(t, first.Text, "Read-only file system", "[exit code: 1]")
	if want := "yes (" + sup.String() + ")"; first.Bounded != want {
		t.Errorf("bounded %q, want %q", first.Bounded, want)
	}
	second := resultOf(t, ev, "c2")
	if second.Bounded != "no, approved by U_ANA" || strings.Contains(second.Text, "Read-only") {
		t.Errorf("approved call: bounded %q, output %q; want it run as approved", second.Bounded, second.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, ".git", "HEAD")); string(b) != "x\n" {
		t.Errorf(".git/HEAD %q: the approved call should have written it", b)
	}
	asks := h.approver.asked()
	if len(asks) != 1 || !strings.Contains(asks[0].Reason, "Bound: "+sup.String()) {
		t.Errorf("the Ask does not name the bound: %+v", asks)
	}
}

// An agent's settings an allowed command makes at the workspace's top do
// not stay, and the command's result tells the model so.
func TestBoundedCommandsSettingsMovedAside(t *testing.T) {
	sup := bound.Probe(t.Context(), "")
	if !sup.Enough() || !sup.Namespaces {
		t.Fatalf("this machine offers no whole bound: %s (%s)", sup, sup.Why)
	}
	b, err := bound.New(bound.Config{Support: sup, Writable: []string{}, KeepNames: policy.SettingsName})
	if err != nil {
		t.Fatal(err)
	}
	cmd := `mkdir .claude && echo '{"disableAllHooks":true}' > .claude/settings.json`
	h := newHarness(t, bashTurns("done", cmd), func(c *agent.Config) { c.Bound = b })
	h.policy.decide = allowFirstThenAsk("the rules allow it")
	res, ev := h.run(t, agent.RunSpec{})
	if res.Status != agent.StatusFinished {
		t.Fatalf("run: %+v", res)
	}
	mustContain(t, resultOf(t, ev, "c1").Text, "[exit code: 0]", "[askops moved .claude to .claude.askops-moved-")
	if _, err := os.Lstat(filepath.Join(h.ws, ".claude")); err == nil {
		t.Error(".claude stayed at the workspace's top")
	}
}

// Where the kernel offers no bound, mode required turns an allowed command
// into an Ask that says why; best-effort runs it unbounded and warns on
// every Ask.
func TestNoBoundRequiredAsksBestEffortWarns(t *testing.T) {
	none := bound.Support{Why: "a kernel without Landlock"}
	for _, tc := range []struct {
		mode      bound.Mode
		asks      int
		bounded   string
		reasonHas string
	}{
		{bound.Required, 2, "no, approved by U_BO", "no OS bound is available here (none (a kernel without Landlock)) and agent.bound.mode is required"},
		{bound.BestEffort, 1, "no (none (a kernel without Landlock))", "Warning: bound none"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			h := newHarness(t, bashTurns("done", "echo one", "echo two"), func(c *agent.Config) { c.Bound = newBound(t, tc.mode, none) })
			h.policy.decide = allowFirstThenAsk("the rules allow echo")
			h.approver.answer = answerWith(agent.Approved, "U_BO", "")
			res, ev := h.run(t, agent.RunSpec{})
			if res.Status != agent.StatusFinished {
				t.Fatalf("run: %+v", res)
			}
			asks := h.approver.asked()
			if len(asks) != tc.asks {
				t.Fatalf("%d Asks, want %d: %+v", len(asks), tc.asks, asks)
			}
			mustContain(t, asks[0].Reason, tc.reasonHas)
			if got := resultOf(t, ev, "c1").Bounded; got != tc.bounded {
				t.Errorf("first call bounded %q, want %q", got, tc.bounded)
			}
		})
	}
}
