package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

const (
	anaToken     = "e2e-ana-token-4f1c9a"
	consoleToken = "e2e-console-token-8b2d7e"
)

var apiBlock = `api:
  tokens:
    - {name: laptop-ana, token: "` + anaToken + `", scopes: [ask]}
    - {name: console, token: "` + consoleToken + `", scopes: [ask, decide]}
`

// apiDo is one request to the Ask API; a transport failure fails the test
// and is status 0.
func apiDo(ctx context.Context, t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	req, err := apiRequest(ctx, method, url, token, body)
	if err != nil {
		t.Fatal(err)
	}
	status, m, err := apiSend(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
	}
	return status, m
}

// apiRequest is a request to the Ask API: body (nil: none) as JSON, token
// as the bearer.
func apiRequest(ctx context.Context, method, url, token string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// apiSend sends an Ask API request and decodes its JSON reply; a transport
// failure is status 0.
func apiSend(req *http.Request) (int, map[string]any, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

// The API round trip across two replicas on one Redis: the Ask is created
// on A, clicked on B (Slack delivers the click there), and A's long poll
// returns with the decision, woken by the store's announcement. The Ask is
// in its session's thread.
func TestGatewayAcrossReplicas(t *testing.T) {
	w := newWorld(t)
	ctx := testCtxFor(t, 90*time.Second)
	a := w.serve(ctx, t, "gw-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "gw-b", settings{Extra: apiBlock})

	var latencies []time.Duration
	for i, tc := range []struct{ action, status string }{
		{slackui.ActionApprove, "approved"},
		{slackui.ActionDeny, "denied"},
		{slackui.ActionApprove, "approved"},
	} {
		cmd := "terraform apply -target=module.db" + strings.Repeat(" ", i)
		status, created := apiDo(ctx, t, "POST", a.base+"/v1/asks", anaToken, map[string]any{
			"session_id": "e2e-sess", "agent": "Claude Code", "tool": "Bash",
			"input": map[string]any{"command": cmd}, "cwd": w.ws, "timeout": "45s",
		})
		if status != http.StatusCreated {
			t.Fatalf("create on A: %d %v", status, created)
		}
		id := created["id"].(string)
		m := w.waitOpenAsk(ctx, t, created["id"].(string))

		type polled struct {
			status int
			ask    map[string]any
			at     time.Time
		}
		got := make(chan polled, 1)
		go func() {
			s, body := apiDo(ctx, t, "GET", a.base+"/v1/asks/"+id+"?wait=60s", anaToken, nil)
			got <- polled{s, body, time.Now()}
		}()
		clicked := time.Now()
		w.clickOn(ctx, t, b, m, approverID, tc.action)
		p := <-got
		if p.status != 200 || p.ask["status"] != tc.status || p.ask["decided_by"] != approverID {
			t.Fatalf("long poll on A: %d %v", p.status, p.ask)
		}
		latencies = append(latencies, p.at.Sub(clicked))
		if i == 0 {
			// The session's first Ask waited for no thread: it is
			// unthreaded, and the thread opens behind it.
			if u, _ := p.ask["message_url"].(string); strings.Contains(u, "thread_ts=") {
				t.Errorf("the session's first Ask was posted in a thread: %s", u)
			}
			waitThread(ctx, t, w, "gw:laptop-ana:e2e-sess") // the session as the gateway keys it: its caller's
			continue
		}
		// The permalink of the Ask's reply in its session's thread.
		if u, _ := p.ask["message_url"].(string); !strings.HasPrefix(u, "https://fake-askops.slack.com/archives/"+m.Channel+"/p"+strings.ReplaceAll(m.TS, ".", "")+"?thread_ts=") {
			t.Errorf("message_url %v for message %s/%s", p.ask["message_url"], m.Channel, m.TS)
		}
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	t.Logf("click on B -> long poll on A returns: %v", latencies)

	// The first Ask is unthreaded, the next two in the thread the
	// session's title opened.
	var title string
	threads := map[string]int{}
	for _, c := range w.slack.Calls("chat.postMessage") {
		if strings.Contains(c.Text, "Claude Code · session e2e-sess") {
			title = c.TS
		}
		if askID(c.Blocks) != "" {
			threads[c.ThreadTS]++
		}
	}
	if title == "" || threads[title] != 2 || threads[""] != 1 {
		t.Errorf("want the first ask unthreaded and the other 2 in the session's thread %q: %v", title, threads)
	}
}

// waitThread waits until the session's thread is recorded for every
// replica (sessions.RedisStore's thread key).
func waitThread(ctx context.Context, t *testing.T, w *world, session string) {
	t.Helper()
	key := "askops:{askops}:gateway:thread:" + session
	testwait.Until(ctx, t, "the session's thread to be recorded at "+key, func() bool {
		v, err := w.redis.Do("EXISTS", key)
		return err == nil && v == ":1"
	})
}

// `bot hook claude` as Claude Code runs it (-url, the token in the
// environment): the event on stdin, the click on the other replica, the
// answer on stdout, exit 0. With askops unreachable it still exits 0, with
// a deny.
func TestHookCommandThroughAPI(t *testing.T) {
	w := newWorld(t)
	ctx := testCtxFor(t, 90*time.Second)
	a := w.serve(ctx, t, "hook-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "hook-b", settings{Extra: apiBlock})
	event := `{"session_id":"3f2a9c1e","cwd":"` + w.ws + `","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"git push origin main","description":"push"}}`

	hook := func(url string) (string, string, int) {
		cmd := exec.CommandContext(ctx, botBinary, "hook", "claude", "-url", url)
		cmd.Env = append(childEnv(), "ASKOPS_TOKEN="+anaToken)
		cmd.Stdin = strings.NewReader(event)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() { o, e, c := hook(a.base); done <- result{o, e, c} }()
	m := w.waitOpenAsk(ctx, t, "git push origin main")
	w.click(ctx, t, b.base, m, approverID, slackui.ActionApprove)
	r := <-done
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"git push origin main","description":"push"}}}}` + "\n"
	if r.code != 0 || r.out != want {
		t.Errorf("hook: exit %d, stdout %q, stderr %s", r.code, r.out, r.errOut)
	}

	// Nothing listens there: deny, exit 0.
	out, errOut, code := hook("http://" + closedPort(t))
	if code != 0 || !strings.Contains(out, `"behavior":"deny"`) || !strings.Contains(out, "askops could not be reached") {
		t.Errorf("unreachable: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
}

// `bot mcp` over real stdio, driven by the go-sdk client as Claude Code
// drives a permission-prompt tool: a denial on the other replica comes back
// as the tool's deny text.
func TestMCPStdioThroughBinary(t *testing.T) {
	w := newWorld(t)
	ctx := testCtxFor(t, 90*time.Second)
	a := w.serve(ctx, t, "mcp-a", settings{Extra: apiBlock})
	b := w.serve(ctx, t, "mcp-b", settings{Extra: apiBlock})

	cmd := exec.Command(botBinary, "mcp", "-url", a.base, "-session", "mcp-e2e")
	cmd.Env = append(childEnv(), "ASKOPS_TOKEN="+anaToken)
	cmd.Dir = w.ws
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "approval_prompt", Arguments: map[string]any{
			"tool_name": "Write", "input": map[string]any{"file_path": w.ws + "/deploy.sh", "content": "make deploy\n"}, "tool_use_id": "toolu_9",
		}})
		got <- answer{res, err}
	}()
	m := w.waitOpenAsk(ctx, t, "deploy.sh")
	w.click(ctx, t, b.base, m, approverID, slackui.ActionDeny)
	ans := <-got
	if ans.err != nil {
		t.Fatal(ans.err)
	}
	text := ans.res.Content[0].(*mcp.TextContent).Text
	want := `{"behavior":"deny","message":"Denied by ` + approverID + ` in Slack (no reason given). The action was not performed. Do not retry this call; ask the user."}`
	if text != want {
		t.Errorf("answer %s\nwant   %s", text, want)
	}
}
