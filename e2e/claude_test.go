package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/slackui"
)

// claudeBinary is the real Claude Code CLI (.ci/run installs
// @anthropic-ai/claude-code@2.1.332 and sets ASKOPS_CLAUDE_BIN).
func claudeBinary(t *testing.T) string {
	t.Helper()
	return realCLI(t, "ASKOPS_CLAUDE_BIN", "claude", "npm install @anthropic-ai/claude-code@2.1.332")
}

// fakeMessages is a loopback Anthropic Messages API: the first turn asks
// for one Bash call, every later turn ends with text. It records the tool
// results Claude Code sends back.
type fakeMessages struct {
	command string
	mu      sync.Mutex
	results []string
}

func (f *fakeMessages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	toolResult := ""
	for _, m := range req.Messages {
		var blocks []map[string]any
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b["type"] == "tool_result" {
				c, _ := json.Marshal(b["content"])
				toolResult = fmt.Sprintf("is_error=%v %s", b["is_error"], c)
			}
		}
	}
	if toolResult != "" {
		f.mu.Lock()
		f.results = append(f.results, toolResult)
		f.mu.Unlock()
	}
	events := [][2]string{{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-fake","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`}}
	stop := "end_turn"
	if toolResult == "" && strings.Contains(string(body), "release please") {
		input, _ := json.Marshal(map[string]string{"command": f.command, "description": "write the marker"})
		partial, _ := json.Marshal(string(input))
		events = append(events,
			[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01Fake","name":"Bash","input":{}}}`},
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + string(partial) + `}}`},
			[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`})
		stop = "tool_use"
	} else {
		events = append(events,
			[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`},
			[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`})
	}
	events = append(events,
		[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":5}}`},
		[2]string{"message_stop", `{"type":"message_stop"}`})
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-fake","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e[0], e[1])
	}
}

func (f *fakeMessages) toolResults() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.results...)
}

// The real Claude Code CLI, in -p mode, with `bot hook claude` as its
// PreToolUse or PermissionRequest hook, and with `bot mcp` as its
// --permission-prompt-tool, configured as docs/gateway.md writes them: an
// approval on the other replica lets its Bash call run (git's own error
// comes back); a denial, an expiry and an unreachable askops keep it from
// running, and the model reads why.
func TestRealClaudeCodeHook(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), 240*time.Second)
	defer cancel()
	a := w.serve(ctx, t, "cc-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "cc-b", settings{Extra: apiBlock})
	short := w.serve(ctx, t, "cc-short", settings{Extra: apiBlock, Timeout: "3s"})
	down := "http://" + closedPort(t)

	const ran = "not a git repository" // git's own error: the command ran
	for _, tc := range []struct {
		via    string // "PreToolUse", "PermissionRequest": the hook event; "mcp": --permission-prompt-tool
		name   string
		url    string // the serve asked
		action string // the approver's click on b; "" for none
		result string // in the tool result: git's own error (it ran) or askops' reason
	}{
		{"PreToolUse", "approve", a.base, slackui.ActionApprove, ran},
		{"PreToolUse", "deny", a.base, slackui.ActionDeny, "Denied by " + approverID + " in Slack"},
		{"PreToolUse", "expiry", short.base, "", "nobody decided in time"},
		{"PreToolUse", "serve down", down, "", "askops could not be reached"},
		{"PermissionRequest", "approve", a.base, slackui.ActionApprove, ran},
		{"PermissionRequest", "deny", a.base, slackui.ActionDeny, "Denied by " + approverID + " in Slack"},
		{"PermissionRequest", "expiry", short.base, "", "nobody decided in time"},
		{"PermissionRequest", "serve down", down, "", "askops could not be reached"},
		{"mcp", "approve", a.base, slackui.ActionApprove, ran},
		{"mcp", "deny", a.base, slackui.ActionDeny, "Denied by " + approverID + " in Slack"},
	} {
		t.Run(tc.via+"/"+tc.name, func(t *testing.T) {
			project := t.TempDir()
			// Not a file write: Claude Code's own sandbox refuses writes under
			// the test's /tmp before any hook. git's own error shows it ran.
			model := &fakeMessages{command: "git push origin main"}
			api := httptest.NewServer(model)
			defer api.Close()
			settings := `{"hooks":{"` + tc.via + `":[{"matcher":"*","hooks":[{"type":"command","command":"` +
				botBinary + ` hook claude -url ` + tc.url + ` -token-env ASKOPS_TOKEN","timeout":120,"onFailure":"block"}]}]}}`
			args := []string{"-p", "release please", "--output-format", "json"}
			if tc.via == "mcp" {
				settings = `{}`
				mcpConfig := filepath.Join(project, "askops-mcp.json")
				cfg := `{"mcpServers": {"askops": {"command": "` + botBinary + `", "args": ["mcp", "-url", "` + tc.url + `", "-token-env", "ASKOPS_TOKEN"]}}}`
				if err := os.WriteFile(mcpConfig, []byte(cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--mcp-config", mcpConfig, "--permission-prompt-tool", "mcp__askops__approval_prompt")
			}
			if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, claude, args...)
			cmd.Dir = project
			cmd.Env = append(childEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-fake",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ASKOPS_TOKEN="+anaToken)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			done := make(chan error, 1)
			go func() { done <- cmd.Run() }()
			if tc.action != "" {
				m, exited, runErr := w.waitAskOrExit(ctx, t, "git push origin main", done)
				if exited {
					t.Fatalf("claude exited without asking: %v\nstdout %s\nstderr %s\nrequests' tool results %q", runErr, out.String(), errOut.String(), model.toolResults())
				}
				w.click(ctx, t, b.base, m, approverID, tc.action)
			}
			if err := <-done; err != nil {
				t.Fatalf("claude: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
			}
			results := model.toolResults()
			if len(results) == 0 || !strings.Contains(results[len(results)-1], tc.result) {
				t.Errorf("tool results %q, want one containing %q\nstdout %s", results, tc.result, out.String())
			}
		})
	}
}

// What the real Claude Code does when its hook fails, as docs/gateway.md's table
// says: with "onFailure": "block" a hook that times out or cannot start
// blocks the call, even one Claude Code's own rules allow; without it
// Claude Code carries on as if there were no hook, so a call its own rules
// allow runs (why bot hook must always answer, before its timeout).
func TestRealClaudeCodeHookFailures(t *testing.T) {
	claude := claudeBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	const ran = "not a git repository" // git's own error: the command ran
	for _, tc := range []struct {
		name      string
		command   string
		onFailure string
		allowed   bool // Claude Code's own rules allow the call (--allowedTools Bash)
		ran       bool
	}{
		{"times out, block", "sleep 30", `,"onFailure":"block"`, true, false},
		{"cannot start, block", "/nonexistent/askops-bot hook claude", `,"onFailure":"block"`, true, false},
		{"times out, no onFailure", "sleep 30", "", true, true},
		{"cannot start, no onFailure", "/nonexistent/askops-bot hook claude", "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := t.TempDir()
			model := &fakeMessages{command: "git push origin main"}
			api := httptest.NewServer(model)
			defer api.Close()
			settings := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` + tc.command + `","timeout":2` + tc.onFailure + `}]}]}}`
			if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-p", "release please", "--output-format", "json"}
			if tc.allowed {
				args = append(args, "--allowedTools", "Bash")
			}
			cmd := exec.CommandContext(ctx, claude, args...)
			cmd.Dir = project
			cmd.Env = append(childEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-fake",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("claude: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
			}
			results := model.toolResults()
			if len(results) == 0 {
				t.Fatalf("no tool result\nstdout %s", out.String())
			}
			if got := strings.Contains(results[len(results)-1], ran); got != tc.ran {
				t.Errorf("the call ran: %v, want %v; tool result %q", got, tc.ran, results[len(results)-1])
			}
		})
	}
}

// Claude Code runs what askops judged: a Bash allow carries updatedInput
// with the command as the policy printed it from its parse (here without
// the model's trailing comment), and the real CLI runs that text, as its
// PostToolUse hook (which records the input it ran) shows.
func TestRealClaudeCodeRunsWhatWasJudged(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	a := w.serve(ctx, t, "ccj-a", settings{Extra: apiBlock, Rules: "    - {tool: bash, command: echo, decision: allow}\n"})

	project := t.TempDir()
	ran := filepath.Join(t.TempDir(), "post.json")
	model := &fakeMessages{command: "echo judged   # the model's own comment"}
	api := httptest.NewServer(model)
	defer api.Close()
	settings := `{"hooks":{` +
		`"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` + botBinary + ` hook claude -url ` + a.base + `","timeout":60,"onFailure":"block"}]}],` +
		`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"cat > ` + ran + `","timeout":10}]}]}}`
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, claude, "-p", "release please", "--output-format", "json")
	cmd.Dir = project
	cmd.Env = append(childEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ASKOPS_TOKEN="+anaToken)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
	}
	b, err := os.ReadFile(ran)
	if err != nil {
		t.Fatalf("the PostToolUse hook recorded nothing (%v); tool results %q", err, model.toolResults())
	}
	var post struct {
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
	}
	if err := json.Unmarshal(b, &post); err != nil {
		t.Fatal(err)
	}
	if post.ToolInput.Command != "echo judged" {
		t.Errorf("Claude Code ran %q, want the judged text %q", post.ToolInput.Command, "echo judged")
	}
}

// gateway.bound_bash: a Bash call the policy allowed is answered, by the
// serve's HTTP hook, with an updatedInput that runs it under `bot sandbox`,
// and the real Claude Code runs that: its PostToolUse hook records the wrapped command, and the
// model gets the command's output from inside the bound.
func TestRealClaudeCodeRunsAllowedBashBounded(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	a := w.serve(ctx, t, "ccb-a", settings{Extra: apiBlock + "gateway:\n  bound_bash: true\n", Rules: "    - {tool: bash, command: echo, decision: allow}\n"})

	project := t.TempDir()
	ran := filepath.Join(t.TempDir(), "post.json")
	model := &fakeMessages{command: "echo inside-the-bound"}
	api := httptest.NewServer(model)
	defer api.Close()
	settings := `{"hooks":{` +
		`"PreToolUse":[{"matcher":"*","hooks":[{"type":"http","url":"` + a.base + `/v1/hooks/claude","headers":{"Authorization":"Bearer $ASKOPS_TOKEN"},"allowedEnvVars":["ASKOPS_TOKEN"],"timeout":60,"onFailure":"block"}]}],` +
		`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"cat > ` + ran + `","timeout":10}]}]}}`
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, claude, "-p", "release please", "--output-format", "json")
	cmd.Dir = project
	cmd.Env = append(childEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ASKOPS_TOKEN="+anaToken)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
	}
	b, err := os.ReadFile(ran)
	if err != nil {
		t.Fatalf("the PostToolUse hook recorded nothing (%v); tool results %q\nstdout %s\nstderr %s", err, model.toolResults(), out.String(), errOut.String())
	}
	var post struct {
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
	}
	if err := json.Unmarshal(b, &post); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(project)
	if err != nil {
		t.Fatal(err)
	}
	want := "'" + botBinary + "' sandbox -config '"
	if !strings.HasPrefix(post.ToolInput.Command, want) || !strings.HasSuffix(post.ToolInput.Command, " -workspace '"+real+"' -- bash -c 'echo inside-the-bound'") {
		t.Errorf("Claude Code ran %q, want it under bot sandbox in %s", post.ToolInput.Command, real)
	}
	results := model.toolResults()
	if len(results) == 0 || !strings.Contains(results[len(results)-1], "inside-the-bound") {
		t.Errorf("tool results %q, want the command's output from inside the bound", results)
	}
}
