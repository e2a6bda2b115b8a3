package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/slackui"
)

func socketClick(ctx context.Context, t *testing.T, fake *fakeslack.Server, m fakeslack.Message, user, actionID string) {
	t.Helper()
	id, err := fake.SendInteractive(ctx, fake.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: m.Channel, MessageTS: m.TS, ActionID: actionID, Value: buttonValue(m.Blocks, slackui.ActionApprove),
	}))
	if err != nil {
		t.Fatalf("socket click: %v", err)
	}
	if _, err := fake.WaitForAck(ctx, id); err != nil {
		t.Fatalf("click not acknowledged: %v", err)
	}
}

// TestAskOverSocketMode: with the in-memory store in socket mode, bot ask
// takes its click over Socket Mode and opens no port.
func TestAskOverSocketMode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := socketModeConfig(t, fake, "")
	done := startBot(ctx, t, env, "ask", "-config", cfg, "--", "systemctl", "restart", "nginx")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	id, err := fake.SendInteractive(ctx, fake.BlockActionsPayload(fakeslack.BlockActions{
		User: approverID, Channel: m.Channel, MessageTS: m.TS, ActionID: slackui.ActionApprove, Value: buttonValue(m.Blocks, slackui.ActionApprove),
	}))
	if err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithTimeout(ctx, 10*time.Second)
	defer acancel()
	if _, err := fake.WaitForAck(actx, id); err != nil {
		cancel()
		r := waitResult(t, done)
		t.Fatalf("click not acknowledged: %v\nenvelopes: %+v\nstderr:\n%s", err, fake.Envelopes(), r.stderr)
	}
	r := waitResult(t, done)
	if r.code != 0 || !strings.Contains(r.stdout, "approved by "+approverID) {
		t.Fatalf("exit %d stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := httpGet(base + "/healthz"); err == nil {
		t.Errorf("bot ask in socket mode opened %s", base)
	}
}

func httpGet(url string) (int, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestServeSocketModeMentionRunsInThread: an app_mention (delivered twice,
// as Slack retries) starts exactly one run in the mention's thread;
// "Approve for session" lets the identical next call run without a new Ask;
// slash commands answer through the Socket Mode ack.
func TestServeSocketModeMentionRunsInThread(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, bashCall("c1", "echo x >> log.txt"), bashCall("c2", "echo x >> log.txt"), fakeopenai.Text("appended twice"))
	ws := t.TempDir()
	cfg, _, env := socketModeConfig(t, fake, "agent:\n  workspace: "+ws+"\n")
	env["REDIS_URL"] = rds.URL()
	env["OPENAI_BASE_URL"] = model.BaseURL()

	serve := runServe(ctx, t, env, cfg)
	if err := fake.WaitForSocket(ctx); err != nil {
		t.Fatal(err)
	}

	// /askops help over Socket Mode: the reply travels in the ack.
	id, err := fake.SendSlashCommand(ctx, slack.SlashCommand{Command: "/askops", Text: "help", UserID: approverID, ChannelID: "COPS"})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := fake.WaitForAck(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(ack); !strings.Contains(string(js), "run TASK") {
		t.Errorf("help ack: %s", js)
	}

	env1, err := fake.EventEnvelope(fake.AppMention(approverID, "COPS", "<@"+fake.BotUserID()+"> append to the log", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // Slack redelivers; one run only
		if _, err := fake.SendEvent(ctx, env1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return c.Channel == "COPS" && c.OK() }); err != nil {
		t.Fatalf("nothing posted for the mention: %v\n%s", err, serve.Halt().stderr)
	}
	m := waitAsk(ctx, t, fake, "COPS")
	if m.ThreadTS == "" {
		t.Fatal("the Ask is not in the mention's thread")
	}
	socketClick(ctx, t, fake, m, approverID, slackui.ActionApproveSession)

	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == m.ThreadTS && strings.Contains(c.Text, "appended twice")
	}); err != nil {
		t.Fatalf("no answer in the thread: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(ws, "log.txt"))
	if err != nil || string(b) != "x\nx\n" {
		t.Fatalf("log.txt = %q, %v; want both calls to have run once\n%s", b, err, serve.Halt().stderr)
	}
	asks := 0
	for _, c := range fake.Calls("chat.postMessage") {
		if buttonValue(c.Blocks, slackui.ActionApprove) != "" {
			asks++
		}
	}
	if asks != 1 {
		t.Errorf("%d Asks posted, want 1 (the second call is inside the session grant, and the retried event starts no run)", asks)
	}
	if got := len(model.Requests()); got != 3 {
		t.Errorf("model saw %d requests, want 3 (one run)", got)
	}
	serve.Stop()
}

// TestServeShutdownCancelsAsks: SIGTERM while a run waits on an Ask ends the
// Ask cancelled, updates its message and exits 0.
func TestServeShutdownCancelsAsks(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, bashCall("c1", "touch late.txt"))
	ws := t.TempDir()
	cfg, base, env := agentConfigOnRedis(t, fake, model, ws)

	serve := startServe(ctx, t, env, cfg, base)
	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{Command: "/askops", Text: "run touch it", UserID: approverID, ChannelID: "COPS"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := waitAsk(ctx, t, fake, "COPS")
	waitPosted(ctx, t, env["REDIS_URL"], buttonValue(m.Blocks, slackui.ActionApprove))
	r := serve.Stop() // SIGTERM while the run waits on the Ask
	final, ok := fake.Message(m.Channel, m.TS)
	if !ok || buttonValue(final.Blocks, slackui.ActionApprove) != "" || !strings.Contains(strings.ToLower(fakeslack.BlockText(final.Blocks)+final.Text), "cancel") {
		t.Fatalf("the Ask's message was not updated to cancelled:\n%s\n%s\nstderr:\n%s", final.Text, fakeslack.BlockText(final.Blocks), r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "late.txt")); err == nil {
		t.Fatal("the command ran although its Ask was cancelled")
	}
}

// waitPosted waits until the Ask's record says where its message is: the
// bot has seen its post succeed, so it knows which message to update. (An
// interrupt while the post is still in flight leaves a message the bot
// cannot know about; see the report.)
func waitPosted(ctx context.Context, t *testing.T, redisURL, askID string) {
	t.Helper()
	store := pendingStore(ctx, t, redisURL)
	for {
		a, err := store.Get(ctx, askID)
		if err == nil && a.MessageTS != "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ask %s never recorded its message: %v", askID, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
