package agent_test

import (
	"strings"
	"testing"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/policy"
)

// The policy judges, the approver reads and bash runs one identical text:
// the command printed back from the policy's parse. bash shows the text it
// was given in $BASH_EXECUTION_STRING, so the command prints what ran.
func TestBashRunsTheCanonicalText(t *testing.T) {
	raw := "echo   \"$BASH_EXECUTION_STRING\"    # a comment the approver would read"
	canonical, err := policy.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	if canonical == raw {
		t.Fatalf("canonical text %q equals the raw text; the test shows nothing", canonical)
	}
	h := newHarness(t, bashTurns("done", raw), nil)
	h.approver.answer = answerWith(agent.Approved, "U42", "")
	h.run(t, agent.RunSpec{})

	if judged := h.policy.judged(); len(judged) != 1 || judged[0].Command != canonical {
		t.Fatalf("policy judged %+v, want exactly %q", judged, canonical)
	}
	asks := h.approver.asked()
	if len(asks) != 1 || asks[0].Summary != canonical {
		t.Fatalf("asks %+v, want one showing %q", asks, canonical)
	}
	got := toolResults(t, h.srv, 1)["c1"]
	if first, _, _ := strings.Cut(got, "\n"); first != canonical {
		t.Errorf("bash ran %q, want the canonical text %q (tool result %q)", first, canonical, got)
	}
}

// A command where shells disagree cannot be printed back faithfully: it is
// run (if a human approves) exactly as shown, and the policy never allows it.
func TestBashKeepsTextWithUnsafeCharacters(t *testing.T) {
	raw := "echo ran # note \\\necho second"
	h := newHarness(t, bashTurns("done", raw), nil)
	h.approver.answer = answerWith(agent.Approved, "U42", "")
	h.run(t, agent.RunSpec{})
	if judged := h.policy.judged(); len(judged) != 1 || judged[0].Command != raw {
		t.Fatalf("policy judged %+v, want the raw text %q", judged, raw)
	}
	if asks := h.approver.asked(); len(asks) != 1 || asks[0].Summary != raw {
		t.Fatalf("asks %+v, want one showing %q", asks, raw)
	}
	mustContain(t, toolResults(t, h.srv, 1)["c1"], "ran\nsecond\n")
}
