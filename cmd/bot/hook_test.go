package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bot hook fails closed: no askops to ask is a deny on stdout and exit 0;
// input it cannot read is exit 2 with the reason on stderr.
func TestHookCommandFailsClosed(t *testing.T) {
	event := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"hook", "claude"}, noEnv, strings.NewReader(event), &out, &errOut)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"askops: approval unavailable: no askops to ask: set -url or ASKOPS_URL (or -config). The action was not performed; do not retry it unchanged."}}` + "\n"
	if code != 0 || out.String() != want {
		t.Errorf("exit %d\nstdout %s\nwant   %s\nstderr %s", code, out.String(), want, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"hook", "codex", "-url", "http://127.0.0.1:1"}, envOf(map[string]string{"ASKOPS_TOKEN": "x"}), strings.NewReader("not json"), &out, &errOut)
	if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "unreadable hook input") {
		t.Errorf("unreadable: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// A serve that takes the connection and never answers (frozen, or a
// proxy swallowing the request) still gets a deny, exit 0, from bot hook —
// before the agent's own hook timeout would let the call through.
func TestHookAnswersAFrozenServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // never accepted: the handshake lands in the backlog
	event := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`
	type result struct {
		code        int
		out, errOut string
	}
	got := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"hook", "codex", "-url", "http://" + ln.Addr().String(), "-timeout", "1s"},
			envOf(map[string]string{"ASKOPS_TOKEN": "x"}), strings.NewReader(event), &out, &errOut)
		got <- result{code, out.String(), errOut.String()}
	}()
	select {
	case r := <-got:
		if r.code != 0 || !strings.Contains(r.out, `"behavior":"deny"`) || !strings.Contains(r.out, "no answer in time") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.out, r.errOut)
		}
	case <-time.After(60 * time.Second): // liveness only
		t.Fatal("bot hook never answered a frozen serve")
	}
}

// bot hook sends the session's workspace as the agent's own process gives
// it, never the event's cwd: Claude Code's $CLAUDE_PROJECT_DIR, and for
// Codex the directory it started the hook in (the event's cwd is the
// workdir Codex's model chose for the command).
func TestHookSendsTheAgentsWorkspace(t *testing.T) {
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Workspace string `json:"workspace"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		sent <- body.Workspace
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"a1","status":"denied","decided_by":"askops policy","reason":"test"}`))
	}))
	t.Cleanup(srv.Close)
	hookIn := func(agent, event string, env map[string]string) string {
		t.Helper()
		env["ASKOPS_TOKEN"] = "x"
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"hook", agent, "-url", srv.URL}, envOf(env), strings.NewReader(event), &out, &errOut); code != 0 {
			t.Fatalf("bot hook %s: exit %d\n%s%s", agent, code, out.String(), errOut.String())
		}
		return <-sent
	}
	claude := `{"session_id":"s","cwd":"` + elsewhere + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`
	if got := hookIn("claude", claude, map[string]string{"CLAUDE_PROJECT_DIR": project}); got != project {
		t.Errorf("claude: workspace %q, want $CLAUDE_PROJECT_DIR %q", got, project)
	}
	if got := hookIn("claude", claude, map[string]string{}); got != "" {
		t.Errorf("claude without $CLAUDE_PROJECT_DIR: workspace %q, want none (the serve pins the first cwd)", got)
	}
	t.Chdir(project)
	codex := `{"session_id":"s","cwd":"` + elsewhere + `","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`
	if got := hookIn("codex", codex, map[string]string{}); got != project {
		t.Errorf("codex: workspace %q, want the hook's own directory %q", got, project)
	}
}
