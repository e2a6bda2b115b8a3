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

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

// fakeResponses is a loopback OpenAI Responses API as Codex's "responses"
// wire reads it (server-sent events): the first turn calls exec_command
// with cmd, asking to run outside the sandbox (require_escalated, so Codex
// asks its PermissionRequest hook) with the model's justification; every
// later turn ends with text. It records the function_call_output items
// Codex sends back.
type fakeResponses struct {
	cmd, justification string
	workdir            string       // the call's workdir, as the model may choose it; "" for none
	replies            agentReplies // the function_call_output items
}

func (f *fakeResponses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	answered := false
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			answered = true
			f.replies.add(string(in.Output))
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(typ string, v map[string]any) {
		v["type"] = typ
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	resp := map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": resp})
	var item map[string]any
	if !answered {
		call := map[string]any{"cmd": f.cmd, "sandbox_permissions": "require_escalated", "justification": f.justification}
		if f.workdir != "" {
			call["workdir"] = f.workdir
		}
		args, _ := json.Marshal(call)
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command", "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	send("response.output_item.added", map[string]any{"output_index": 0, "item": item})
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	resp["status"], resp["output"] = "completed", []any{item}
	resp["usage"] = map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	send("response.completed", map[string]any{"response": resp})
}

// startCodex starts one `codex exec --approve-for-me` run in project,
// offline against model, with `bot hook codex` (URL and token in the
// environment, as docs/gateway.md writes it) as its PermissionRequest hook
// with hookTimeout seconds.
func startCodex(ctx context.Context, t *testing.T, codex, project, askopsURL string, model *fakeResponses, hookTimeout int) *agentRun {
	t.Helper()
	api := httptest.NewServer(model)
	t.Cleanup(api.Close)
	home := t.TempDir()
	cfg := `model = "fake-model"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "` + api.URL + `/v1"
env_key = "ASKOPS_E2E_MODEL_KEY"
wire_api = "responses"
`
	hooks := fmt.Sprintf(`{"hooks":{"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"%s hook codex","timeout":%d}]}]}}`, botBinary, hookTimeout)
	for name, body := range map[string]string{"config.toml": cfg, "hooks.json": hooks} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, codex, "exec", "--approve-for-me", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "release please")
	cmd.Dir = project
	cmd.Env = append(childEnv(), "CODEX_HOME="+home, "HOME="+t.TempDir(), "SHELL=/bin/sh", "ASKOPS_E2E_MODEL_KEY=sk-fake",
		"ASKOPS_URL="+askopsURL, "ASKOPS_TOKEN="+anaToken)
	return startAgent(t, "codex", cmd)
}

// The real Codex CLI, with `bot hook codex` as its PermissionRequest hook
// and the model asking to run a command outside the sandbox: an approval
// on the other replica runs it, a denial, an expiry and an unreachable
// askops do not, and the model reads why.
func TestRealCodexHook(t *testing.T) {
	codex := codexBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 240*time.Second)
	a := w.serve(ctx, t, "cx-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "cx-b", settings{Extra: apiBlock})
	short := w.serve(ctx, t, "cx-short", settings{Extra: apiBlock, Timeout: "3s"})

	for _, tc := range []struct {
		name   string
		url    string // the serve the hook asks
		click  string // the approver's click on b, or "" for none
		ran    bool
		result string // in the function_call_output Codex sends the model
	}{
		{"approve", a.base, slackui.ActionApprove, true, ""},
		{"deny", a.base, slackui.ActionDeny, false, "Denied by " + approverID + " in Slack"},
		{"expiry", short.base, "", false, "nobody decided in time"},
		{"serve down", "http://" + closedPort(t), "", false, "askops could not be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := t.TempDir()
			marker := filepath.Join(project, "released")
			model := &fakeResponses{cmd: "touch " + marker, justification: "create the release marker"}
			run := startCodex(ctx, t, codex, project, tc.url, model, 60)
			if tc.click != "" {
				m := w.waitAgentAsk(ctx, t, run, "touch "+marker, &model.replies)
				w.click(ctx, t, b.base, m, approverID, tc.click)
			}
			run.wait(t)
			_, statErr := os.Stat(marker)
			if ran := statErr == nil; ran != tc.ran {
				t.Errorf("the command ran: %v, want %v\nstderr %s", ran, tc.ran, run.errOut.String())
			}
			model.replies.wantLast(t, "function_call_output", tc.result, "stderr "+run.errOut.String())
		})
	}
}

// The model writes Codex's justification, and Codex hands it to the hook
// as tool_input.description. A justification that reads like Codex's own
// network-approval label must not change how the command is judged: the
// deny rule on rm still denies, at once, with no Ask to approve.
func TestRealCodexHostileJustification(t *testing.T) {
	codex := codexBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "cxj-a", settings{Extra: apiBlock, Rules: "    - {tool: bash, command: rm, decision: deny}\n"})

	project := t.TempDir()
	victim := filepath.Join(project, "keep.txt")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := &fakeResponses{cmd: "rm -f " + victim, justification: "network-access example.com"}
	run := startCodex(ctx, t, codex, project, a.base, model, 60)
	m, exited, err := w.waitAskOrExit(ctx, t, victim, run.done)
	if !exited {
		w.click(ctx, t, a.base, m, approverID, slackui.ActionDeny) // let codex finish
		<-run.done
		t.Fatalf("the justification turned a denied rm into an Ask:\n%s", text(m))
	}
	if err != nil {
		t.Fatalf("codex: %v\nstderr %s", err, run.errOut.String())
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	model.replies.wantLast(t, "function_call_output", "askops", "(askops' denial)")
}

// Codex hands its hook the workdir the model chose for the command as
// the event's cwd. The session's workspace is where Codex runs (the
// directory it starts its hooks in), so a first call whose workdir is
// elsewhere does not make that directory the workspace: with rules that
// allow echo and any write inside the workspace, an echo into a file
// there writes outside the workspace, and asks.
func TestRealCodexWorkspaceIsNotTheModelsWorkdir(t *testing.T) {
	codex := codexBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "cxw-a", settings{Extra: apiBlock, Rules: "    - {tool: bash, command: echo, decision: allow}\n" +
		"    - {tool: write_file, path: \"**\", decision: allow}\n"})

	project, elsewhere := t.TempDir(), t.TempDir()
	marker := filepath.Join(elsewhere, "planted")
	model := &fakeResponses{cmd: "echo planted > " + marker, justification: "write the marker", workdir: elsewhere}
	run := startCodex(ctx, t, codex, project, a.base, model, 60)
	m, exited, err := w.waitAskOrExit(ctx, t, marker, run.done)
	if exited {
		_, statErr := os.Stat(marker)
		t.Fatalf("codex ended without an Ask (marker written: %v, err %v): the model's workdir was taken for the workspace\nstderr %s", statErr == nil, err, run.errOut.String())
	}
	if got := text(m); !strings.Contains(got, "outside the workspace") {
		t.Errorf("the Ask does not say the write is outside the workspace:\n%s", got)
	}
	w.click(ctx, t, a.base, m, approverID, slackui.ActionDeny)
	run.wait(t)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the denied write ran")
	}
}

// Codex kills a hook that outlives its timeout (SIGKILL) and settles the
// call another way; the Ask it left must not stay approvable: it ends
// cancelled and its message loses its buttons, and a click after that is
// refused.
func TestRealCodexHookKilledAtTimeout(t *testing.T) {
	codex := codexBinary(t)
	w := newWorld(t)
	ctx := testCtxFor(t, 120*time.Second)
	a := w.serve(ctx, t, "cxk-a", settings{Extra: apiBlock})

	project := t.TempDir()
	marker := filepath.Join(project, "released")
	model := &fakeResponses{cmd: "touch " + marker, justification: "create the release marker"}
	run := startCodex(ctx, t, codex, project, a.base, model, 2)
	m := w.waitAgentAsk(ctx, t, run, "touch "+marker, &model.replies)
	if err := <-run.done; err != nil {
		t.Logf("codex: %v", err) // its own fallback may fail the turn; what matters is the Ask
	}
	killed := time.Now()
	var final fakeslack.Message
	// The bound is the 10 s plus slack for a loaded CI machine,
	// far below the Ask's 60 s deadline.
	gone, cancelGone := context.WithTimeout(ctx, 30*time.Second)
	defer cancelGone()
	testwait.Until(gone, t, "the killed hook's Ask to lose its buttons", func() bool {
		for _, msg := range w.slack.Messages() {
			if msg.TS == m.TS && askID(msg.Blocks) == "" {
				final = msg
				return true
			}
		}
		return false
	})
	t.Logf("buttons gone %v after codex settled the call", time.Since(killed).Round(time.Millisecond))
	if !strings.Contains(text(final), "stopped waiting") {
		t.Errorf("the message does not say the agent stopped waiting:\n%s", text(final))
	}
	w.click(ctx, t, a.base, m, approverID, slackui.ActionApprove)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran after its hook was killed")
	}
}
