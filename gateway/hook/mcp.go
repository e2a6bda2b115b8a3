package hook

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPToolName is the permission-prompt tool: with the server registered as
// "askops", `claude -p --permission-prompt-tool mcp__askops__approval_prompt`.
const MCPToolName = "approval_prompt"

// MCPSession says which agent session an MCP server's calls belong to:
// Claude Code starts one server per session, so one server is one session.
type MCPSession struct {
	ID    string // the session id grants and the Slack thread attach to
	Cwd   string // where the agent works (the server's working directory)
	Agent string // shown to approvers; default "Claude Code"
	By    string // who runs the agent
	// Judged is a call's input as askops judged it (toolcall's
	// JudgedInput), handed back with an allow as updatedInput; nil hands
	// the input back as it came.
	Judged func(tool string, input json.RawMessage) json.RawMessage
}

// promptInput is what Claude Code sends the permission-prompt tool.
type promptInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
}

// promptAnswer is what the tool answers, as one text content.
type promptAnswer struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

var promptSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "tool_name": {"type": "string", "description": "the tool Claude Code wants to run"},
    "input": {"type": "object", "description": "the tool's input"},
    "tool_use_id": {"type": "string"}
  },
  "required": ["tool_name", "input"]
}`)

// NewMCPServer returns an MCP server with one tool, approval_prompt, that
// takes each call through s and answers allow (with the input unchanged)
// or deny with why. It never answers with an error: an MCP error would not
// be a decision, so every failure is a deny.
func NewMCPServer(s Settler, sess MCPSession, version string) *mcp.Server {
	if sess.Agent == "" {
		sess.Agent = AgentClaude
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "askops", Version: version}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        MCPToolName,
		Description: "Asks askops (its policy, then a human in Slack) whether a tool call may run.",
		InputSchema: promptSchema,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return promptResult(answerPrompt(ctx, s, sess, req.Params.Arguments)), nil
	})
	return srv
}

func answerPrompt(ctx context.Context, s Settler, sess MCPSession, args json.RawMessage) promptAnswer {
	var in promptInput
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &in); err != nil || in.ToolName == "" || json.Unmarshal(in.Input, &obj) != nil || obj == nil {
		return promptAnswer{Behavior: "deny", Message: DenyMessage(refused("askops could not read the permission request (want tool_name and an input object)"))}
	}
	// bot mcp runs where the agent's files are (Claude Code starts it):
	// paths are judged where they resolve (resolve.go).
	a := s.Settle(ctx, ResolvePaths(Call{SessionID: sess.ID, Agent: sess.Agent, Tool: in.ToolName, Input: in.Input, Cwd: sess.Cwd, By: sess.By}))
	if a.Approves() {
		judged := in.Input
		if sess.Judged != nil {
			judged = sess.Judged(in.ToolName, in.Input)
		}
		return promptAnswer{Behavior: "allow", UpdatedInput: judged}
	}
	return promptAnswer{Behavior: "deny", Message: DenyMessage(a)}
}

func promptResult(ans promptAnswer) *mcp.CallToolResult {
	b, _ := json.Marshal(ans)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// ServeMCPStdio runs NewMCPServer's server on a stdio pair until the client
// hangs up or ctx ends; out is never closed.
func ServeMCPStdio(ctx context.Context, s Settler, sess MCPSession, version string, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	return NewMCPServer(s, sess, version).Run(ctx, t)
}

// nopWriteCloser lets the MCP transport write to stdout without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
