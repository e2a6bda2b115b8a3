package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/slackui"
)

// A whole `serve` in HTTP mode, clicked at as an attacker would: the
// run's starter approving their own run (self_approval off, another
// approver configured), a stranger, a stale replay, and one genuine
// approval delivered three times at once. The command runs once, approved
// by the other approver.
func TestServeClickEdges(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	const other = "UOTHERAPPR"
	fake.SetUserGroup("SAPPROVERS", other)
	model := fakeopenai.Start(t,
		bashCall("c1", "echo ran >> ran.txt"),
		fakeopenai.Text("done"),
	)
	ws := t.TempDir()
	cfg, base, env := agentConfigOnRedis(t, fake, model, ws)
	// A second approver, by group: the starter is not the only approver.
	addApprovals(t, cfg, "    usergroups: [SAPPROVERS]\n")
	serve := startServe(ctx, t, env, cfg, base)

	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run record it", UserID: approverID, ChannelID: "COPS",
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := waitAsk(ctx, t, fake, "COPS")
	ran := filepath.Join(ws, "ran.txt")

	clickAs := func(user, action string, so fakeslack.SignOptions) int {
		t.Helper()
		resp, err := fake.PostInteraction(ctx, base+"/slack/interactions", fake.BlockActionsPayload(fakeslack.BlockActions{
			User: user, Channel: m.Channel, MessageTS: m.TS, ActionID: action, Value: buttonValue(m.Blocks, slackui.ActionApprove),
		}), so)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	// The starter may not approve their own run; a stranger may not at all.
	clickAs(approverID, slackui.ActionApprove, fakeslack.SignOptions{})
	clickAs(approverID, slackui.ActionApproveSession, fakeslack.SignOptions{})
	clickAs("UNOBODY99", slackui.ActionApprove, fakeslack.SignOptions{})
	// The other approver's click, captured 6 minutes ago.
	if code := clickAs(other, slackui.ActionApprove, fakeslack.SignOptions{Timestamp: time.Now().Add(-6 * time.Minute)}); code != http.StatusUnauthorized {
		t.Fatalf("stale click answered %d", code)
	}
	told, err := fake.WaitForCalls(ctx, "chat.postEphemeral", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range told {
		if want := map[string]string{approverID: "You started this run", "UNOBODY99": "not one of the approvers"}[c.User]; !strings.Contains(c.Text, want) {
			t.Errorf("%s told %q, want %q", c.User, c.Text, want)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran without a permitted approval")
	}

	// One genuine approval, delivered three times at once (Slack's
	// retries, or a replay inside the window).
	payload := fake.BlockActionsPayload(fakeslack.BlockActions{
		User: other, Channel: m.Channel, MessageTS: m.TS, ActionID: slackui.ActionApprove, Value: buttonValue(m.Blocks, slackui.ActionApprove),
	})
	form := []byte(url.Values{"payload": {string(payload)}}.Encode())
	now := time.Now()
	sig := fake.Sign(form, now)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			resp, err := fake.PostSigned(ctx, base+"/slack/interactions", "application/x-www-form-urlencoded", form, fakeslack.SignOptions{Timestamp: now, Signature: sig})
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("delivery: %v %v", resp, err)
			}
		})
	}
	wg.Wait()
	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == m.ThreadTS && strings.Contains(c.Text, "done")
	}); err != nil {
		t.Fatalf("no answer: %v", err)
	}
	got, err := os.ReadFile(ran)
	if err != nil || string(got) != "ran\n" {
		t.Fatalf("ran.txt %q (%v): the command must run exactly once", got, err)
	}
	later, err := fake.WaitForCalls(ctx, "chat.postEphemeral", 2, func(c fakeslack.Call) bool { return c.User == other })
	if err != nil {
		t.Fatalf("the repeat deliveries were not answered: %v", err)
	}
	for _, c := range later {
		if !strings.Contains(c.Text, "Already approved by <@"+other+">") {
			t.Errorf("repeat delivery told %q", c.Text)
		}
	}
	_, metrics := get(t, base+"/metrics")
	if !strings.Contains(metrics, `askops_asks_total{outcome="approved"} 1`) {
		t.Errorf("metrics:\n%s", metrics)
	}
	serve.Stop()
}

// addApprovals adds lines (each ending in a newline) to the approvals
// section of the config agentConfigOnRedis wrote at cfg, after its
// approver users.
func addApprovals(t *testing.T, cfg, lines string) {
	t.Helper()
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	users := "    users: [" + approverID + "]\n"
	y := strings.Replace(string(body), users, users+lines, 1)
	if y == string(body) {
		t.Fatalf("config not as expected:\n%s", body)
	}
	writeFile(t, cfg, y)
}
