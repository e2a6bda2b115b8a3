package gateway

import (
	"encoding/json"
	"github.com/askops/askops/gateway/toolcall"
	"github.com/askops/askops/sessions"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// connectMCP serves approval_prompt on s over the SDK's in-memory transport
// and returns a go-sdk client session on it.
func connectMCP(t *testing.T, s hook.Settler) *mcp.ClientSession {
	t.Helper()
	return connectMCPAs(t, s, hook.MCPSession{ID: "mcp-sess", Cwd: "/home/ana/src/api", By: "ana"})
}

// connectMCPAs is connectMCP in sess, judged as bot mcp judges.
func connectMCPAs(t *testing.T, s hook.Settler, sess hook.MCPSession) *mcp.ClientSession {
	t.Helper()
	sess.Judged = toolcall.JudgedInput
	srv := hook.NewMCPServer(s, sess, "test")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code-test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func promptText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// The permission-prompt tool as Claude Code calls it: listed, then called
// with {tool_name, input, tool_use_id}; a human's approval answers allow
// with the input unchanged, a denial deny with why, and input it cannot
// read deny too (never an MCP error, which would be no decision).
func TestMCPApprovalPrompt(t *testing.T) {
	s := newStack(t, stackOptions{})
	cs := connectMCP(t, s.svc.Settler())
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != hook.MCPToolName {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	input := map[string]any{"command": "git push origin main", "description": "push"}
	args := map[string]any{"tool_name": "Bash", "input": input, "tool_use_id": "toolu_01"}

	for _, tc := range []struct {
		name    string
		outcome pending.Outcome
		want    string
	}{
		{"approve", pending.Approved, `{"behavior":"allow","updatedInput":{"command":"git push origin main","description":"push"}}`},
		{"deny", pending.Denied, `{"behavior":"deny","message":"Denied by UAPPROVER1 in Slack: no. The action was not performed. Do not retry this call; ask the user."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: hook.MCPToolName, Arguments: args})
				if err != nil {
					t.Error(err)
				}
				got <- res
			}()
			a := s.posted(t, ctx)
			if sessions.Shown(a.SessionID) != "mcp-sess" || a.Cwd != "/home/ana/src/api" || a.Tool != "bash" {
				t.Errorf("ask: %+v", a.Request)
			}
			reason := ""
			if tc.outcome == pending.Denied {
				reason = "no"
			}
			if _, err := s.asks.Decide(ctx, a.ID, tc.outcome, approverID, reason); err != nil {
				t.Fatal(err)
			}
			res := <-got
			if res == nil {
				return
			}
			var gotJSON, wantJSON any
			text := promptText(t, res)
			_ = json.Unmarshal([]byte(text), &gotJSON)
			_ = json.Unmarshal([]byte(tc.want), &wantJSON)
			g, _ := json.Marshal(gotJSON)
			w, _ := json.Marshal(wantJSON)
			if string(g) != string(w) || res.IsError {
				t.Errorf("answer %s, want %s", text, tc.want)
			}
		})
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: hook.MCPToolName, Arguments: map[string]any{"tool_name": "Bash", "input": "ls"}})
	if err != nil {
		// The SDK validates against the schema: a refusal, not an allow.
		if !strings.Contains(err.Error(), "input") {
			t.Errorf("bad input: %v", err)
		}
		return
	}
	if text := promptText(t, res); !strings.Contains(text, `"behavior":"deny"`) {
		t.Errorf("bad input answered %s", text)
	}
}
