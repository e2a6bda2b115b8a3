package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// replicaConfig writes a config for one serve replica on its own port; the
// replicas share Redis, the fake Slack and the fake model. approvalsExtra
// goes under approvals:.
func replicaConfig(t *testing.T, fake *fakeslack.Server, ws, approvalsExtra string) (path, base string) {
	t.Helper()
	addr := closedPort(t)
	y := fmt.Sprintf(`
slack:
  mode: http
  api_url: %s
  approval_channel: CAPPROVALS
http:
  listen: %q
openai:
  model: fake-model
approvals:
  approvers:
    users: [%s]
%sagent:
  workspace: %s
`, fake.APIURL(), addr, approverID, approvalsExtra, ws)
	return writeConfig(t, y), "http://" + addr
}

// replicaEnv is the environment replicaConfig's serves share: the fake
// Slack's secrets, the Redis at redisURL and the model at modelURL.
func replicaEnv(fake *fakeslack.Server, redisURL, modelURL string) map[string]string {
	return map[string]string{
		"SLACK_BOT_TOKEN": fake.BotToken(), "SLACK_SIGNING_SECRET": fake.SigningSecret(),
		"REDIS_URL": redisURL, "OPENAI_BASE_URL": modelURL,
	}
}

// startReplicas starts two serve replicas, A and B, with env, each on its
// own port (replicaConfig) and sharing ws, and waits until both answer.
func startReplicas(ctx context.Context, t *testing.T, fake *fakeslack.Server, env map[string]string, ws string) (a, b *serving) {
	t.Helper()
	cfgA, baseA := replicaConfig(t, fake, ws, "")
	cfgB, baseB := replicaConfig(t, fake, ws, "")
	return startServe(ctx, t, env, cfgA, baseA), startServe(ctx, t, env, cfgB, baseB)
}

// TestTwoReplicas: a run on replica A asks; clicks delivered to replica B
// decide it. A forged, a stale and a non-approver's click change nothing; a
// denial with a reason reaches A's model.
func TestTwoReplicas(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "touch forbidden.txt"),
		fakeopenai.Text("understood, not touching it"),
	)
	ws := t.TempDir()
	srvA, srvB := startReplicas(ctx, t, fake, replicaEnv(fake, rds.URL(), model.BaseURL()), ws)
	baseA, baseB := srvA.base, srvB.base

	resp, err := fake.PostSlashCommand(ctx, baseA+"/slack/commands", slack.SlashCommand{Command: "/askops", Text: "run make the file", UserID: approverID, ChannelID: "COPS"})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := waitAsk(ctx, t, fake, "COPS")
	askID := buttonValue(m.Blocks, slackui.ActionApprove)
	payload := fake.BlockActionsPayload(fakeslack.BlockActions{User: approverID, Channel: m.Channel, MessageTS: m.TS, ActionID: slackui.ActionApprove, Value: askID})

	// Forged and stale clicks are refused at the door; a non-approver is told no.
	for name, opts := range map[string]fakeslack.SignOptions{
		"forged": {Secret: "guessed-secret"},
		"stale":  {Timestamp: time.Now().Add(-6 * time.Minute)},
	} {
		resp, err := fake.PostInteraction(ctx, baseB+"/slack/interactions", payload, opts)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s click: %s, want 401", name, resp.Status)
		}
	}
	click(ctx, t, fake, baseB, m, "UINTRUDER9", slackui.ActionApprove)
	if _, err := fake.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == "UINTRUDER9" }); err != nil {
		t.Fatalf("the non-approver was not told: %v", err)
	}
	if a := getAsk(ctx, t, rds.URL(), askID); a.Status != pending.StatusPending {
		t.Fatalf("after refused clicks the Ask is %s, want pending", a.Status)
	}

	// Deny with a reason, through B: the button opens the modal, the
	// submission decides.
	click(ctx, t, fake, baseB, m, approverID, slackui.ActionDenyReason)
	opened, err := fake.WaitForCall(ctx, "views.open", nil)
	if err != nil {
		t.Fatalf("no reason modal: %v", err)
	}
	_ = opened
	views := fake.Views()
	if len(views) == 0 {
		t.Fatal("no view recorded")
	}
	sub := fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: approverID, ViewID: views[len(views)-1].ID,
		Values: map[string]map[string]string{slackui.BlockDenyReason: {slackui.ActionDenyReasonInput: "production is frozen today"}},
	})
	resp, err = fake.PostInteraction(ctx, baseB+"/slack/interactions", sub)
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if resp.StatusCode != 200 || strings.Contains(b, "errors") {
		t.Fatalf("reason submission: %s %s", resp.Status, b)
	}

	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == m.ThreadTS && strings.Contains(c.Text, "understood, not touching it")
	}); err != nil {
		t.Fatalf("run on A did not finish: %v", err)
	}
	last, ok := model.Last()
	if !ok || !strings.Contains(string(last.Raw), "production is frozen today") {
		t.Errorf("the model's next request lacks the reason:\n%s", last.Raw)
	}
	if _, err := os.Stat(filepath.Join(ws, "forbidden.txt")); err == nil {
		t.Error("a denied command ran")
	}

	srvA.Stop()
	srvB.Stop()
}

// TestSweepExpiresOrphanedAsk: an Ask whose waiting process is gone (as
// after kill -9) is expired by a serve replica's sweep, which updates its
// message.
func TestSweepExpiresOrphanedAsk(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	cfg, base := replicaConfig(t, fake, t.TempDir(), "  sweep_interval: 200ms\n")
	env := replicaEnv(fake, rds.URL(), "http://127.0.0.1:1/v1")

	// The orphan: recorded and posted by a process that then died.
	store := pendingStore(ctx, t, rds.URL())
	a, err := store.Create(ctx, pending.Request{RunID: "run-dead", Tool: "bash", Args: `{"command":"reboot"}`, Summary: "reboot"}, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	msg := slackui.RenderAsk(a, slackui.RenderOptions{})
	ch, ts, err := api.PostMessageContext(ctx, "CAPPROVALS", slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetMessage(ctx, a.ID, ch, ts); err != nil {
		t.Fatal(err)
	}

	serve := startServe(ctx, t, env, cfg, base)
	final, err := fake.WaitForMessage(ctx, ch, ts, func(m fakeslack.Message) bool { return m.Updates > 0 })
	if err != nil {
		t.Fatalf("the orphan's message was never updated: %v", err)
	}
	if txt := strings.ToLower(final.Text + fakeslack.BlockText(final.Blocks)); !strings.Contains(txt, "expired") || buttonValue(final.Blocks, slackui.ActionApprove) != "" {
		t.Errorf("message after the sweep:\n%s", txt)
	}
	if got := getAsk(ctx, t, rds.URL(), a.ID); got.Status != pending.Status(pending.Expired) {
		t.Errorf("the orphan is %s, want expired", got.Status)
	}
	if _, m := get(t, base+"/metrics"); !strings.Contains(m, `askops_asks_total{outcome="expired"} 1`) {
		t.Errorf("the swept Ask is not counted:\n%s", m)
	}
	serve.Stop()
}

// pendingStore opens the Ask store at redisURL, as another process sharing
// the Redis would, for a test to read or plant Asks; it is closed when the
// test ends.
func pendingStore(ctx context.Context, t *testing.T, redisURL string) *pending.RedisStore {
	t.Helper()
	client, err := redisconn.Open(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	store, err := pending.NewRedisStore(ctx, client, pending.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// getAsk reads the Ask id from the store at redisURL.
func getAsk(ctx context.Context, t *testing.T, redisURL, id string) pending.Ask {
	t.Helper()
	a, err := pendingStore(ctx, t, redisURL).Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
