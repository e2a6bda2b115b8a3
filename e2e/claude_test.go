package e2e

import (
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
	"testing"
	"time"

	"github.com/askops/askops/slackui"
)

// fakeMessages is a loopback Anthropic Messages API: the first turn asks
// for one Bash call, every later turn ends with text. It records the tool
// results Claude Code sends back.
type fakeMessages struct {
	command string
	replies agentReplies // the tool results
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
		f.replies.add(toolResult)
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

// claudeHooks is a .claude/settings.json whose hooks run, at each event
// in events (an event name and its JSON hook object), that hook for every
// tool ("matcher": "*").
func claudeHooks(events ...[2]string) string {
	var entries []string
	for _, e := range events {
		entries = append(entries, `"`+e[0]+`":[{"matcher":"*","hooks":[`+e[1]+`]}]`)
	}
	return `{"hooks":{` + strings.Join(entries, ",") + `}}`
}

// botHookClaude is the command hook object that runs `bot hook claude`
// against askops at url, its token in $ASKOPS_TOKEN, as docs/gateway.md
// writes it: timeout seconds, and a hook that fails blocks the call.
func botHookClaude(url string, timeout int) string {
	return fmt.Sprintf(`{"type":"command","command":"%s hook claude -url %s -token-env ASKOPS_TOKEN","timeout":%d,"onFailure":"block"}`, botBinary, url, timeout)
}

// recordPostToolUse is the PostToolUse hook entry that writes the event
// Claude Code hands it (the tool input it actually ran) to path.
func recordPostToolUse(path string) [2]string {
	return [2]string{"PostToolUse", `{"type":"command","command":"cat > ` + path + `","timeout":10}`}
}

// startClaude starts the real Claude Code in -p mode on the prompt model
// answers with its Bash call ("release please"), in project, whose
// .claude/settings.json it writes first: offline against model, with an
// empty HOME, and $ASKOPS_TOKEN set for a `bot hook` or `bot mcp` that
// settings or args name. args follow the prompt and the output format.
func startClaude(ctx context.Context, t *testing.T, claude, project, settings string, model *fakeMessages, args ...string) *agentRun {
	t.Helper()
	api := httptest.NewServer(model)
	t.Cleanup(api.Close)
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, claude, append([]string{"-p", "release please", "--output-format", "json"}, args...)...)
	cmd.Dir = project
	cmd.Env = append(childEnv(), "HOME="+t.TempDir(), "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ASKOPS_TOKEN="+anaToken)
	return startAgent(t, "claude", cmd)
}

// postToolUseCommand is the Bash command Claude Code ran, as the
// recordPostToolUse hook wrote it to path.
func postToolUseCommand(t *testing.T, path string, model *fakeMessages, run *agentRun) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the PostToolUse hook recorded nothing (%v); tool results %q\n%s", err, model.replies.all(), run.output())
	}
	var post struct {
		ToolInput struct {
			Command string `json:"command"`
		} `json:"tool_input"`
	}
	if err := json.Unmarshal(b, &post); err != nil {
		t.Fatal(err)
	}
	return post.ToolInput.Command
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
	ctx := testCtxFor(t, 240*time.Second)
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
			settings := claudeHooks([2]string{tc.via, botHookClaude(tc.url, 120)})
			var args []string
			if tc.via == "mcp" {
				settings = `{}`
				mcpConfig := filepath.Join(project, "askops-mcp.json")
				cfg := `{"mcpServers": {"askops": {"command": "` + botBinary + `", "args": ["mcp", "-url", "` + tc.url + `", "-token-env", "ASKOPS_TOKEN"]}}}`
				if err := os.WriteFile(mcpConfig, []byte(cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--mcp-config", mcpConfig, "--permission-prompt-tool", "mcp__askops__approval_prompt")
			}
			run := startClaude(ctx, t, claude, project, settings, model, args...)
			if tc.action != "" {
				m := w.waitAgentAsk(ctx, t, run, "git push origin main", &model.replies)
				w.click(ctx, t, b.base, m, approverID, tc.action)
			}
			run.wait(t)
			model.replies.wantLast(t, "tool results", tc.result, "stdout "+run.out.String())
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
	ctx := testCtxFor(t, 120*time.Second)
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
			model := &fakeMessages{command: "git push origin main"}
			settings := claudeHooks([2]string{"PreToolUse", `{"type":"command","command":"` + tc.command + `","timeout":2` + tc.onFailure + `}`})
			var args []string
			if tc.allowed {
				args = append(args, "--allowedTools", "Bash")
			}
			run := startClaude(ctx, t, claude, t.TempDir(), settings, model, args...)
			run.wait(t)
			results := model.replies.all()
			if len(results) == 0 {
				t.Fatalf("no tool result\nstdout %s", run.out.String())
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
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "ccj-a", settings{Extra: apiBlock, Rules: "    - {tool: bash, command: echo, decision: allow}\n"})

	ran := filepath.Join(t.TempDir(), "post.json")
	model := &fakeMessages{command: "echo judged   # the model's own comment"}
	// This hook names no -token-env: the token is found in $ASKOPS_TOKEN.
	settings := claudeHooks(
		[2]string{"PreToolUse", `{"type":"command","command":"` + botBinary + ` hook claude -url ` + a.base + `","timeout":60,"onFailure":"block"}`},
		recordPostToolUse(ran))
	run := startClaude(ctx, t, claude, t.TempDir(), settings, model)
	run.wait(t)
	if got := postToolUseCommand(t, ran, model, run); got != "echo judged" {
		t.Errorf("Claude Code ran %q, want the judged text %q", got, "echo judged")
	}
}

// gateway.bound_bash: a Bash call the policy allowed is answered, by the
// serve's HTTP hook, with an updatedInput that runs it under `bot sandbox`,
// and the real Claude Code runs that: its PostToolUse hook records the wrapped command, and the
// model gets the command's output from inside the bound.
func TestRealClaudeCodeRunsAllowedBashBounded(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "ccb-a", settings{Extra: apiBlock + "gateway:\n  bound_bash: true\n", Rules: "    - {tool: bash, command: echo, decision: allow}\n"})

	project := t.TempDir()
	ran := filepath.Join(t.TempDir(), "post.json")
	model := &fakeMessages{command: "echo inside-the-bound"}
	settings := claudeHooks(
		[2]string{"PreToolUse", `{"type":"http","url":"` + a.base + `/v1/hooks/claude","headers":{"Authorization":"Bearer $ASKOPS_TOKEN"},"allowedEnvVars":["ASKOPS_TOKEN"],"timeout":60,"onFailure":"block"}`},
		recordPostToolUse(ran))
	run := startClaude(ctx, t, claude, project, settings, model)
	run.wait(t)
	command := postToolUseCommand(t, ran, model, run)
	real, err := filepath.EvalSymlinks(project)
	if err != nil {
		t.Fatal(err)
	}
	want := "'" + botBinary + "' sandbox -config '"
	if !strings.HasPrefix(command, want) || !strings.HasSuffix(command, " -workspace '"+real+"' -- bash -c 'echo inside-the-bound'") {
		t.Errorf("Claude Code ran %q, want it under bot sandbox in %s", command, real)
	}
	model.replies.wantLast(t, "tool results", "inside-the-bound", "(the command's output from inside the bound)")
}

// The real Claude Code cannot rewrite its own settings through a call
// askops' rules allow: a write in .claude/ (its hooks would run at the
// next tool call, outside askops) asks even where every write and echo
// are allowed, and with nobody there it is refused; the file is not made.
// (Without askops' rule Claude Code 2.1.332 refuses this one write itself,
// "requested permissions to write to …/settings.local.json", where it runs
// echo hi > plain.txt: askops' refusal is its own, and holds for the
// agents and editors that do not guard their settings.)
func TestRealClaudeCodeCannotRewriteItsSettings(t *testing.T) {
	claude := claudeBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "ccs-a", settings{Extra: apiBlock, Timeout: "3s", Rules: "    - {tool: bash, command: echo, decision: allow}\n" +
		"    - {tool: write_file, path: \"**\", decision: allow}\n"})

	project := t.TempDir()
	model := &fakeMessages{command: `echo '{"hooks":{}}' > .claude/settings.local.json`}
	run := startClaude(ctx, t, claude, project, claudeHooks([2]string{"PreToolUse", botHookClaude(a.base, 60)}), model)
	run.wait(t)
	model.replies.wantLast(t, "tool results", "nobody decided in time", "stdout "+run.out.String())
	if _, err := os.Stat(filepath.Join(project, ".claude", "settings.local.json")); err == nil {
		t.Error("Claude Code's settings.local.json was written")
	}
}
