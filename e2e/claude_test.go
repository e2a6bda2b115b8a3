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

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/slackui"
)

// claudeBinary is the real Claude Code CLI, when installed
// (npm install @anthropic-ai/claude-code; ASKOPS_CLAUDE_BIN names it).
func claudeBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ASKOPS_CLAUDE_BIN"); p != "" {
		return p
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	t.Skip("the Claude Code CLI is not installed (set ASKOPS_CLAUDE_BIN)")
	return ""
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
// PreToolUse hook, and with `bot mcp` as its --permission-prompt-tool,
// configured as the README writes them: an approval on the other replica
// lets its Bash call run (git's own error comes back), a denial keeps it
// from running and the model reads why.
func TestRealClaudeCodeHook(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	a := w.serve(ctx, t, "cc-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "cc-b", settings{Extra: apiBlock})

	for _, tc := range []struct {
		via    string // "hook": PreToolUse hook; "mcp": --permission-prompt-tool
		action string
		result string // in the tool result: git's own error (it ran) or askops' reason
	}{
		{"hook", slackui.ActionApprove, "not a git repository"},
		{"hook", slackui.ActionDeny, "askops: denied by " + approverID},
		{"mcp", slackui.ActionApprove, "not a git repository"},
		{"mcp", slackui.ActionDeny, "askops: denied by " + approverID},
	} {
		t.Run(tc.via+"/"+tc.action, func(t *testing.T) {
			project := t.TempDir()
			// Not a file write: Claude Code's own sandbox refuses writes under
			// the test's /tmp before any hook. git's own error shows it ran.
			model := &fakeMessages{command: "git push origin main"}
			api := httptest.NewServer(model)
			defer api.Close()
			// PreToolUse: with -p, Claude Code 2.1.197 answers "This command
			// requires approval" itself and never fires PermissionRequest.
			settings := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"` +
				botBinary + ` hook claude -url ` + a.base + ` -token-env ASKOPS_TOKEN","timeout":120}]}]}}`
			args := []string{"-p", "release please", "--output-format", "json"}
			if tc.via == "mcp" {
				settings = `{}`
				mcpConfig := filepath.Join(project, "askops-mcp.json")
				cfg := `{"mcpServers": {"askops": {"command": "` + botBinary + `", "args": ["mcp", "-url", "` + a.base + `", "-token-env", "ASKOPS_TOKEN"]}}}`
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
			var m fakeslack.Message
			var runErr error
			exited := false
			waitFor(ctx, t, "an Ask, or claude's exit", func() bool {
				select {
				case runErr = <-done:
					exited = true
					return true
				default:
				}
				for _, msg := range w.slack.Messages() {
					if askID(msg.Blocks) != "" && strings.Contains(text(msg), "git push origin main") && !strings.Contains(text(msg), "Approved") && !strings.Contains(text(msg), "Denied") {
						m = msg
						return true
					}
				}
				return false
			})
			if exited {
				t.Fatalf("claude exited without asking: %v\nstdout %s\nstderr %s\nrequests' tool results %q", runErr, out.String(), errOut.String(), model.toolResults())
			}
			w.click(ctx, t, b.base, m, approverID, tc.action)
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
