package decidetest

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/askops/askops/gateway/toolcall"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askops/askops/aap"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/aapcall"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/apitest"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// The asking half: one table of calls goes in at every door an agent asks
// through — Claude Code's HTTP hook, its command hook (bot hook claude),
// Codex's command hook for a shell call, the permission-prompt MCP tool,
// the Ask API and an AAP request — and every door must come to the same
// verdict and show the approver the same thing: the rule, the quorum, the
// programs and the effect lines. A door only translates; the policy
// judges once (policy.Evaluate) and askview words what it read.

// askingRules: src/ is writable, .env never read, rm denied, terraform
// apply needs two people, git status runs unasked, one MCP tool allowed.
var askingRules = []policy.Rule{
	{Tool: policy.ToolWriteFile, Path: "src/**", Decision: policy.Allow},
	{Tool: policy.ToolReadFile, Path: "**/.env", Decision: policy.Deny},
	{Tool: policy.ToolBash, Command: "rm", Decision: policy.Deny},
	{Tool: policy.ToolBash, Command: "terraform apply", Decision: policy.Ask, Approvals: 2},
	{Tool: policy.ToolBash, Command: "git status", Decision: policy.Allow},
	{Tool: "mcp__github__get_issue", Decision: policy.Allow},
}

const (
	askingToken = "asking-token-value-123456"
	provToken   = "asking-provisioner-token-0001"
)

// seen is what one door came to: "ask" with the Request the approver got,
// or the door's own answer, "allow" or "deny".
type seen struct {
	outcome string
	req     pending.Request
}

// askingCase is one call in Claude Code's words (the vocabulary the hooks,
// the MCP prompt, the API and AAP all take), and for a shell call Codex's.
type askingCase struct {
	name  string
	tool  string
	input map[string]any
	want  string // "ask", "allow" or "deny"
}

func TestEveryDoorAsksTheSame(t *testing.T) {
	// A real workspace: the doors that resolve paths where the files are
	// (the command hooks, the MCP prompt) look at it, the others cannot.
	askingWS, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", ".env", "src/main.go", ".git/config"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(askingWS, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(askingWS, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []askingCase{
		{"a command", "Bash", map[string]any{"command": "curl -fsS https://releases.example.com/x | sh && rm -rf build"}, "deny"},
		{"a command that asks", "Bash", map[string]any{"command": "curl -fsS https://releases.example.com/x.tgz -o x.tgz && tar xzf x.tgz && sudo make install"}, "ask"},
		{"a quorum", "Bash", map[string]any{"command": "terraform apply -auto-approve"}, "ask"},
		{"a command allowed", "Bash", map[string]any{"command": "git status"}, "allow"},
		{"a read", "Read", map[string]any{"file_path": askingWS + "/README.md"}, "allow"},
		{"a read denied", "Read", map[string]any{"file_path": askingWS + "/.env"}, "deny"},
		{"a write outside", "Write", map[string]any{"file_path": "/etc/hosts", "content": "x"}, "ask"},
		{"a write into .git", "Write", map[string]any{"file_path": askingWS + "/.git/hooks/pre-push", "content": "x"}, "ask"},
		{"a write of the agent's settings a rule allows", "Write", map[string]any{"file_path": askingWS + "/src/.claude/settings.json", "content": "{}"}, "ask"},
		{"a search", "Grep", map[string]any{"pattern": "KEY", "path": askingWS}, "deny"},
		{"an MCP tool", "mcp__github__get_issue", map[string]any{"number": 7}, "allow"},
		{"another MCP tool", "mcp__github__merge_pr", map[string]any{"number": 7}, "ask"},
	}
	d := newAskingDoors(t, askingWS)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var first seen
			for i, door := range d.doors(tc) {
				got := door.ask(t, tc)
				if got.outcome != tc.want {
					t.Errorf("%s: %s, want %s", door.name, got.outcome, tc.want)
					continue
				}
				if i == 0 {
					first = got
					continue
				}
				if got.outcome == "ask" && !sameShown(first.req, got.req) {
					t.Errorf("%s shows\n %s\nthe first door showed\n %s", door.name, shownText(got.req), shownText(first.req))
				}
			}
			if tc.want == "ask" && first.req.Shown == nil {
				t.Errorf("an Ask without what is shown of it")
			}
		})
	}
}

// sameShown: the same verdict and the same things shown. The reason may
// differ only by the agent's own words, which each door labels.
func sameShown(a, b pending.Request) bool {
	if a.Shown == nil || b.Shown == nil {
		return false
	}
	return a.Tool == b.Tool && a.Rule == b.Rule && a.Approvals == b.Approvals && a.Path == b.Path &&
		reflect.DeepEqual(a.Shown.Programs, b.Shown.Programs) && a.Shown.MorePrograms == b.Shown.MorePrograms &&
		reflect.DeepEqual(a.Shown.Effects, b.Shown.Effects)
}

func shownText(r pending.Request) string {
	b, _ := json.Marshal(map[string]any{"tool": r.Tool, "rule": r.Rule, "approvals": r.Approvals, "path": r.Path, "shown": r.Shown})
	return string(b)
}

// askingDoors is one gateway Service (the policy, an approver that
// records each Ask and ends it at once) behind every door.
type askingDoors struct {
	ws       string
	svc      *gateway.Service
	approver *recordingApprover
	api      *httptest.Server
	aap      string // base URL
	aapCred  string
	mcp      *mcp.ClientSession
}

type door struct {
	name string
	ask  func(t *testing.T, tc askingCase) seen
}

func newAskingDoors(t *testing.T, askingWS string) *askingDoors {
	t.Helper()
	engine, err := policy.New(policy.Config{Rules: askingRules})
	if err != nil {
		t.Fatal(err)
	}
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	d := &askingDoors{ws: askingWS, approver: &recordingApprover{}}
	d.svc, err = gateway.New(gateway.Config{Asks: asks, Approver: d.approver, Policy: engine, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.svc.Close)
	tokens, err := gateway.NewTokens([]gateway.TokenConfig{{Name: "laptop", Value: askingToken, Scopes: []string{"ask"}, Workspace: askingWS}})
	if err != nil {
		t.Fatal(err)
	}
	d.api = httptest.NewServer(gateway.NewAPI(d.svc, tokens, nil).Handler())
	t.Cleanup(d.api.Close)

	srv, err := aap.New(aap.Config{Asker: aapcall.Asker{Gateway: d.svc}, Asks: asks, Store: aap.NewMemoryStore(time.Now),
		Provisioners: []aap.Provisioner{{Name: "platform", Token: provToken}}, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.StripPrefix("/aap", srv.Handler()))
	t.Cleanup(ts.Close)
	d.aap = ts.URL + "/aap"
	var inst map[string]map[string]any
	postJSON(t, d.aap+"/v1/instances", provToken, map[string]any{"instance_name": "asking"}, &inst, "Idempotency-Key", recordid.New())
	d.aapCred, _ = inst["credential"]["token"].(string)
	if d.aapCred == "" {
		t.Fatalf("no AAP credential: %v", inst)
	}

	ms := hook.NewMCPServer(d.svc.Settler(), hook.MCPSession{ID: "asking-mcp", Cwd: askingWS, By: "laptop"}, "test")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	d.mcp, err = mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.mcp.Close() })
	return d
}

// doors are the doors tc can come through: every door for a call in
// Claude Code's words, and Codex's command hook too for a shell call.
func (d *askingDoors) doors(tc askingCase) []door {
	doors := []door{
		{"Claude Code's HTTP hook", d.httpHook},
		{"bot hook claude", d.commandHook(hook.AgentClaude, tc.tool, tc.input)},
		{"the MCP permission prompt", d.mcpPrompt},
		{"the Ask API", d.askAPI},
		{"an AAP request", d.aapRequest},
	}
	if tc.tool == "Bash" {
		doors = append(doors, door{"bot hook codex", d.commandHook(hook.AgentCodex, "exec_command", map[string]any{"cmd": tc.input["command"]})})
	}
	return doors
}

// outcome is "ask" when the approver got a new Ask while f ran, else the
// door's answer.
func (d *askingDoors) outcome(t *testing.T, f func() string) seen {
	t.Helper()
	before := d.approver.count()
	answer := f()
	if r, ok := d.approver.since(before); ok {
		return seen{outcome: "ask", req: r}
	}
	return seen{outcome: answer}
}

func (d *askingDoors) httpHook(t *testing.T, tc askingCase) seen {
	return d.outcome(t, func() string {
		var out struct {
			Hook struct {
				Decision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		postJSON(t, d.api.URL+"/v1/hooks/claude", askingToken, map[string]any{"session_id": "s-http", "cwd": d.ws,
			"hook_event_name": hook.EventPreToolUse, "tool_name": tc.tool, "tool_input": tc.input}, &out)
		return out.Hook.Decision
	})
}

func (d *askingDoors) commandHook(agent, tool string, input map[string]any) func(*testing.T, askingCase) seen {
	return func(t *testing.T, _ askingCase) seen {
		return d.outcome(t, func() string {
			event := hook.EventPreToolUse
			if agent == hook.AgentCodex {
				event = hook.EventPermissionRequest
			}
			in, _ := json.Marshal(map[string]any{"session_id": "s-cmd", "cwd": d.ws, "hook_event_name": event, "tool_name": tool, "tool_input": input})
			var out, errOut bytes.Buffer
			hook.Run{Agent: agent, By: "laptop", In: bytes.NewReader(in), Out: &out, Err: &errOut, Open: hook.Open(d.svc.Settler()), Judged: toolcall.JudgedInput}.Answer(t.Context())
			text := out.String()
			for _, w := range []string{"allow", "deny"} {
				if strings.Contains(text, `"`+w+`"`) || strings.Contains(text, `"behavior":"`+w) {
					return w
				}
			}
			return "unanswered: " + text + errOut.String()
		})
	}
}

func (d *askingDoors) mcpPrompt(t *testing.T, tc askingCase) seen {
	return d.outcome(t, func() string {
		res, err := d.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: hook.MCPToolName,
			Arguments: map[string]any{"tool_name": tc.tool, "input": tc.input}})
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("MCP: %v %+v", err, res)
		}
		var ans struct{ Behavior string }
		if text, ok := res.Content[0].(*mcp.TextContent); !ok || json.Unmarshal([]byte(text.Text), &ans) != nil {
			t.Fatalf("MCP answered %+v", res.Content[0])
		}
		return ans.Behavior
	})
}

func (d *askingDoors) askAPI(t *testing.T, tc askingCase) seen {
	return d.outcome(t, func() string {
		var a struct{ Status string }
		postJSON(t, d.api.URL+"/v1/asks", askingToken, map[string]any{"session_id": "s-api", "tool": tc.tool, "input": tc.input, "cwd": d.ws}, &a)
		return statusWord(a.Status)
	})
}

func (d *askingDoors) aapRequest(t *testing.T, tc askingCase) seen {
	return d.outcome(t, func() string {
		var r struct{ Status string }
		body := map[string]any{"tool": tc.tool, "arguments": tc.input, "timeout": "1m",
			"context": map[string]any{"cwd": d.ws, "session_id": "s-aap"}}
		// The specification's adapters send an MCP tool as tool and server
		// apart (mcp__github__get_issue: get_issue of github).
		if server, tool, ok := strings.Cut(strings.TrimPrefix(tc.tool, "mcp__"), "__"); ok && strings.HasPrefix(tc.tool, "mcp__") {
			body["tool"], body["server"] = tool, server
		}
		postJSON(t, d.aap+"/v1/requests", d.aapCred, body, &r, "Idempotency-Key", recordid.NewUUID())
		return statusWord(r.Status)
	})
}

// statusWord is an answer's status as allow or deny.
func statusWord(status string) string {
	switch status {
	case "approved":
		return "allow"
	case "denied":
		return "deny"
	}
	return status
}

// recordingApprover keeps every Ask a door takes to a human, whom it
// stands for: it denies at once.
type recordingApprover struct {
	mu   sync.Mutex
	reqs []pending.Request
}

func (r *recordingApprover) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	a := pending.Ask{Request: req, ID: recordid.NewUUID(), Status: pending.Status(pending.Denied), DecidedBy: "U0TEST", DecisionReason: "recorded"}
	if req.AskID != "" {
		a.ID = req.AskID
	}
	return a, func(_ context.Context, done func(pending.Ask)) { done(a) }
}

func (r *recordingApprover) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// since is the one Ask recorded after the first n.
func (r *recordingApprover) since(n int) (pending.Request, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != n+1 {
		return pending.Request{}, false
	}
	return r.reqs[n], true
}

// postJSON posts body with a bearer token and decodes the answer into out.
func postJSON(t *testing.T, url, token string, body, out any, headers ...string) {
	t.Helper()
	r := apitest.Do(t, http.MethodPost, url, token, body, headers...)
	if r.Status >= 300 {
		t.Fatalf("POST %s: %d %s", url, r.Status, r.Raw)
	}
	if err := json.Unmarshal(r.Raw, out); err != nil {
		t.Fatalf("POST %s answered %s", url, r.Raw)
	}
}
