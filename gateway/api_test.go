package gateway

import (
	"github.com/askops/askops/internal/apitest"
	"github.com/askops/askops/sessions"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/policy"
)

const (
	askToken     = "tok-ana-0123456789"
	consoleToken = "tok-console-abcdef"
	otherToken   = "tok-bob-9876543210"
)

// apiServer serves s's API on loopback with three tokens: laptop-ana (ask),
// laptop-bob (ask) and console (ask, decide).
func apiServer(t *testing.T, s *stack) *httptest.Server {
	t.Helper()
	tokens, err := NewTokens([]TokenConfig{
		{Name: "laptop-ana", Value: askToken, Scopes: []string{"ask"}},
		{Name: "laptop-bob", Value: otherToken, Scopes: []string{"ask"}},
		{Name: "console", Value: consoleToken, Scopes: []string{"ask", "decide"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAPI(s.svc, tokens, nil).Handler())
	t.Cleanup(srv.Close)
	return srv
}

type reply = apitest.Reply

func call(t *testing.T, method, url, token string, body any) reply {
	t.Helper()
	return apitest.Do(t, method, url, token, body)
}

// approveForSession decides Ask id "approve_session" through the API at u
// and waits for the waiter to record session's grant.
func approveForSession(t *testing.T, s *stack, u, id, session string) {
	t.Helper()
	if r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve_session"}); r.Status != 200 {
		t.Fatalf("approve_session: %d %s", r.Status, r.Raw)
	}
	testwait.For(t, "the session grant to be recorded", func() bool {
		g, err := s.grants.List(t.Context(), session)
		return err == nil && len(g) == 1
	})
}

func bashAsk(command string) map[string]any {
	return map[string]any{"session_id": "sess-1", "agent": "Claude Code", "tool": "Bash",
		"input": map[string]any{"command": command}, "cwd": "/home/ana/src/api"}
}

// The refusals: who may call (401/403), what is malformed (400 naming the
// field), what is unknown (404) and what is too big (413), each a JSON error.
func TestAPIRefusals(t *testing.T) {
	s := newStack(t, stackOptions{})
	srv := apiServer(t, s)
	u := srv.URL
	big := `{"session_id":"s","tool":"Bash","input":{"command":"` + strings.Repeat("x", hook.MaxBody) + `"}}`
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		errText                   string
	}{
		{"no token", "POST", "/v1/asks", "", bashAsk("ls"), 401, "missing or unknown bearer token"},
		{"wrong token", "GET", "/v1/asks/x", "tok-ana-0123456788", nil, 401, "missing or unknown bearer token"},
		{"ask token lists", "GET", "/v1/asks?status=pending", askToken, nil, 403, `lacks scope "decide"`},
		{"ask token decides", "POST", "/v1/asks/x/decision", askToken, map[string]any{"decision": "approve"}, 403, `lacks scope "decide"`},
		{"no session", "POST", "/v1/asks", askToken, map[string]any{"tool": "Bash", "input": map[string]any{}}, 400, "session_id: required"},
		{"no tool", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "input": map[string]any{}}, 400, "tool: required"},
		{"no input", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Bash"}, 400, "input: required"},
		{"input not an object", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Bash", "input": "ls"}, 400, "input: required"},
		{"bad timeout", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Bash", "input": map[string]any{}, "timeout": "soon"}, 400, "timeout: want a Go duration"},
		{"timeout too long", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Bash", "input": map[string]any{}, "timeout": "2h"}, 400, "timeout: at most 1m0s"},
		{"relative cwd", "POST", "/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Bash", "input": map[string]any{}, "cwd": "src"}, 400, "cwd: want an absolute path"},
		{"wrong type", "POST", "/v1/asks", askToken, `{"session_id": 7, "tool": "Bash", "input": {}}`, 400, "session_id: want string"},
		{"not JSON", "POST", "/v1/asks", askToken, `{"session_id": `, 400, "body: not a JSON object"},
		{"too big", "POST", "/v1/asks", askToken, big, 413, "body: over 1048576 bytes"},
		{"unknown id", "GET", "/v1/asks/nope", askToken, nil, 404, "no such ask"},
		{"unknown id decided", "POST", "/v1/asks/nope/decision", consoleToken, map[string]any{"decision": "approve"}, 404, "no such ask"},
		{"bad decision", "POST", "/v1/asks/nope/decision", consoleToken, map[string]any{"decision": "yes"}, 400, "decision: want approve, approve_session or deny"},
		{"bad wait", "GET", "/v1/asks/nope?wait=forever", askToken, nil, 400, "wait: want a Go duration"},
		{"wait too long", "GET", "/v1/asks/nope?wait=121s", askToken, nil, 400, "wait: at most 2m0s"},
		{"bad status", "GET", "/v1/asks?status=denied", consoleToken, nil, 400, "status: only pending"},
		{"unknown endpoint", "GET", "/v1/nothing", askToken, nil, 404, "no such endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, tc.method, u+tc.path, tc.token, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			if e, _ := r.Body["error"].(string); !strings.Contains(e, tc.errText) {
				t.Errorf("error %q, want it to contain %q", e, tc.errText)
			}
		})
	}
}

// The round trip on one process: 201 pending, a long poll that returns when
// the console decides, 409 for a second decision, and the Slack message
// updated by the API's decider. A token never decides its own Ask, and one
// that may only ask sees only its own Asks.
func TestAPIRoundTrip(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	created := call(t, "POST", u+"/v1/asks", askToken, bashAsk("git push origin main"))
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	id, _ := created.Body["id"].(string)
	for _, k := range []string{"id", "status", "decided_by", "reason", "deadline", "session_id", "tool", "message_url"} {
		if _, ok := created.Body[k]; !ok {
			t.Errorf("ask lacks %q: %s", k, created.Raw)
		}
	}
	if created.Body["status"] != "pending" || created.Body["session_id"] != "sess-1" || created.Body["tool"] != "bash" {
		t.Errorf("created ask: %s", created.Raw)
	}
	if r := call(t, "GET", u+"/v1/asks/"+id, otherToken, nil); r.Status != 404 {
		t.Errorf("another ask-only token sees the ask: %d", r.Status)
	}
	if r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, nil); r.Status != 400 {
		t.Errorf("empty decision: %d %s", r.Status, r.Raw)
	}
	s.posted(t, t.Context())
	// Decided once the record says where its message is, so the answer
	// carries message_url (a decision before that still updates the
	// message: TestDecisionBeforeMessageRecorded).
	testwait.For(t, "the Ask's message to be recorded", func() bool { a, err := s.asks.Get(t.Context(), id); return err == nil && a.MessageTS != "" })

	polled := make(chan reply, 1)
	go func() { polled <- call(t, "GET", u+"/v1/asks/"+id+"?wait=60s", askToken, nil) }()
	// Whether the poll is already parked or not, it returns the decision:
	// Watch registers, then reads the record.
	dec := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "deny", "reason": "not on a Friday"})
	if dec.Status != 200 || dec.Body["status"] != "denied" || dec.Body["decided_by"] != "console" {
		t.Fatalf("decision: %d %s", dec.Status, dec.Raw)
	}
	r := <-polled
	if r.Status != 200 || r.Body["status"] != "denied" || r.Body["reason"] != "not on a Friday" || r.Body["decided_by"] != "console" {
		t.Errorf("long poll: %d %s", r.Status, r.Raw)
	}
	if mu, _ := r.Body["message_url"].(string); !strings.HasPrefix(mu, "https://fake-askops.slack.com/archives/"+approvalChannel+"/p") {
		t.Errorf("message_url %q", mu)
	}
	again := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve"})
	if again.Status != 409 {
		t.Fatalf("second decision: %d %s", again.Status, again.Raw)
	}
	if winner, _ := again.Body["ask"].(map[string]any); winner["status"] != "denied" || winner["decided_by"] != "console" {
		t.Errorf("409 does not name the winner: %s", again.Raw)
	}
	// The decider updated the Slack message: no buttons, says who.
	if _, err := s.slack.WaitForCall(t.Context(), "chat.update", func(c fakeslack.Call) bool {
		return c.OK() && !strings.Contains(string(c.RawBlocks), "askops_approve") && strings.Contains(c.Text, "console")
	}); err != nil {
		t.Error(err)
	}

	// Its own Ask: the console may not decide it.
	own := call(t, "POST", u+"/v1/asks", consoleToken, bashAsk("make deploy"))
	if r := call(t, "POST", u+"/v1/asks/"+own.Body["id"].(string)+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 403 {
		t.Errorf("self-approval: %d %s", r.Status, r.Raw)
	}
	// Cancelled by its asker; the list no longer holds it.
	if r := call(t, "GET", u+"/v1/asks?status=pending", consoleToken, nil); r.Status != 200 || len(r.Body["asks"].([]any)) != 1 {
		t.Errorf("pending list: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "DELETE", u+"/v1/asks/"+own.Body["id"].(string), consoleToken, nil); r.Status != 200 || r.Body["status"] != "cancelled" {
		t.Errorf("cancel: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "DELETE", u+"/v1/asks/"+own.Body["id"].(string), consoleToken, nil); r.Status != 409 {
		t.Errorf("second cancel: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "GET", u+"/v1/asks?status=pending", consoleToken, nil); r.Status != 200 || len(r.Body["asks"].([]any)) != 0 {
		t.Errorf("pending list after cancel: %d %s", r.Status, r.Raw)
	}
}

// The policy decides first: a read inside cwd is allowed and a deny rule
// denies, both 200 with no human asked; a read outside cwd asks.
func TestAPIPolicyDecides(t *testing.T) {
	s := newStack(t, stackOptions{rules: []policy.Rule{{Tool: "bash", Command: "rm", Decision: policy.Deny, Reason: "no deletes"}}})
	u := apiServer(t, s).URL
	read := map[string]any{"session_id": "s", "tool": "Read", "input": map[string]any{"file_path": "/home/ana/src/api/go.mod"}, "cwd": "/home/ana/src/api"}
	if r := call(t, "POST", u+"/v1/asks", askToken, read); r.Status != 200 || r.Body["status"] != "approved" || r.Body["decided_by"] != hook.PolicyDecider {
		t.Errorf("read inside cwd: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", u+"/v1/asks", askToken, bashAsk("ls && rm -r build")); r.Status != 200 || r.Body["status"] != "denied" || !strings.Contains(r.Body["reason"].(string), "no deletes") {
		t.Errorf("denied command: %d %s", r.Status, r.Raw)
	}
	read["input"] = map[string]any{"file_path": "/etc/shadow"}
	if r := call(t, "POST", u+"/v1/asks", askToken, read); r.Status != 201 {
		t.Errorf("read outside cwd: %d %s", r.Status, r.Raw)
	}
}

// One Slack thread per session: the first Ask opens it with the session's
// title, later Asks of the session are posted in it, another session gets
// its own. "Approve for session" grants inside the session only.
//
// The first Ask does not wait for its thread's title (a Slack post, paced
// with every other): it is posted unthreaded and before the title.
func TestSessionThreadAndGrant(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	ctx := t.Context()
	first := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy"))
	s.posted(t, ctx)
	titles, err := s.slack.WaitForCalls(ctx, "chat.postMessage", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.svc.threads.Wait() // the thread is recorded
	if len(titles) != 2 || titles[1].Text != "Claude Code · session sess-1 · ~/src/api · laptop-ana" || titles[1].ThreadTS != "" {
		t.Fatalf("thread title: %+v", titles)
	}
	thread := titles[1].TS
	if titles[0].ThreadTS != "" || !strings.Contains(titles[0].Text, "make deploy") {
		t.Errorf("first ask not posted at once, unthreaded, before its thread's title: %+v", titles[0])
	}
	// The grant is recorded by the waiter; then the same call is allowed.
	approveForSession(t, s, u, first.Body["id"].(string), sessions.Key("laptop-ana", "sess-1"))
	if r := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy")); r.Status != 200 || r.Body["status"] != "approved" {
		t.Errorf("the granted call asked again: %d %s", r.Status, r.Raw)
	}
	// Another command in the session asks, in the same thread.
	call(t, "POST", u+"/v1/asks", askToken, bashAsk("make migrate"))
	posts, err := s.slack.WaitForCalls(ctx, "chat.postMessage", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if posts[2].ThreadTS != thread {
		t.Errorf("second ask of the session not in its thread: %+v", posts[2])
	}
	// Another session: its own thread, and the grant does not cover it.
	other := bashAsk("make deploy")
	other["session_id"] = "sess-2"
	if r := call(t, "POST", u+"/v1/asks", askToken, other); r.Status != 201 {
		t.Errorf("the grant leaked into another session: %d %s", r.Status, r.Raw)
	}
	posts, err = s.slack.WaitForCalls(ctx, "chat.postMessage", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.svc.threads.Wait()
	if posts[3].ThreadTS != "" || posts[4].ThreadTS != "" || !strings.Contains(posts[4].Text, "session sess-2") {
		t.Errorf("second session: its Ask unthreaded, then its thread's title: %+v / %+v", posts[3], posts[4])
	}
	call(t, "POST", u+"/v1/asks", askToken, other)
	posts, err = s.slack.WaitForCalls(ctx, "chat.postMessage", 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	if posts[5].ThreadTS != posts[4].TS {
		t.Errorf("second session's next Ask not in its thread: %+v", posts[5])
	}
}

// A decision through the API that beats the record of the Ask's message
// still takes the message's buttons away.
func TestDecisionBeforeMessageRecorded(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	// Slack answers the post slowly: the decision lands before the
	// message's address is saved.
	s.slack.SetDelay("chat.postMessage", 300*time.Millisecond)
	created := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make release"))
	id := created.Body["id"].(string)
	if r := call(t, "POST", u+"/v1/asks/"+id+"/decision", consoleToken, map[string]any{"decision": "approve"}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if _, err := s.slack.WaitForCall(t.Context(), "chat.update", func(c fakeslack.Call) bool {
		return c.OK() && !strings.Contains(string(c.RawBlocks), "askops_approve")
	}); err != nil {
		t.Error(err)
	}
}

// An edit is shown as a diff in the Ask's message.
func TestEditShowsDiff(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	call(t, "POST", u+"/v1/asks", askToken, map[string]any{"session_id": "s", "tool": "Edit", "cwd": "/home/ana/src/api",
		"input": map[string]any{"file_path": "main.go", "old_string": "retries = 3", "new_string": "retries = 5"}})
	a := s.posted(t, t.Context())
	if a.Tool != "edit_file" || a.Path != "/home/ana/src/api/main.go" {
		t.Errorf("edit mapped to %s %s", a.Tool, a.Path)
	}
	posts := s.slack.Calls("chat.postMessage")
	blocks := string(posts[len(posts)-1].RawBlocks)
	if !strings.Contains(blocks, "- retries = 3") || !strings.Contains(blocks, "+ retries = 5") {
		t.Errorf("the message shows no diff: %s", blocks)
	}
}

// Claude Code's HTTP hook answers 200 with a decision whatever goes wrong:
// no token, a wrong token, a body it cannot read.
func TestHTTPHookAlwaysDecides(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL + "/v1/hooks/claude"
	ev := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`
	for _, tc := range []struct{ name, token, body, want string }{
		{"no token", "", ev, "askops refused the hook request: missing or unknown bearer token"},
		{"not JSON", askToken, "{", "askops could not read the hook event"},
		{"no tool", askToken, `{"hook_event_name":"PermissionRequest","tool_input":{}}`, "tool_name: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, "POST", u, tc.token, tc.body)
			// An unreadable event gets PreToolUse's shape (its name is unknown).
			denied := strings.Contains(string(r.Raw), `"behavior":"deny"`) || strings.Contains(string(r.Raw), `"permissionDecision":"deny"`)
			if r.Status != 200 || !denied || !strings.Contains(string(r.Raw), tc.want) {
				t.Errorf("%d %s", r.Status, r.Raw)
			}
		})
	}
	// A read-only call the policy allows answers at once.
	r := call(t, "POST", u, askToken, `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/x"}}`)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"askops: allowed by policy: read_file only reads"}}` + "\n"
	if r.Status != 200 || string(r.Raw) != want {
		t.Errorf("%d %s", r.Status, r.Raw)
	}
}

// A serve shutting down answers the HTTP hooks still waiting with a deny
// (200) before it closes their connections: a dropped connection would let
// Claude Code go ahead.
func TestHTTPHookAnswersAtShutdown(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL + "/v1/hooks/claude"
	got := make(chan reply, 1)
	go func() {
		got <- call(t, "POST", u, askToken, `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`)
	}()
	s.posted(t, t.Context())
	s.svc.Stop()
	r := <-got
	if r.Status != 200 || !strings.Contains(string(r.Raw), `"behavior":"deny"`) || !strings.Contains(string(r.Raw), "cancelled") {
		t.Errorf("%d %s", r.Status, r.Raw)
	}
}
