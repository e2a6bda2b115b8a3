package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/chatops"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/slackui"
)

// hostileText is what a prompt-injected model or a careless user might put
// in front of a channel: mentions of everybody, a link that shows one
// address and opens another, and live tokens.
const hostileText = "<!channel> <!here> <@UEVIL1> <#CSECRET|secret> see <https://evil.example/x|askops.example.com> token xoxb-1234-5678-abcdefghijkl"

// live are the parts of hostileText that must never reach Slack as they are.
var live = []string{"<!channel>", "<!here>", "<@UEVIL1>", "<#CSECRET", "<https://evil", "abcdefghijkl"}

// TestChatOpsPostsNothingLive: a run's task and final answer go through the
// same escaping and redaction as an Ask: the slash reply, the status message
// and its edits, and the answer in the thread carry no live mention, link
// or token.
func TestChatOpsPostsNothingLive(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	hostilePath, _ := json.Marshal(map[string]string{"path": "notes/" + hostileText + ".txt"})
	model := fakeopenai.Start(t,
		// Run one: a read-only call (no Ask) the status message shows, then the answer.
		fakeopenai.Call(fakeopenai.ToolCall{ID: "c1", Name: "read_file", Arguments: string(hostilePath)}),
		fakeopenai.Text("All done. "+hostileText),
		// Run two: the model API fails with a message of its choosing.
		fakeopenai.Error(400, hostileText),
	)
	cfg, base, env := agentConfig(t, fake, model, t.TempDir())
	serve := startServe(ctx, t, env, cfg, base)

	reply := slash(ctx, t, fake, base, approverID, "run deploy "+hostileText)
	answer := waitSlackPost(ctx, t, fake, "All done.")
	if !strings.Contains(answer.Text, "&lt;!channel&gt;") || !strings.Contains(answer.Text, "xoxb-[REDACTED]") {
		t.Errorf("answer not shown escaped and redacted: %q", answer.Text)
	}
	if _, err := fake.WaitForCall(ctx, "chat.update", func(c fakeslack.Call) bool { return strings.Contains(c.Text, "finished") }); err != nil {
		t.Fatalf("status never finished: %v", err)
	}
	if _, err := fake.WaitForCall(ctx, "chat.update", func(c fakeslack.Call) bool {
		return strings.Contains(c.Text, "read_file") && strings.Contains(c.Text, "&lt;!channel&gt;")
	}); err != nil {
		t.Errorf("the status message never showed the read_file call, escaped: %v", err)
	}
	slash(ctx, t, fake, base, approverID, "run fail "+hostileText)
	failed := waitSlackPost(ctx, t, fake, "failed:")
	if !strings.Contains(failed.Text, "&lt;!channel&gt;") {
		t.Errorf("the failure does not show the model API's message, escaped: %q", failed.Text)
	}
	if _, err := fake.WaitForCall(ctx, "chat.update", func(c fakeslack.Call) bool { return strings.Contains(c.Text, "failed") }); err != nil {
		t.Fatalf("status never failed: %v", err)
	}
	serve.Stop()

	surfaces := []string{"slash reply: " + reply.Text}
	for _, method := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral"} {
		for _, c := range fake.Calls(method) {
			surfaces = append(surfaces, method+": "+c.Text+" "+fakeslack.BlockText(c.Blocks))
		}
	}
	if len(surfaces) < 4 {
		t.Fatalf("only %d surfaces posted: %q", len(surfaces), surfaces)
	}
	for _, s := range surfaces {
		for _, l := range live {
			if strings.Contains(s, l) {
				t.Errorf("%q went out live in %q", l, s)
			}
		}
	}
}

// revokeValues are the values of every Revoke button in blocks.
func revokeValues(blocks []slack.Block) []string {
	var out []string
	for _, b := range blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.Accessory != nil && s.Accessory.ButtonElement != nil && s.Accessory.ButtonElement.ActionID == chatops.ActionRevokeGrant {
			out = append(out, s.Accessory.ButtonElement.Value)
		}
	}
	return out
}

// TestChatOpsListsOnlyThisChannelToWhoMay: /askops pending and /askops
// grants answer approvers and run starters only, with the Asks and session
// grants of the channel they are typed in; standing grants and Revoke
// buttons only to approvers; a Revoke clicked in one channel cannot reach
// another channel's grant.
func TestChatOpsListsOnlyThisChannelToWhoMay(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	const starter, nobody = "USTARTER1", "UNOBODY99"
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "echo hi > one.txt"),
		fakeopenai.Text("run one done"),
		bashCall("c2", "touch two.txt"),
	)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, base, env := httpModeConfig(t, fake, fmt.Sprintf("  run_starters:\n    users: [%s, %s]\nagent:\n  workspace: %q\n", approverID, starter, ws))
	env["REDIS_URL"] = rds.URL()
	env["OPENAI_BASE_URL"] = model.BaseURL()
	if code, stdout, stderr := runBot(ctx, t, env, "grants", "-config", cfg, "add", "-tool", "bash", "-command", "make standing", "-cwd", "."); code != exitOK {
		t.Fatalf("grants add: exit %d\n%s\n%s", code, stdout, stderr)
	}
	serve := startServe(ctx, t, env, cfg, base)

	// COPS: a run approved for session leaves a session grant there.
	slashIn(ctx, t, fake, base, "COPS", approverID, "run write one")
	click(ctx, t, fake, base, waitAsk(ctx, t, fake, "COPS"), approverID, slackui.ActionApproveSession)
	waitSlackPost(ctx, t, fake, "run one done")
	// COTHER: a run waits on an Ask.
	slashIn(ctx, t, fake, base, "COTHER", approverID, "run touch two")
	waitAsk(ctx, t, fake, "COTHER")
	for !strings.Contains(slashIn(ctx, t, fake, base, "COTHER", approverID, "pending").Text, "touch two.txt") {
		select {
		case <-ctx.Done():
			t.Fatal("/askops pending in COTHER never listed its Ask")
		case <-time.After(20 * time.Millisecond):
		}
	}

	for _, sub := range []string{"pending", "grants"} {
		r := slashIn(ctx, t, fake, base, "COPS", nobody, sub)
		if !strings.Contains(r.Text, "only approvers and run starters") || len(r.Blocks) != 0 || r.ResponseType != "ephemeral" {
			t.Errorf("/askops %s by a stranger: %+v", sub, r)
		}
	}
	for _, user := range []string{approverID, starter} {
		if r := slashIn(ctx, t, fake, base, "COPS", user, "pending"); strings.Contains(r.Text, "touch two") {
			t.Errorf("%s: /askops pending in COPS lists COTHER's Ask: %q", user, r.Text)
		}
		if r := slashIn(ctx, t, fake, base, "COTHER", user, "pending"); !strings.Contains(r.Text, "touch two") {
			t.Errorf("%s: /askops pending in COTHER misses its Ask: %q", user, r.Text)
		}
		if r := slashIn(ctx, t, fake, base, "COTHER", user, "grants"); strings.Contains(fakeslack.BlockText(r.Blocks), "echo hi") {
			t.Errorf("%s: /askops grants in COTHER lists COPS's session grant", user)
		}
	}
	ag := slashIn(ctx, t, fake, base, "COPS", approverID, "grants")
	if text := fakeslack.BlockText(ag.Blocks); !strings.Contains(text, "echo hi") || !strings.Contains(text, "make standing") || len(revokeValues(ag.Blocks)) != 2 {
		t.Errorf("approver's /askops grants in COPS:\n%s\nrevoke buttons %q", text, revokeValues(ag.Blocks))
	}
	sg := slashIn(ctx, t, fake, base, "COPS", starter, "grants")
	if text := fakeslack.BlockText(sg.Blocks); !strings.Contains(text, "echo hi") || strings.Contains(text, "make standing") || len(revokeValues(sg.Blocks)) != 0 {
		t.Errorf("run starter's /askops grants in COPS:\n%s\nrevoke buttons %q", text, revokeValues(sg.Blocks))
	}

	var sessionGrant string
	for _, v := range revokeValues(ag.Blocks) {
		if strings.HasPrefix(v, "COPS/") {
			sessionGrant = v
		}
	}
	revokeIn := func(channel string) fakeslack.Call {
		t.Helper()
		n := len(fake.Calls("chat.postEphemeral"))
		clickRevoke(ctx, t, fake, base, approverID, channel, sessionGrant)
		calls, err := fake.WaitForCalls(ctx, "chat.postEphemeral", n+1, nil)
		if err != nil {
			t.Fatalf("no reply to the revoke in %s: %v", channel, err)
		}
		return calls[len(calls)-1]
	}
	if told := revokeIn("COTHER"); !strings.Contains(told.Text, "does not belong") {
		t.Errorf("revoke of COPS's grant from COTHER told %q", told.Text)
	}
	if text := fakeslack.BlockText(slashIn(ctx, t, fake, base, "COPS", approverID, "grants").Blocks); !strings.Contains(text, "echo hi") {
		t.Fatal("a Revoke clicked in COTHER revoked COPS's grant")
	}
	if told := revokeIn("COPS"); !strings.Contains(told.Text, "Grant revoked") {
		t.Errorf("revoke in COPS told %q", told.Text)
	}

	serve.Stop()
}
