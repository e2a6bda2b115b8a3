package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/slackui"
)

// TestChatOpsAcrossReplicas: chat-ops state is shared through Redis. Runs go
// on replica A; every slash command and click goes to replica B: mode never
// set on B turns the next ask of A's running run into a denial without a
// message; B lists and revokes the grant of A's session; B stops A's run,
// whose Ask message then says cancelled.
func TestChatOpsAcrossReplicas(t *testing.T) {
	ctx := timeoutCtx(t, 90*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "echo hi > one.txt"),
		bashCall("c2", "touch two.txt"),
		fakeopenai.Text("run one done"),
		bashCall("c3", "touch three.txt"),
		fakeopenai.Text("run two should never get here"),
	)
	ws := t.TempDir()
	srvA, srvB := startReplicas(ctx, t, fake, replicaEnv(fake, rds.URL(), model.BaseURL()), ws)
	baseA, baseB := srvA.base, srvB.base

	// Run one on A asks about c1; meanwhile B sets mode never.
	slash(ctx, t, fake, baseA, approverID, "run write one")
	ask1 := waitAsk(ctx, t, fake, "COPS")
	if r := slash(ctx, t, fake, baseB, "UNOBODY99", "mode never"); !strings.Contains(r.Text, "only approvers") {
		t.Fatalf("non-approver mode on B: %q", r.Text)
	}
	if r := slash(ctx, t, fake, baseB, approverID, "mode full"); !strings.Contains(r.Text, "Usage") {
		t.Fatalf("mode full from Slack: %q", r.Text)
	}
	if r := slash(ctx, t, fake, baseB, approverID, "mode never"); !strings.Contains(r.Text, "This channel's sessions now use mode `never`") {
		t.Fatalf("mode never on B: %q", r.Text)
	}
	if r := slash(ctx, t, fake, baseA, approverID, "mode"); !strings.Contains(r.Text, "mode `never`, set by <@"+approverID+">") {
		t.Fatalf("mode as A sees it: %q", r.Text)
	}
	// The Ask already posted is still decided by a human: approve for session on B.
	click(ctx, t, fake, baseB, ask1, approverID, slackui.ActionApproveSession)
	waitSlackPost(ctx, t, fake, "run one done")
	if _, err := os.Stat(filepath.Join(ws, "one.txt")); err != nil {
		t.Fatalf("the approved c1 did not run: %v", err)
	}
	// c2 came after mode never: denied without a message, not run.
	if n := countAsks(fake); n != 1 {
		t.Errorf("%d Ask messages; want only the one before mode never", n)
	}
	if _, err := os.Stat(filepath.Join(ws, "two.txt")); err == nil {
		t.Error("c2 ran in mode never")
	}
	if reqs := model.Requests(); len(reqs) < 3 || !strings.Contains(string(reqs[2].Raw), "not performed") {
		t.Errorf("the model was not told c2 was not performed")
	}

	// B lists the grant of the session started on A and revokes it.
	g := slash(ctx, t, fake, baseB, approverID, "grants")
	value := revokeValue(g.Blocks)
	if value == "" || !strings.Contains(fakeslack.BlockText(g.Blocks), "echo hi") {
		t.Fatalf("/askops grants on B: %+v\n%s", g, fakeslack.BlockText(g.Blocks))
	}
	clickRevoke(ctx, t, fake, baseB, approverID, "COPS", value)
	if _, err := fake.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.Text == "Grant revoked." }); err != nil {
		t.Fatalf("revoke on B: %v", err)
	}
	for _, base := range []string{baseA, baseB} {
		if g := slash(ctx, t, fake, base, approverID, "grants"); revokeValue(g.Blocks) != "" {
			t.Fatalf("grant still listed on %s after the revoke", base)
		}
	}

	// Back to ask; run two on A waits on an Ask; B stops it.
	slash(ctx, t, fake, baseB, approverID, "mode ask")
	slash(ctx, t, fake, baseA, approverID, "run touch three")
	ask2 := waitAsk(ctx, t, fake, "COPS", ask1)
	pendingText := slash(ctx, t, fake, baseB, approverID, "pending").Text
	runID := pendingRunID.FindStringSubmatch(pendingText)
	if runID == nil {
		t.Fatalf("/askops pending on B: %q", pendingText)
	}
	if r := slash(ctx, t, fake, baseB, approverID, "stop run-0000nosuchrun"); !strings.Contains(r.Text, "No askops process confirmed") {
		t.Fatalf("stop of an unknown run on B: %q", r.Text)
	}
	if r := slash(ctx, t, fake, baseB, "UNOBODY99", "stop "+runID[1]); !strings.Contains(r.Text, "only approvers and run starters") {
		t.Fatalf("non-approver stop on B: %q", r.Text)
	}
	if r := slash(ctx, t, fake, baseB, approverID, "stop "+runID[1]); !strings.Contains(r.Text, "Stopping run") || !strings.Contains(r.Text, "took the request") {
		t.Fatalf("stop on B of A's run: %q", r.Text)
	}
	waitSlackPost(ctx, t, fake, "was stopped")
	waitStoppedRunsAsk(ctx, t, fake, ask2)
	if _, err := os.Stat(filepath.Join(ws, "three.txt")); err == nil {
		t.Error("the stopped run's command ran")
	}

	srvA.Stop()
	srvB.Stop()
}

// TestStopReachesBotRun: /askops stop on a serve replica stops a `bot run`
// process sharing the Redis; its Ask ends cancelled and the run exits 1.
func TestStopReachesBotRun(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	rds := redistest.Start(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t,
		bashCall("c1", "touch cron.txt"),
		fakeopenai.Text("should never get here"),
	)
	ws := t.TempDir()
	env := replicaEnv(fake, rds.URL(), model.BaseURL())
	env["USER"] = "cron"
	cfgB, baseB := replicaConfig(t, fake, ws, "")
	cfgRun, _ := replicaConfig(t, fake, ws, "")
	srvB := startServe(ctx, t, env, cfgB, baseB)
	ran := startBot(ctx, t, env, "run", "-config", cfgRun, "touch the cron file")

	ask := waitAsk(ctx, t, fake, "CAPPROVALS")
	// bot run's Asks go to the approval channel: /askops pending there lists them.
	var runID []string
	for runID == nil {
		runID = pendingRunID.FindStringSubmatch(slashIn(ctx, t, fake, baseB, "CAPPROVALS", approverID, "pending").Text)
		select {
		case <-ctx.Done():
			t.Fatal("/askops pending on B never listed the bot run's Ask")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if r := slash(ctx, t, fake, baseB, approverID, "stop "+runID[1]); !strings.Contains(r.Text, "Stopping run") {
		t.Fatalf("stop on B of the bot run: %q", r.Text)
	}
	r := waitResult(t, ran)
	if r.code != 1 || !strings.Contains(r.stdout, "stopped") {
		t.Errorf("bot run exited %d, stdout:\n%s", r.code, r.stdout)
	}
	waitStoppedRunsAsk(ctx, t, fake, ask)
	if _, err := os.Stat(filepath.Join(ws, "cron.txt")); err == nil {
		t.Error("the stopped run's command ran")
	}
	srvB.Stop()
}
