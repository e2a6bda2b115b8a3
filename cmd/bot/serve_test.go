package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, readBody(t, resp)
}

// TestServeRunFromSlashCommand: a signed /askops run starts a run in a
// thread; its Ask is posted in the thread; an approval resumes it; the
// command ran; the answer is a reply in the thread; metrics count it all.
func TestServeRunFromSlashCommand(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "touch deployed.txt"),
		fakeopenai.Text("deployed and verified"),
	)
	ws := t.TempDir()
	cfg, base, env := agentConfigOnRedis(t, fake, model, ws)
	serve := startServe(ctx, t, env, cfg, base)

	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("/readyz %d: %s", code, body)
	}

	// A non-starter is refused and nothing starts.
	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run deploy it", UserID: "UNOBODY99", ChannelID: "COPS",
	})
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if !strings.Contains(b, "may not start runs") {
		t.Fatalf("non-starter's /askops run answered %s: %s", resp.Status, b)
	}

	resp, err = fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run deploy it", UserID: approverID, ChannelID: "COPS",
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/askops run answered %s", resp.Status)
	}

	m := waitAsk(ctx, t, fake, "COPS")
	if m.ThreadTS == "" {
		t.Fatalf("the Ask was not posted in the run's thread")
	}
	if _, err := os.Stat(filepath.Join(ws, "deployed.txt")); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	click(ctx, t, fake, base, m, approverID, slackui.ActionApprove)

	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == m.ThreadTS && strings.Contains(c.Text, "deployed and verified")
	}); err != nil {
		t.Fatalf("no answer in the thread: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "deployed.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	if _, err := fake.WaitForMessage(ctx, "COPS", m.ThreadTS, func(m fakeslack.Message) bool {
		return strings.Contains(m.Text, "finished")
	}); err != nil {
		t.Fatalf("status message never said finished: %v", err)
	}

	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`askops_asks_total{outcome="approved"} 1`,
		`askops_runs_total{state="finished"} 1`,
		`askops_decision_seconds_count 1`,
		`askops_asks_pending 0`,
		`askops_redis_replica_acks 0`, // a lone server with no replica: the store reported it at open
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}

	// /askops help and unknown subcommands answer ephemerally.
	resp, err = fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{Command: "/askops", Text: "help", UserID: "UNOBODY99", ChannelID: "COPS"})
	if err != nil {
		t.Fatal(err)
	}
	b = readBody(t, resp)
	if !strings.Contains(b, "ephemeral") || !strings.Contains(b, "run TASK") {
		t.Errorf("/askops help: %s", b)
	}
	serve.Stop()
}

func TestServeRefusesForgedRequests(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base, env := httpModeConfig(t, fake, "agent:\n  workspace: "+t.TempDir()+"\n")
	serve := startServe(ctx, t, env, cfg, base)

	forger := fakeslack.New(t, fakeslack.Options{SigningSecret: "not-the-secret"})
	for _, path := range []string{"/slack/interactions", "/slack/commands", "/slack/events"} {
		resp, err := forger.PostSigned(ctx, base+path, "application/x-www-form-urlencoded", []byte("payload={}"), fakeslack.SignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("forged POST %s: %s, want 401", path, resp.Status)
		}
	}
	serve.Stop()
}

// TestRunCommand: `bot run` with the in-memory store takes the click itself;
// a denial reaches the model, which answers; exit 0 with the answer printed.
// A model that fails makes exit 1.
func TestRunCommand(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "touch nope.txt"),
		fakeopenai.Text("I was not allowed to touch it"),
		fakeopenai.Error(http.StatusBadRequest, "model exploded"),
	)
	ws := t.TempDir()
	cfg, base, env := agentConfig(t, fake, model, ws)

	done := startBot(ctx, t, env, "run", "-config", cfg, "touch the file")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	waitHTTP(ctx, t, base+"/healthz")
	click(ctx, t, fake, base, m, approverID, slackui.ActionDeny)
	r := waitResult(t, done)
	if r.code != 0 || !strings.Contains(r.stdout, "I was not allowed to touch it") || !strings.Contains(r.stdout, "denied by "+approverID) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "nope.txt")); err == nil {
		t.Fatal("a denied command ran")
	}
	if n := strings.Count(r.stdout, "I was not allowed to touch it"); n != 1 {
		t.Errorf("the answer is printed %d times:\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stdout, "asking in Slack: touch nope.txt") {
		t.Errorf("no progress line for the Ask:\n%s", r.stdout)
	}

	r = waitResult(t, startBot(ctx, t, env, "run", "-config", cfg, "anything"))
	if r.code != 1 || !strings.Contains(r.stdout, "failed") {
		t.Fatalf("model failure: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = waitResult(t, startBot(ctx, t, env, "run", "-config", cfg))
	if r.code != 2 || !strings.Contains(r.stderr, "no task") {
		t.Fatalf("no task: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// A relative agent.workspace is taken from the directory bot starts in,
// created when absent, and the log says where.
func TestRunCreatesARelativeWorkspace(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, fakeopenai.Text("nothing to do"))
	cfg, _, env := httpModeConfig(t, fake, "agent:\n  workspace: ./work/here\n")
	env["OPENAI_BASE_URL"] = model.BaseURL()
	r := waitResult(t, startBot(ctx, t, env, "run", "-config", cfg, "look around"))
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	want := filepath.Join(dir, "work", "here")
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Fatalf("the workspace %s was not created: %v", want, err)
	}
	if !strings.Contains(r.stderr, "created the agent workspace") || !strings.Contains(r.stderr, want) {
		t.Errorf("no log line naming the created workspace:\n%s", r.stderr)
	}
}

// TestServeMentionOverHTTPOnceDespiteRetries: the Events API URL verification
// challenge is answered, and a mention redelivered with X-Slack-Retry-Num
// starts one run whose answer lands in the mention's thread.
func TestServeMentionOverHTTPOnceDespiteRetries(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, fakeopenai.Text("nothing to do"))
	cfg, base, env := agentConfig(t, fake, model, t.TempDir())
	serve := startServe(ctx, t, env, cfg, base)

	resp, err := fake.PostSigned(ctx, base+"/slack/events", "application/json", []byte(`{"type":"url_verification","challenge":"chal-123","token":"x"}`), fakeslack.SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if b != "chal-123" {
		t.Errorf("url_verification answered %s %q", resp.Status, b)
	}

	envelope, err := fake.EventEnvelope(fake.AppMention(approverID, "COPS", "<@"+fake.BotUserID()+"> check things", "1700000000.000100", ""))
	if err != nil {
		t.Fatal(err)
	}
	for retry := range 3 {
		resp, err := fake.PostEvent(ctx, base+"/slack/events", envelope, fakeslack.EventOptions{RetryNum: retry})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("event delivery %d: %s", retry, resp.Status)
		}
	}
	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == "1700000000.000100" && strings.Contains(c.Text, "nothing to do")
	}); err != nil {
		t.Fatalf("no answer in the mention's thread: %v", err)
	}
	r := serve.Stop()
	// After shutdown every handler has finished: exactly one run happened.
	if n := len(model.Requests()); n != 1 {
		t.Errorf("model called %d times, want 1 (one run for three deliveries)\n%s", n, r.stderr)
	}
}

// TestRunInterrupted: Ctrl-C while bot run waits on an Ask stops the run
// (exit 1) and the Ask ends cancelled, its message updated.
func TestRunInterrupted(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, bashCall("c1", "touch never.txt"))
	ws := t.TempDir()
	cfg, _, env := agentConfigOnRedis(t, fake, model, ws)

	runCtx, interrupt := context.WithCancel(ctx)
	done := startBot(runCtx, t, env, "run", "-config", cfg, "touch never")
	m := waitAsk(ctx, t, fake, "CAPPROVALS")
	askID := buttonValue(m.Blocks, slackui.ActionApprove)
	waitPosted(ctx, t, env["REDIS_URL"], askID)
	interrupt()
	r := waitResult(t, done)
	if r.code != 1 || !strings.Contains(r.stdout, "stopped") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if a := getAsk(ctx, t, env["REDIS_URL"], askID); a.Status != pending.Status(pending.Cancelled) {
		t.Errorf("the Ask is %s, want cancelled", a.Status)
	}
	if final, ok := fake.Message(m.Channel, m.TS); !ok || buttonValue(final.Blocks, slackui.ActionApprove) != "" {
		t.Errorf("the cancelled Ask's message still has its buttons")
	}
	if _, err := os.Stat(filepath.Join(ws, "never.txt")); err == nil {
		t.Fatal("the command ran")
	}
}
