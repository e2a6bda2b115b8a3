package agent_test

import (
	"testing"

	"github.com/askops/askops/agent"
)

// TestAskCarriesTheToolsEffect: each side-effect tool describes, from its
// own preparation, what an approver is shown: bash the command as it will
// run (printed back by the policy's parser, whatever spacing the model
// used, and whatever else the arguments hold), the file tools the path as
// the model named it and what goes into the file.
func TestAskCarriesTheToolsEffect(t *testing.T) {
	h := newHarness(t, callTurns("ok",
		call("c1", "bash", map[string]any{"command": "echo   hi", "timeout_seconds": 5}),
		call("c2", "write_file", map[string]any{"path": "conf/app.yaml", "content": "port: 80\n"}),
		call("c3", "edit_file", map[string]any{"path": "conf/app.yaml", "old_string": "80", "new_string": "81"}),
	), nil)
	h.approver.answer = answerWith(agent.Approved, "U1", "")
	h.run(t, agent.RunSpec{})
	want := []agent.Effect{
		{Kind: agent.EffectCommand, Command: "echo hi"},
		{Kind: agent.EffectWrite, Path: "conf/app.yaml", Content: "port: 80\n"},
		{Kind: agent.EffectEdit, Path: "conf/app.yaml", Old: "80", New: "81"},
	}
	asks := h.approver.asked()
	if len(asks) != len(want) {
		t.Fatalf("%d asks, want %d: %+v", len(asks), len(want), asks)
	}
	for i, w := range want {
		if asks[i].Call != w {
			t.Errorf("ask %d (%s) effect = %+v, want %+v", i, asks[i].Tool, asks[i].Call, w)
		}
	}
}
