package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// A whole `serve` with approvals.anyone_in_channel, its approval channel
// shared through Slack Connect with a partner organisation: the partner's
// member (user.team_id of their own team, as Slack signs it) can neither
// start a run (/askops run, @askops), nor decide its Ask (any button, the
// deny-reason form), nor revoke; each is told why, no vote or event of
// theirs is recorded, and the command runs once an insider approves.
func TestServeSharedChannelOutsiderDecidesNothing(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	const partner, insider = "UPARTNER1", "UINSIDER2"
	fake.SetUserTeam(partner, "TPARTNERORG")
	model := fakeopenai.Start(t,
		bashCall("c1", "echo ran >> ran.txt"),
		fakeopenai.Text("done"),
	)
	ws := t.TempDir()
	cfg, base, env := agentConfigOnRedis(t, fake, model, ws)
	addApprovals(t, cfg, "  anyone_in_channel: true\n")
	serve := startServe(ctx, t, env, cfg, base)

	// The partner types /askops run: refused in the command's reply.
	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run record it", UserID: partner, ChannelID: "COPS",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readBody(t, resp); !strings.Contains(got, "another organisation") {
		t.Fatalf("the partner's /askops run was answered %q", got)
	}
	// The partner mentions askops: refused in an ephemeral.
	envelope, err := fake.EventEnvelope(fake.AppMention(partner, "COPS", "<@"+fake.BotUserID()+"> record it", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = fake.PostEvent(ctx, base+"/slack/events", envelope, fakeslack.EventOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := fake.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool {
		return c.User == partner && c.Text == slackui.OutsiderText
	}); err != nil {
		t.Fatalf("the partner's mention was not refused: %v", err)
	}

	// An insider starts the run; its Ask is posted.
	resp, err = fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run record it", UserID: approverID, ChannelID: "COPS",
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := waitAsk(ctx, t, fake, "COPS")
	askID := buttonValue(m.Blocks, slackui.ActionApprove)
	clickAs := func(user, action string) {
		t.Helper()
		resp, err := fake.PostInteraction(ctx, base+"/slack/interactions", fake.BlockActionsPayload(fakeslack.BlockActions{
			User: user, Channel: m.Channel, MessageTS: m.TS, ActionID: action, Value: askID,
		}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	actions := []string{slackui.ActionApprove, slackui.ActionApproveSession, slackui.ActionDeny, slackui.ActionDenyReason}
	for _, action := range actions {
		clickAs(partner, action)
	}
	resp, err = fake.PostInteraction(ctx, base+"/slack/interactions", fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: partner, CallbackID: slackui.CallbackDenyReason, PrivateMetadata: askID + " " + m.Channel + " " + m.TS,
		Values: map[string]map[string]string{slackui.BlockDenyReason: {slackui.ActionDenyReasonInput: "no"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := readBody(t, resp); !strings.Contains(got, "another organisation") {
		t.Fatalf("the partner's deny-reason form was answered %q", got)
	}
	told, err := fake.WaitForCalls(ctx, "chat.postEphemeral", 1+len(actions), func(c fakeslack.Call) bool { return c.User == partner })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range told {
		if c.Text != slackui.OutsiderText {
			t.Errorf("the partner was told %q", c.Text)
		}
	}
	ran := filepath.Join(ws, "ran.txt")
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the command ran on the partner's clicks")
	}
	if n := len(fake.Calls("views.open")); n != 0 {
		t.Errorf("%d modals opened for the partner", n)
	}

	// The store and its audit hold nothing of the partner's.
	client, err := redisconn.Open(env["REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	store, err := pending.NewRedisStore(ctx, client, pending.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if a, err := store.Get(ctx, askID); err != nil || a.Status != pending.StatusPending || len(a.Votes.List()) != 0 {
		t.Fatalf("after the partner's clicks the Ask is %s with votes %v (%v)", a.Status, a.Votes.List(), err)
	}

	// Another insider approves for the session (the starter may not): the
	// command runs once, and a grant is recorded.
	clickAs(insider, slackui.ActionApproveSession)
	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.ThreadTS == m.ThreadTS && strings.Contains(c.Text, "done")
	}); err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if got, err := os.ReadFile(ran); err != nil || string(got) != "ran\n" {
		t.Fatalf("ran.txt %q (%v)", got, err)
	}
	if a, _ := store.Get(ctx, askID); a.DecidedBy != insider {
		t.Errorf("decided by %q", a.DecidedBy)
	}
	// The grant's Revoke button, clicked by the partner, revokes nothing.
	value := revokeValue(slash(ctx, t, fake, base, approverID, "grants").Blocks)
	if value == "" {
		t.Fatal("no grant with a Revoke button after the session approval")
	}
	clickRevoke(ctx, t, fake, base, partner, "COPS", value)
	if _, err := fake.WaitForCalls(ctx, "chat.postEphemeral", 2+len(actions), func(c fakeslack.Call) bool {
		return c.User == partner && c.Text == slackui.OutsiderText
	}); err != nil {
		t.Fatalf("the partner's revoke was not refused: %v", err)
	}
	if revokeValue(slash(ctx, t, fake, base, approverID, "grants").Blocks) != value {
		t.Fatal("the partner revoked the grant")
	}
	if r := slash(ctx, t, fake, base, partner, "grants"); !strings.Contains(r.Text, "another organisation") {
		t.Errorf("the partner's /askops grants was answered %q", r.Text)
	}
	events, err := store.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.By == partner {
			t.Errorf("the audit holds the partner's %s event: %+v", e.Kind, e)
		}
	}
	serve.Stop()
}
