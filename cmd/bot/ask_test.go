package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

const approverID = "UAPPROVER1"

// httpModeConfig is a config for http mode against the fake Slack,
// listening on a free loopback port. Secrets come from the environment.
func httpModeConfig(t *testing.T, fake *fakeslack.Server, extra string) (path, base string, env map[string]string) {
	t.Helper()
	return fakeSlackConfig(t, fake, "http", extra)
}

// httpModeConfigOnRedis is httpModeConfig with a fresh Redis at env's
// REDIS_URL: the store a serve and the bot asks beside it share.
func httpModeConfigOnRedis(t *testing.T, fake *fakeslack.Server, extra string) (path, base string, env map[string]string) {
	t.Helper()
	path, base, env = httpModeConfig(t, fake, extra)
	env["REDIS_URL"] = redistest.Start(t).URL()
	return path, base, env
}

// agentConfig is httpModeConfig for a serve or bot run that runs the agent:
// its workspace is ws and its model the fake one at model.
func agentConfig(t *testing.T, fake *fakeslack.Server, model *fakeopenai.Server, ws string) (path, base string, env map[string]string) {
	t.Helper()
	path, base, env = httpModeConfig(t, fake, "agent:\n  workspace: "+ws+"\n")
	env["OPENAI_BASE_URL"] = model.BaseURL()
	return path, base, env
}

// agentConfigOnRedis is agentConfig with a fresh Redis at env's REDIS_URL:
// the store a run's Asks are kept in, which the test reads too.
func agentConfigOnRedis(t *testing.T, fake *fakeslack.Server, model *fakeopenai.Server, ws string) (path, base string, env map[string]string) {
	t.Helper()
	path, base, env = agentConfig(t, fake, model, ws)
	env["REDIS_URL"] = redistest.Start(t).URL()
	return path, base, env
}

// bashCall is the fake model's reply that calls the bash tool with
// command (plain text: %q quotes it as JSON would), as call id.
func bashCall(id, command string) fakeopenai.Reply {
	return fakeopenai.Call(fakeopenai.ToolCall{ID: id, Name: "bash", Arguments: fmt.Sprintf(`{"command":%q}`, command)})
}

// socketModeConfig is a socket-mode config against the fake Slack.
func socketModeConfig(t *testing.T, fake *fakeslack.Server, extra string) (path, base string, env map[string]string) {
	t.Helper()
	return fakeSlackConfig(t, fake, "socket", extra)
}

// fakeSlackConfig writes a config in mode ("http" or "socket") against the
// fake Slack, with the secrets that mode needs in env.
func fakeSlackConfig(t *testing.T, fake *fakeslack.Server, mode, extra string) (path, base string, env map[string]string) {
	t.Helper()
	addr := closedPort(t)
	y := fmt.Sprintf(`
slack:
  mode: %s
  api_url: %s
  approval_channel: CAPPROVALS
http:
  listen: %q
openai:
  base_url: http://127.0.0.1:1/v1
  model: fake-model
approvals:
  approvers:
    users: [%s]
%s`, mode, fake.APIURL(), addr, approverID, extra)
	env = map[string]string{"SLACK_BOT_TOKEN": fake.BotToken(), "USER": "tester"}
	if mode == "socket" {
		env["SLACK_APP_TOKEN"] = fake.AppToken()
	} else {
		env["SLACK_SIGNING_SECRET"] = fake.SigningSecret()
	}
	return writeConfig(t, y), "http://" + addr, env
}

type botResult struct {
	code           int
	stdout, stderr string
}

// startBot runs the program in the background; the result arrives on the
// channel when it exits.
func startBot(ctx context.Context, t *testing.T, env map[string]string, args ...string) <-chan botResult {
	t.Helper()
	done := make(chan botResult, 1)
	go func() {
		code, stdout, stderr := runBot(ctx, t, env, args...)
		done <- botResult{code, stdout, stderr}
	}()
	return done
}

func waitResult(t *testing.T, done <-chan botResult) botResult {
	t.Helper()
	return testwait.ReceiveWithin(t, done, 30*time.Second, "bot to exit")
}

// buttonValue finds the value (the Ask id) of the button with actionID.
func buttonValue(blocks []slack.Block, actionID string) string {
	for _, b := range blocks {
		if ab, ok := b.(*slack.ActionBlock); ok {
			for _, el := range ab.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
					return btn.Value
				}
			}
		}
	}
	return ""
}

// waitAsk waits for an open Ask message (one with buttons) in channel and
// returns it, skipping the messages in seen: an Ask decided a moment ago
// keeps its buttons until its update goes out (slackui's UpdateDelay).
func waitAsk(ctx context.Context, t *testing.T, fake *fakeslack.Server, channel string, seen ...fakeslack.Message) fakeslack.Message {
	t.Helper()
	for {
		for _, m := range fake.Messages() {
			if m.Channel == channel && buttonValue(m.Blocks, slackui.ActionApprove) != "" &&
				!slices.ContainsFunc(seen, func(s fakeslack.Message) bool { return s.Channel == m.Channel && s.TS == m.TS }) {
				return m
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no open Ask in %s", channel)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitHTTP polls url until it answers 200 (the bot is listening).
func waitHTTP(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	waitHTTPWith(ctx, t, http.DefaultClient, url)
}

// waitHTTPWith waits until url answers 200 through client.
func waitHTTPWith(ctx context.Context, t *testing.T, client *http.Client, url string) {
	t.Helper()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered 200: %v", url, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func click(ctx context.Context, t *testing.T, fake *fakeslack.Server, target string, m fakeslack.Message, user, actionID string) {
	t.Helper()
	resp, err := fake.PostInteraction(ctx, target+"/slack/interactions", fake.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: m.Channel, MessageTS: m.TS, ActionID: actionID, Value: buttonValue(m.Blocks, slackui.ActionApprove),
	}))
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("click answered %s", resp.Status)
	}
}

// TestAskExitCodes drives `bot ask` end to end with the in-memory store: the
// process serves the interaction endpoint itself, the fake Slack shows the
// Ask and delivers signed clicks.
func TestAskExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		flags      []string
		act        func(ctx context.Context, t *testing.T, fake *fakeslack.Server, base string, m fakeslack.Message)
		wantCode   int
		wantStdout string
		wantMsg    string // in the final message text
	}{
		{name: "approved", wantCode: 0, wantStdout: "approved by " + approverID, wantMsg: approverID,
			act: func(ctx context.Context, t *testing.T, fake *fakeslack.Server, base string, m fakeslack.Message) {
				click(ctx, t, fake, base, m, approverID, slackui.ActionApprove)
			}},
		{name: "denied", wantCode: 1, wantStdout: "denied by " + approverID, wantMsg: approverID,
			act: func(ctx context.Context, t *testing.T, fake *fakeslack.Server, base string, m fakeslack.Message) {
				click(ctx, t, fake, base, m, approverID, slackui.ActionDeny)
			}},
		{name: "a non-approver's click changes nothing; then it expires", flags: []string{"-timeout", "1500ms"}, wantCode: 1, wantStdout: "expired", wantMsg: "xpired",
			act: func(ctx context.Context, t *testing.T, fake *fakeslack.Server, base string, m fakeslack.Message) {
				click(ctx, t, fake, base, m, "UINTRUDER9", slackui.ActionApprove)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := timeoutCtx(t, 30*time.Second)
			fake := fakeslack.New(t, fakeslack.Options{})
			cfg, base, env := httpModeConfig(t, fake, "")
			args := append([]string{"ask", "-config", cfg}, tt.flags...)
			args = append(args, "--", "terraform", "apply", "-auto-approve")
			done := startBot(ctx, t, env, args...)

			m := waitAsk(ctx, t, fake, "CAPPROVALS")
			waitHTTP(ctx, t, base+"/healthz")
			tt.act(ctx, t, fake, base, m)

			r := waitResult(t, done)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantStdout) {
				t.Fatalf("exit %d stdout %q, want %d and %q\nstderr:\n%s", r.code, r.stdout, tt.wantCode, tt.wantStdout, r.stderr)
			}
			if !strings.Contains(fakeslack.BlockText(m.Blocks)+m.Text, "terraform apply -auto-approve") {
				t.Errorf("the Ask does not show the command:\n%s", fakeslack.BlockText(m.Blocks))
			}
			final, err := fake.WaitForMessage(ctx, m.Channel, m.TS, func(m fakeslack.Message) bool {
				return buttonValue(m.Blocks, slackui.ActionApprove) == ""
			})
			if err != nil {
				t.Fatalf("the Ask message still has its buttons: %v", err)
			}
			if tt.wantMsg != "" && !strings.Contains(fakeslack.BlockText(final.Blocks)+final.Text, tt.wantMsg) {
				t.Errorf("final message does not say %q:\n%s", tt.wantMsg, fakeslack.BlockText(final.Blocks))
			}
			if strings.Contains(r.stderr, fake.BotToken()) || strings.Contains(r.stderr, fake.SigningSecret()) {
				t.Errorf("a secret reached the logs:\n%s", r.stderr)
			}
		})
	}
}

// bot ask says on stderr where it waits (the message's link) and until
// when, and how it ended; -o json prints the final Ask on stdout.
func TestAskShowsProgressAndPrintsJSON(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := httpModeConfig(t, fake, "")
	done := startBot(ctx, t, env, "ask", "-config", cfg, "-o", "json", "--", "make", "deploy")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	waitHTTP(ctx, t, base+"/healthz")
	click(ctx, t, fake, base, m, approverID, slackui.ActionDeny)
	r := waitResult(t, done)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (denied)\nstderr:\n%s", r.code, r.stderr)
	}
	link := "https://fake-askops.slack.com/archives/" + m.Channel + "/p" + strings.ReplaceAll(m.TS, ".", "")
	for _, want := range []string{"asking a human about: make deploy", "waiting for a decision in channel " + m.Channel + " (" + link + ") until ", "bot ask: denied after "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	var got struct {
		ID, Status, DecidedBy, Command, MessageURL string
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&struct {
		ID         *string `json:"id"`
		Status     *string `json:"status"`
		DecidedBy  *string `json:"decided_by"`
		Command    *string `json:"command"`
		MessageURL *string `json:"message_url"`
	}{&got.ID, &got.Status, &got.DecidedBy, &got.Command, &got.MessageURL}); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON Ask (%v): %q", err, r.stdout)
	}
	if got.ID == "" || got.Status != "denied" || got.DecidedBy != approverID || got.Command != "make deploy" || got.MessageURL != link {
		t.Errorf("-o json printed %+v", got)
	}
	if r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-o", "yaml", "--", "true")); r.code != 2 || !strings.Contains(r.stderr, "-o must be text or json") {
		t.Errorf("-o yaml: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestAskUnavailableWhenSlackFails(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.FailNext("chat.postMessage", 100, fakeslack.FailMode{SlackError: "channel_not_found"})
	cfg, _, env := httpModeConfig(t, fake, "")
	r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "--", "true"))
	if r.code != 2 || !strings.HasPrefix(r.stdout, "unavailable") {
		t.Fatalf("exit %d stdout %q, want 2 and unavailable\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestAskCancelledByInterrupt(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, _, env := httpModeConfigOnRedis(t, fake, "")
	botCtx, interrupt := context.WithCancel(ctx)
	done := startBot(botCtx, t, env, "ask", "-config", cfg, "--", "rm", "-rf", "build")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	waitPosted(ctx, t, env["REDIS_URL"], buttonValue(m.Blocks, slackui.ActionApprove))
	interrupt() // what Ctrl-C does through signal.NotifyContext
	r := waitResult(t, done)
	if r.code != 1 || !strings.HasPrefix(r.stdout, "cancelled") {
		t.Fatalf("exit %d stdout %q, want 1 and cancelled\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := fake.WaitForMessage(ctx, m.Channel, m.TS, func(m fakeslack.Message) bool {
		return buttonValue(m.Blocks, slackui.ActionApprove) == ""
	}); err != nil {
		t.Fatalf("the cancelled Ask's message still has buttons: %v\nstderr:\n%s\nupdates: %+v", err, r.stderr, fake.Calls("chat.update"))
	}
}

// TestAskDecidedThroughServe: with Redis, `bot ask` does not listen; a click
// delivered to a `bot serve` replica reaches it through the store.
func TestAskDecidedThroughServe(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := httpModeConfigOnRedis(t, fake, "")
	serve := startServe(ctx, t, env, cfg, base)

	done := startBot(ctx, t, env, "ask", "-config", cfg, "-reason", "nightly deploy", "--", "make", "deploy")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	if !strings.Contains(fakeslack.BlockText(m.Blocks), "nightly deploy") {
		t.Errorf("the Ask does not show the reason:\n%s", fakeslack.BlockText(m.Blocks))
	}
	click(ctx, t, fake, base, m, approverID, slackui.ActionApprove)
	r := waitResult(t, done)
	if r.code != 0 || !strings.Contains(r.stdout, "approved by "+approverID) {
		t.Fatalf("exit %d stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	serve.Stop()
}

// TestAskSessionGrant: with -session, "Approve for session" covers the same
// command in the same directory for later asks of the session (through
// Redis, as separate processes); another command or session still asks.
func TestAskSessionGrant(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := httpModeConfigOnRedis(t, fake, "")
	serve := startServe(ctx, t, env, cfg, base)

	done := startBot(ctx, t, env, "ask", "-config", cfg, "-session", "deploy-42", "--", "make", "deploy")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	click(ctx, t, fake, base, m, approverID, slackui.ActionApproveSession)
	if r := waitResult(t, done); r.code != 0 || !strings.Contains(r.stdout, "approved for session by "+approverID) {
		t.Fatalf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	before := countAsks(fake)
	r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-session", "deploy-42", "--", "make", "deploy"))
	if r.code != 0 || !strings.Contains(r.stdout, "approved by grant") {
		t.Fatalf("granted ask: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if countAsks(fake) != before {
		t.Error("a granted command was asked again")
	}
	// Another session, or another command, is asked (and here times out).
	for _, args := range [][]string{{"-session", "other", "--", "make", "deploy"}, {"-session", "deploy-42", "--", "make", "destroy"}} {
		r := waitResult(t, startBot(ctx, t, env, append([]string{"ask", "-config", cfg, "-timeout", "300ms"}, args...)...))
		if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") {
			t.Errorf("ask %q: exit %d stdout %q", args, r.code, r.stdout)
		}
	}
	serve.Stop()
}

// A standing grant covers bot ask without -session (as it does with one);
// another command is still asked.
func TestAskStandingGrantWithoutSession(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, _, env := httpModeConfigOnRedis(t, fake, "")

	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	scope, err := grants.ScopeFor(policy.Call{Tool: "bash", Command: "make deploy", Cwd: cwd, Workspace: cwd})
	if err != nil {
		t.Fatal(err)
	}
	g, err := grantStore(t, env["REDIS_URL"]).RecordStanding(ctx, scope, "admin")
	if err != nil {
		t.Fatal(err)
	}

	r := waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "--", "make", "deploy"))
	if r.code != 0 || !strings.Contains(r.stdout, "approved by standing grant "+g.ID) {
		t.Fatalf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if n := countAsks(fake); n != 0 {
		t.Errorf("%d asks posted for a command a standing grant covers", n)
	}
	r = waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "300ms", "--", "make", "destroy"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "expired") {
		t.Errorf("ungranted ask: exit %d stdout %q", r.code, r.stdout)
	}
}

// bot ask -config carries every requirement the verdict states: a rule's
// quorum (one approval of two is not an approval: the ask waits and here
// expires) and a deny rule (denied without asking anyone, as the API and
// the hooks do).
func TestAskCarriesTheVerdict(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := httpModeConfig(t, fake, `policy:
  rules:
    - {tool: bash, command: "terraform apply", decision: ask, approvals: 2}
    - {tool: bash, command: "terraform destroy", decision: deny, reason: "never from a script"}
`)
	done := startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "3s", "--", "terraform", "apply")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	waitHTTP(ctx, t, base+"/healthz")
	click(ctx, t, fake, base, m, approverID, slackui.ActionApprove)
	r := waitResult(t, done)
	if r.code == 0 || !strings.HasPrefix(r.stdout, "expired") {
		t.Errorf("one approval of the two the rule needs: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}

	// One argument is a command line, as bash reads it: the rule and its
	// quorum apply to it as to the same words given apart.
	done = startBot(ctx, t, env, "ask", "-config", cfg, "-timeout", "3s", "--", "terraform apply -auto-approve")
	m = waitAsk(ctx, t, fake, "CAPPROVALS", m)
	if shown := fakeslack.BlockText(m.Blocks); !strings.Contains(shown, "terraform apply -auto-approve") || strings.Contains(shown, "'terraform apply") {
		t.Errorf("the one-argument command is not shown as the command line it is:\n%s", shown)
	}
	click(ctx, t, fake, base, m, approverID, slackui.ActionApprove)
	r = waitResult(t, done)
	if r.code == 0 || !strings.HasPrefix(r.stdout, "expired") {
		t.Errorf("one argument, one approval of the two the rule needs: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}

	before := countAsks(fake)
	r = waitResult(t, startBot(ctx, t, env, "ask", "-config", cfg, "--", "terraform", "destroy"))
	if r.code != 1 || !strings.HasPrefix(r.stdout, "denied by askops policy") || !strings.Contains(r.stdout, "never from a script") {
		t.Errorf("denied command: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if countAsks(fake) != before {
		t.Error("a command a deny rule forbids was asked")
	}
}

// bot ask reads its command as bash would: one argument is a command line,
// several are the words of one command; nothing to ask about is refused.
func TestAskCommandIsReadAsBashWould(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"terraform apply -auto-approve"}, "terraform apply -auto-approve"},
		{[]string{"terraform", "apply", "-auto-approve"}, "terraform apply -auto-approve"},
		{[]string{"make deploy && make verify"}, "make deploy && make verify"},
		{[]string{"/opt/My Tools/deploy", "--now"}, "'/opt/My Tools/deploy' --now"},
		{[]string{"ls"}, "ls"},
	} {
		if got, err := askCommand(tc.argv); err != nil || got != tc.want {
			t.Errorf("askCommand(%q) = %q, %v; want %q", tc.argv, got, err, tc.want)
		}
	}
	if _, err := askCommand([]string{"  "}); err == nil {
		t.Error("an empty command was not refused")
	}
}
