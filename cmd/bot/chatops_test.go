package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/chatops"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/slackui"
)

// slash sends a signed /askops command in channel COPS and returns the
// immediate reply.
func slash(ctx context.Context, t *testing.T, fake *fakeslack.Server, base, user, text string) chatops.SlashReply {
	t.Helper()
	return slashIn(ctx, t, fake, base, "COPS", user, text)
}

// slashIn is slash in channel.
func slashIn(ctx context.Context, t *testing.T, fake *fakeslack.Server, base, channel, user, text string) chatops.SlashReply {
	t.Helper()
	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{Command: "/askops", Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		t.Fatal(err)
	}
	b := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("/askops %s: %s %s", text, resp.Status, b)
	}
	var r struct {
		ResponseType string          `json:"response_type"`
		Text         string          `json:"text"`
		Blocks       json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(b), &r); err != nil {
		t.Fatalf("/askops %s: reply %q: %v", text, b, err)
	}
	out := chatops.SlashReply{ResponseType: r.ResponseType, Text: r.Text}
	if len(r.Blocks) > 0 {
		var blocks slack.Blocks
		if err := json.Unmarshal(r.Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
		out.Blocks = blocks.BlockSet
	}
	return out
}

func revokeValue(blocks []slack.Block) string {
	for _, b := range blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.Accessory != nil && s.Accessory.ButtonElement != nil && s.Accessory.ButtonElement.ActionID == chatops.ActionRevokeGrant {
			return s.Accessory.ButtonElement.Value
		}
	}
	return ""
}

// clickRevoke clicks, as user, the Revoke button of grant on a /askops
// grants reply in channel, delivered to the serve at base.
func clickRevoke(ctx context.Context, t *testing.T, fake *fakeslack.Server, base, user, channel, grant string) {
	t.Helper()
	resp, err := fake.PostInteraction(ctx, base+"/slack/interactions", fake.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: channel, MessageTS: "1.000001", ActionID: chatops.ActionRevokeGrant, Value: grant,
	}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// waitSlackPost waits for a chat.postMessage whose text holds text and
// returns it; the test fails if none comes before ctx ends.
func waitSlackPost(ctx context.Context, t *testing.T, fake *fakeslack.Server, text string) fakeslack.Call {
	t.Helper()
	c, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return strings.Contains(c.Text, text) })
	if err != nil {
		t.Fatalf("no %q in Slack: %v", text, err)
	}
	return c
}

// pendingRunID finds a run's id in a /askops pending reply.
var pendingRunID = regexp.MustCompile("run `(run_[a-z2-7]+)`")

// waitStoppedRunsAsk waits until a stopped run's Ask message m has lost
// its buttons, and checks it then says the Ask was cancelled.
func waitStoppedRunsAsk(ctx context.Context, t *testing.T, fake *fakeslack.Server, m fakeslack.Message) {
	t.Helper()
	final, err := fake.WaitForMessage(ctx, m.Channel, m.TS, func(m fakeslack.Message) bool { return buttonValue(m.Blocks, slackui.ActionApprove) == "" })
	if err != nil {
		t.Fatalf("the stopped run's Ask message keeps its buttons: %v", err)
	}
	if txt := strings.ToLower(fakeslack.BlockText(final.Blocks) + final.Text); !strings.Contains(txt, "cancel") {
		t.Errorf("the stopped run's Ask message does not say cancelled:\n%s", txt)
	}
}

// TestChatOps walks the slash command: grants with Revoke, pending, stop,
// mode never, each refused to those who may not.
func TestChatOps(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "echo hi > one.txt"),
		fakeopenai.Text("run one done"),
		bashCall("c2", "touch two.txt"),
		bashCall("c3", "touch three.txt"),
		fakeopenai.Text("not allowed while unattended"),
	)
	ws := t.TempDir()
	cfg, base, env := agentConfig(t, fake, model, ws)
	serve := startServe(ctx, t, env, cfg, base)

	// Run one: approved for session, so a grant exists.
	slash(ctx, t, fake, base, approverID, "run write one")
	m := waitAsk(ctx, t, fake, "COPS")
	click(ctx, t, fake, base, m, approverID, slackui.ActionApproveSession)
	waitSlackPost(ctx, t, fake, "run one done")

	g := slash(ctx, t, fake, base, approverID, "grants")
	value := revokeValue(g.Blocks)
	if g.ResponseType != "ephemeral" || value == "" || !strings.Contains(fakeslack.BlockText(g.Blocks), "echo hi") {
		t.Fatalf("/askops grants: %+v\n%s", g, fakeslack.BlockText(g.Blocks))
	}
	revoke := func(user string) {
		t.Helper()
		clickRevoke(ctx, t, fake, base, user, "COPS", value)
		if _, err := fake.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == user }); err != nil {
			t.Fatalf("no reply to %s's revoke: %v", user, err)
		}
	}
	revoke("UNOBODY99")
	if g := slash(ctx, t, fake, base, approverID, "grants"); revokeValue(g.Blocks) == "" {
		t.Fatal("a non-approver revoked a grant")
	}
	revoke(approverID)
	if g := slash(ctx, t, fake, base, approverID, "grants"); revokeValue(g.Blocks) != "" || !strings.Contains(g.Text, "No session grants") {
		t.Fatalf("grant still listed after revoke: %+v", g)
	}

	// Run two: waits on an Ask; /askops pending shows it; stop ends it.
	slash(ctx, t, fake, base, approverID, "run touch two")
	m2 := waitAsk(ctx, t, fake, "COPS", m)
	var pendingText string
	if r := slash(ctx, t, fake, base, "UNOBODY99", "pending"); !strings.Contains(r.Text, "only approvers and run starters") {
		t.Fatalf("non-approver pending: %q", r.Text)
	}
	for !strings.Contains(pendingText, "|open>") { // listed with its link once its post is recorded
		pendingText = slash(ctx, t, fake, base, approverID, "pending").Text
		select {
		case <-ctx.Done():
			t.Fatalf("/askops pending never listed the Ask with a link: %q", pendingText)
		case <-time.After(20 * time.Millisecond):
		}
	}
	runID := pendingRunID.FindStringSubmatch(pendingText)
	if runID == nil || !strings.Contains(pendingText, "touch two.txt") || !strings.Contains(pendingText, "https://fake-askops.slack.com/archives/COPS/p") {
		t.Fatalf("/askops pending: %q", pendingText)
	}
	if r := slash(ctx, t, fake, base, "UNOBODY99", "stop "+runID[1]); !strings.Contains(r.Text, "only approvers and run starters") {
		t.Fatalf("non-approver stop: %q", r.Text)
	}
	if r := slash(ctx, t, fake, base, approverID, "stop "+runID[1]); !strings.Contains(r.Text, "Stopping run") {
		t.Fatalf("stop: %q", r.Text)
	}
	waitSlackPost(ctx, t, fake, "was stopped")
	waitStoppedRunsAsk(ctx, t, fake, m2)

	// Mode never: the next run's asks become denials; nobody is asked.
	if r := slash(ctx, t, fake, base, "UNOBODY99", "mode never"); !strings.Contains(r.Text, "only approvers") {
		t.Fatalf("non-approver mode: %q", r.Text)
	}
	slash(ctx, t, fake, base, approverID, "mode never")
	asksBefore := countAsks(fake)
	slash(ctx, t, fake, base, approverID, "run touch three")
	waitSlackPost(ctx, t, fake, "not allowed while unattended")
	if n := countAsks(fake); n != asksBefore {
		t.Errorf("mode never still posted %d Ask(s)", n-asksBefore)
	}
	for _, f := range []string{"two.txt", "three.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
	if r := slash(ctx, t, fake, base, approverID, "frobnicate"); !strings.Contains(r.Text, "Unknown subcommand") {
		t.Errorf("unknown subcommand: %q", r.Text)
	}

	serve.Stop()
}

func countAsks(fake *fakeslack.Server) int {
	n := 0
	for _, c := range fake.Calls("chat.postMessage") {
		if buttonValue(c.Blocks, slackui.ActionApprove) != "" {
			n++
		}
	}
	return n
}
