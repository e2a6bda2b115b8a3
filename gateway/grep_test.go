package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// grepRules: no agent reads a .env; a key file needs a human; the agent
// may write under src/.
var grepRules = []policy.Rule{
	{Tool: "read_file", Path: "**/.env", Decision: policy.Deny, Reason: "secrets"},
	{Tool: "read_file", Path: "**/*.pem", Decision: policy.Ask},
	{Tool: "write_file", Path: "src/**", Decision: policy.Allow},
}

// grepWorkspace is a workspace holding a .env, a key under keys/, code
// under src/, and links: envlink → .env, conflink → conf/ (which holds a
// .env of its own), src/glink → ../.git.
func grepWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src", "conf", "keys", "docs", ".git/hooks"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".env", "conf/.env", "keys/id.pem", "src/main.go", "docs/README.md", ".git/config"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("TOKEN=x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"envlink": ".env", "conflink": "conf", "src/glink": "../.git"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// grepDoors is one gateway's HTTP front doors: a Slack deployment's API
// (an ask token; askops cannot see the agent's files) with its Claude
// Code HTTP hook, and the local serve's API (package local marks its agent
// token's caller is on this machine, so the serve resolves and lists).
type grepDoors struct {
	approver         *countingApprover
	remote, local    *httptest.Server
	localAgentBearer string
}

func newGrepDoors(t *testing.T, ws string) *grepDoors {
	t.Helper()
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	d := &grepDoors{approver: &countingApprover{}}
	engine, err := policy.New(policy.Config{Rules: grepRules})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Config{Asks: asks, Approver: d.approver, Policy: engine, MaxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	tokens, err := NewTokens([]TokenConfig{{Name: "laptop-ana", Value: askToken, Scopes: []string{"ask"}, Workspace: ws}})
	if err != nil {
		t.Fatal(err)
	}
	d.remote = httptest.NewServer(NewAPI(svc, tokens, nil).Handler())
	t.Cleanup(d.remote.Close)
	// The local serve's agent token (package local marks its tokens so).
	d.localAgentBearer = recordid.Secret()
	local, err := NewTokens([]TokenConfig{{Name: "local-agent", Value: d.localAgentBearer, Scopes: []string{"ask"}, Local: true}})
	if err != nil {
		t.Fatal(err)
	}
	d.local = httptest.NewServer(NewAPI(svc, local, nil).Handler())
	t.Cleanup(d.local.Close)
	return d
}

// decide sends one tool call through door and says what askops answered:
// ask when a human was asked, else allow or deny. resolved is what the
// body claims; only the local serve's own resolution may count.
func (d *grepDoors) decide(t *testing.T, door, session, ws, tool, input string) string {
	t.Helper()
	_, before := d.approver.last()
	var allowed bool
	switch door {
	case "http": // Claude Code's HTTP hook
		ev := map[string]any{"session_id": session, "cwd": ws, "hook_event_name": hook.EventPreToolUse, "tool_name": tool, "tool_input": json.RawMessage(input)}
		r := call(t, "POST", d.remote.URL+"/v1/hooks/claude", askToken, ev)
		var ans struct {
			HookSpecificOutput struct {
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(r.Raw, &ans); err != nil || r.Status != 200 {
			t.Fatalf("hook answer %d %q: %v", r.Status, r.Raw, err)
		}
		allowed = ans.HookSpecificOutput.PermissionDecision == "allow"
	case "api", "local":
		url, token := d.remote.URL, askToken
		if door == "local" {
			url, token = d.local.URL, d.localAgentBearer
		}
		// Every body says resolved, as an older bot hook's did.
		r := call(t, "POST", url+"/v1/asks", token, map[string]any{"session_id": session, "tool": tool, "input": json.RawMessage(input), "cwd": ws, "resolved": true})
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("POST /v1/asks: %d %s", r.Status, r.Raw)
		}
		allowed = r.Body["status"] == "approved"
	default:
		t.Fatalf("unknown door %q", door)
	}
	if _, after := d.approver.last(); after > before {
		return "ask"
	}
	if allowed {
		return "allow"
	}
	return "deny"
}

// A Grep reads every file it searches, whatever it prints, so it meets
// read_file's rules: a deny on **/.env denies it on .env, with glob
// ".env", on a directory holding one (unless its glob leaves .env out),
// and on a link to either; a key file's ask rule asks. Where askops sees
// the files (the local serve) it lists the directory; where it cannot
// (a Slack deployment's API and HTTP hook), a directory that may hold a
// .env is refused. And no API body's "resolved" makes a path it cannot
// see safe: only the local serve resolves, itself.
func TestGrepMeetsReadRules(t *testing.T) {
	ws := grepWorkspace(t)
	d := newGrepDoors(t, ws)
	cases := []struct {
		door, tool, input, want string
	}{
		// The local serve sees the files.
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/.env","output_mode":"content"}`, "deny"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/.env"}`, "deny"}, // files_with_matches still reads it
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}","glob":".env","output_mode":"content"}`, "deny"},
		{"local", "Grep", `{"pattern":"TOKEN","output_mode":"content"}`, "deny"}, // the cwd holds a .env
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/conf","output_mode":"count"}`, "deny"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/envlink","output_mode":"content"}`, "deny"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/conflink","output_mode":"content"}`, "deny"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/keys"}`, "ask"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}","glob":"*.go","output_mode":"content"}`, "allow"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/src","output_mode":"content"}`, "allow"},
		{"local", "Grep", `{"pattern":"TOKEN","path":"{ws}/docs"}`, "allow"},
		{"local", "Glob", `{"pattern":"**/.env"}`, "allow"}, // names, not contents
		{"local", "Write", `{"file_path":"{ws}/src/new.go","content":"x"}`, "allow"},
		{"local", "Write", `{"file_path":"{ws}/src/glink/hooks/pre-commit","content":"x"}`, "ask"},
		// A Slack deployment's serve sees no files.
		{"http", "Grep", `{"pattern":"TOKEN","path":"{ws}/.env","output_mode":"content"}`, "deny"},
		{"http", "Grep", `{"pattern":"TOKEN","path":"{ws}","glob":".env"}`, "deny"},
		{"http", "Grep", `{"pattern":"TOKEN","output_mode":"content"}`, "deny"},
		{"http", "Grep", `{"pattern":"TOKEN","path":"{ws}/envlink"}`, "deny"},
		{"http", "Grep", `{"pattern":"TOKEN","path":"{ws}/keys","glob":"*.pem"}`, "ask"},
		{"http", "Grep", `{"pattern":"TOKEN","path":"{ws}/src","glob":"*.go","output_mode":"content"}`, "allow"},
		{"http", "Grep", `{"pattern":"TOKEN","glob":"*.go"}`, "allow"},
		{"api", "Grep", `{"pattern":"TOKEN","path":"{ws}/conflink","output_mode":"content"}`, "deny"},
		{"api", "Grep", `{"pattern":"TOKEN","path":"{ws}/src","glob":"*.md"}`, "allow"},
		{"api", "Write", `{"file_path":"{ws}/src/new.go","content":"x"}`, "ask"},
		{"api", "Write", `{"file_path":"{ws}/src/glink/hooks/pre-commit","content":"x"}`, "ask"},
	}
	for i, tc := range cases {
		input := strings.ReplaceAll(tc.input, "{ws}", ws)
		session := "grep-" + tc.door
		if got := d.decide(t, tc.door, session, ws, tc.tool, input); got != tc.want {
			t.Errorf("case %d %s %s %s: %s, want %s", i, tc.door, tc.tool, tc.input, got, tc.want)
		}
	}
}
