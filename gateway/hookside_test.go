package gateway

import (
	"context"
	"encoding/json"
	"github.com/askops/askops/gateway/toolcall"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// runHook answers one hook event read from in through s as `bot hook`
// does (its answer's updatedInput as judged), writing the answer to out,
// and returns the exit code.
func runHook(ctx context.Context, agent, by string, in io.Reader, out, errOut io.Writer, s hook.Settler) int {
	return hook.Run{Agent: agent, By: by, In: in, Out: out, Err: errOut, Open: hook.Open(s), Judged: toolcall.JudgedInput}.Answer(ctx)
}

// mcpBehavior is what approval_prompt answers (allow or deny) to args,
// asked in sess through s as `bot mcp` asks.
func mcpBehavior(t *testing.T, s hook.Settler, sess hook.MCPSession, args json.RawMessage) string {
	t.Helper()
	cs := connectMCPAs(t, s, sess)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: hook.MCPToolName, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Behavior string `json:"behavior"`
	}
	_ = json.Unmarshal([]byte(promptText(t, res)), &ans)
	return ans.Behavior
}

// The hook package speaks pending's vocabulary: every outcome and reason
// it words reads the same on both sides of the API.
func TestHookWordsPendingsOutcomes(t *testing.T) {
	for _, o := range pending.Outcomes() {
		a := answerOf(pending.Ask{Status: pending.Status(o), DecidedBy: "U_ANA"})
		if a.Approves() != o.Approves() || !a.Ended() {
			t.Errorf("%s: approves %v, ended %v", o, a.Approves(), a.Ended())
		}
	}
	if answerOf(pending.Ask{Status: pending.StatusPending}).Ended() {
		t.Error("a pending Ask reads as ended")
	}
	if hook.ReasonAskerGone != pending.ReasonAskerGone || hook.DeadlineReason != pending.DeadlineReason {
		t.Errorf("reasons: %q %q", hook.ReasonAskerGone, hook.DeadlineReason)
	}
}
