package slackui

import (
	"strings"
	"testing"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// approveForSession has approverA approve wa for its session, and returns a
// policy engine over w's grants to judge the session's next calls with.
func approveForSession(t *testing.T, w *world, wa *waiting) *policy.Engine {
	t.Helper()
	w.click(wa, approverA, ActionApproveSession)
	if got := wa.result(t); got.Status != pending.Status(pending.ApprovedSession) {
		t.Fatalf("got %s", got.Status)
	}
	engine, err := policy.New(policy.Config{Grants: w.grants})
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

// The store keeps a command's secrets redacted (pending.atRest), so the
// Ask read back from it is not the exact call. "Approve for session" must
// still cover the identical call, with its secret: the waiting process
// records the grant from the exact request it holds in memory.
func TestApproveForSessionOnACommandWithASecret(t *testing.T) {
	const command = "gh api -H 'Authorization: token ghp_hunter2secret0123456789abcdef' /user"
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-secret", "sess-secret", command))
	stored, err := w.asks.Get(t.Context(), wa.id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored.Args+stored.Summary, "hunter2secret") {
		t.Fatalf("the store keeps the secret: %q", stored.Summary)
	}
	engine := approveForSession(t, w, wa)
	call := func(cmd string) policy.Call {
		return policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: cmd, Cwd: "/ws/app", Workspace: "/ws", SessionID: "sess-secret"}
	}
	if v := engine.Evaluate(t.Context(), call(command)); v.Decision != policy.Allow || v.Grant == "" {
		t.Errorf("identical call: %s (%s), want allowed by the session grant", v.Decision, v.Reason)
	}
	if v := engine.Evaluate(t.Context(), call(strings.Replace(command, "hunter2secret", "hunter3secret", 1))); v.Decision != policy.Ask {
		t.Errorf("call with another password: %s (%s), want ask", v.Decision, v.Reason)
	}
}
