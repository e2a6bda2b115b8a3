package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

// testCtx bounds one test to 60 s; every wait inside it ends by then.
func testCtx(t *testing.T) context.Context {
	return testCtxFor(t, 60*time.Second)
}

// testCtxFor bounds one test to d, for the tests that need longer than
// testCtx's 60 s (real agent CLIs, many replicas). The context ends when
// the test's cleanups run, so it bounds them too.
func testCtxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestApproveOnOtherReplica (scenarios 1 and 2): a run started with
// /askops run on replica A asks in its thread; Approve delivered to replica
// B resumes A's agent and the command runs; a plain approval does not cover
// the next identical call, "Approve for session" does: the third identical
// call runs without a new Ask message. Another run is a new session and is
// asked again.
func TestApproveOnOtherReplica(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	const command = "echo hi >> marker.txt"
	w.script.on("e2e-approve", steps(
		bash("c1", command), bash("c2", command), bash("c3", command),
		fakeopenai.Text("appended hi three times"),
	))
	a, b := w.servePair(ctx, t, settings{})
	marker := filepath.Join(w.ws, "marker.txt")

	ask1 := w.startRunToAsk(ctx, t, a, "e2e-approve: append hi to marker.txt three times", "marker.txt")
	if ask1.Channel != opsChannel || ask1.ThreadTS == "" {
		t.Fatalf("the Ask was posted in %s thread %q, want a thread in %s", ask1.Channel, ask1.ThreadTS, opsChannel)
	}
	inThread := false
	for _, m := range w.slack.Thread(opsChannel, ask1.ThreadTS) {
		inThread = inThread || m.TS == ask1.TS
	}
	if _, ok := w.slack.Message(opsChannel, ask1.ThreadTS); !ok || !inThread {
		t.Fatalf("the Ask is not a reply in the run's thread (parent found: %v)", ok)
	}
	if n := lines(t, marker); n != 0 {
		t.Fatalf("the command ran %d times before anyone approved", n)
	}

	// 1. Approve, delivered to B; the agent waiting on A resumes.
	w.clickOn(ctx, t, b, ask1, approverID, slackui.ActionApprove)
	testwait.Until(ctx, t, "the approved command to run once", func() bool { return lines(t, marker) >= 1 })
	w.waitDecided(ctx, t, ask1, "Approved", approverID)

	// 2. A plain approval covers one call: the identical second call asks
	// again. Approve it for the session.
	ask2 := w.waitOpenAsk(ctx, t, "marker.txt", ask1)
	if ask2.ThreadTS != ask1.ThreadTS {
		t.Errorf("the second Ask is in thread %q, want %q", ask2.ThreadTS, ask1.ThreadTS)
	}
	w.clickOn(ctx, t, b, ask2, approverID, slackui.ActionApproveSession)
	w.waitDecided(ctx, t, ask2, "Approved for session", approverID)

	// The third identical call runs on the grant: no new Ask message.
	w.waitAnswer(ctx, t, ask1.ThreadTS, "appended hi three times")
	if n := lines(t, marker); n != 3 {
		t.Errorf("marker.txt has %d lines, want 3 (one per approved or granted call)", n)
	}
	if n := w.askPosts(); n != 2 {
		t.Errorf("%d Ask messages were posted, want 2 (the granted call must not ask)", n)
	}
	if _, err := w.slack.WaitForMessage(ctx, opsChannel, ask1.ThreadTS, func(m fakeslack.Message) bool {
		return strings.Contains(text(m), "finished")
	}); err != nil {
		status, _ := w.slack.Message(opsChannel, ask1.ThreadTS)
		t.Errorf("the run's status message never said finished: %v\n%s", err, text(status))
	}

	// The grant belongs to that run's session: a new run (a new thread)
	// asking for the same command is asked about again.
	w.script.on("e2e-again", steps(bash("c1", command), fakeopenai.Text("not appended this time")))
	w.startRun(ctx, t, a, "e2e-again: append hi once more")
	ask3 := w.waitOpenAsk(ctx, t, "marker.txt", ask1, ask2)
	if ask3.ThreadTS == ask1.ThreadTS {
		t.Errorf("the new run asked in the old run's thread")
	}
	w.click(ctx, t, b.base, ask3, approverID, slackui.ActionDeny)
	w.waitAnswer(ctx, t, ask3.ThreadTS, "not appended this time")
	if n := lines(t, marker); n != 3 {
		t.Errorf("marker.txt has %d lines after a denied call, want 3", n)
	}

	// The runs lived on A: A counted them and waited on the Asks; B only
	// took the clicks.
	ma, mb := a.metrics(ctx, t), b.metrics(ctx, t)
	for series, want := range map[string]float64{
		`askops_runs_total{state="finished"}`:           2,
		`askops_asks_total{outcome="approved"}`:         1,
		`askops_asks_total{outcome="approved_session"}`: 1,
		`askops_asks_total{outcome="denied"}`:           1,
	} {
		if got := metric(ma, series); got != want {
			t.Errorf("A's %s = %v, want %v", series, got, want)
		}
		if got := metric(mb, series); got != 0 {
			t.Errorf("B's %s = %v, want 0: the runs and their waits live on A", series, got)
		}
	}

	// SIGTERM: both replicas drain and exit 0.
	if code := b.terminate(); code != 0 {
		t.Errorf("B exited %d after SIGTERM", code)
	}
	if code := a.terminate(); code != 0 {
		t.Errorf("A exited %d after SIGTERM", code)
	}
}

// TestDenyWithReason (scenario 3): "Deny with reason" clicked on B opens the
// reason modal; its submission (to B) denies the Ask; the command does not
// run and the model's next request carries the reason.
func TestDenyWithReason(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	const reason = "change freeze until Monday"
	w.script.on("e2e-deny", steps(bash("c1", "echo hi > denied.txt"), fakeopenai.Text("understood, leaving it alone")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-deny: write denied.txt", "denied.txt")
	w.clickOn(ctx, t, b, ask, approverID, slackui.ActionDenyReason)
	if _, err := w.slack.WaitForCall(ctx, "views.open", func(c fakeslack.Call) bool { return c.OK() }); err != nil {
		t.Fatalf("B opened no reason modal: %v", err)
	}
	views := w.slack.Views()
	sub := w.slack.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: approverID, ViewID: views[len(views)-1].ID,
		Values: map[string]map[string]string{slackui.BlockDenyReason: {slackui.ActionDenyReasonInput: reason}},
	})
	resp, err := w.slack.PostInteraction(ctx, b.base+"/slack/interactions", sub)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(resp)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "errors") {
		t.Fatalf("reason submission to B: %s %s", resp.Status, body)
	}

	w.waitDecided(ctx, t, ask, "Denied", approverID, reason)
	w.waitAnswer(ctx, t, ask.ThreadTS, "understood, leaving it alone")
	reqs := w.requestsOf("e2e-deny")
	if len(reqs) != 2 {
		t.Fatalf("the run made %d model requests, want 2", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Raw), reason) {
		t.Errorf("the model's request after the denial lacks the reason:\n%s", reqs[1].Raw)
	}
	if exists(filepath.Join(w.ws, "denied.txt")) {
		t.Error("the denied command ran")
	}
	if m := a.metrics(ctx, t); metric(m, `askops_asks_total{outcome="denied"}`) != 1 {
		t.Errorf("A does not count the denial:\n%s", m)
	}
}

// TestExpiry (scenario 4): nobody decides before approvals.timeout; the
// message says expired, the command does not run, the model is told, and a
// late click changes nothing.
func TestExpiry(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-expire", steps(bash("c1", "echo hi > expired.txt"), fakeopenai.Text("nobody answered, giving up")))
	a := w.serve(ctx, t, "A", settings{Timeout: "2s", SweepInterval: "1h"})

	ask := w.startRunToAsk(ctx, t, a, "e2e-expire: write expired.txt", "expired.txt")
	expired := w.waitDecided(ctx, t, ask, "Expired")
	w.waitAnswer(ctx, t, ask.ThreadTS, "nobody answered, giving up")
	// A late Approve (on the old message, buttons and all) is refused.
	w.click(ctx, t, a.base, ask, approverID, slackui.ActionApprove)
	if _, err := w.slack.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == approverID }); err != nil {
		t.Errorf("the late clicker was not told the Ask is closed: %v", err)
	}
	if now, _ := w.slack.Message(ask.Channel, ask.TS); text(now) != text(expired) {
		t.Errorf("a late click changed the expired Ask's message:\n%s", text(now))
	}
	if exists(filepath.Join(w.ws, "expired.txt")) {
		t.Error("the expired command ran")
	}
	if reqs := w.requestsOf("e2e-expire"); len(reqs) != 2 || !strings.Contains(strings.ToLower(string(reqs[1].Raw)), "expired") {
		t.Errorf("the model was not told the Ask expired (%d requests)", len(reqs))
	}
	if m := a.metrics(ctx, t); metric(m, `askops_asks_total{outcome="expired"}`) != 1 {
		t.Errorf("A does not count the expiry:\n%s", m)
	}
}

// TestKilledReplica (scenario 5): replica A is killed with SIGKILL while its
// Ask waits; once the Ask's deadline passes, B's sweep expires it and
// updates its message. Nothing of A is left to do it.
func TestKilledReplica(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-kill", steps(bash("c1", "echo hi > killed.txt")))
	a := w.serve(ctx, t, "A", settings{Timeout: "2s", SweepInterval: "1h"})
	b := w.serve(ctx, t, "B", settings{SweepInterval: "200ms"})

	ask := w.startRunToAsk(ctx, t, a, "e2e-kill: write killed.txt", "killed.txt")
	w.killAfterRecorded(ctx, t, a, b, ask)

	w.waitDecided(ctx, t, ask, "Expired")
	if exists(filepath.Join(w.ws, "killed.txt")) {
		t.Error("the command ran")
	}
	if m := b.metrics(ctx, t); metric(m, `askops_asks_total{outcome="expired"}`) != 1 {
		t.Errorf("B's sweep did not count the expiry:\n%s", m)
	}
	if _, body := w.slash(ctx, t, b.base, approverID, "pending"); !strings.Contains(body, "No open Asks") {
		t.Errorf("/askops pending after the sweep: %s", body)
	}
}

// TestRefusedClicks (scenario 7): a non-approver's clicks, a forged
// signature and a stale timestamp change nothing: the forged and stale ones
// get 401, the non-approver is told no, the Ask stays pending with its
// message untouched, and the approver can still decide it.
func TestRefusedClicks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-refuse", steps(bash("c1", "echo hi > refused.txt"), fakeopenai.Text("written after approval")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-refuse: write refused.txt", "refused.txt")

	for name, opts := range map[string]fakeslack.SignOptions{
		"forged signature":          {Secret: "a-guessed-secret"},
		"stale timestamp (6 min)":   {Timestamp: time.Now().Add(-6 * time.Minute)},
		"no signature at all":       {Unsigned: true},
		"signature of another body": {Signature: w.slack.Sign([]byte("payload={}"), time.Now())},
	} {
		for _, action := range []string{slackui.ActionApprove, slackui.ActionApproveSession} {
			if resp := w.click(ctx, t, b.base, ask, approverID, action, opts); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s click: %s, want 401", name, action, resp.Status)
			}
		}
	}
	actions := []string{slackui.ActionApprove, slackui.ActionApproveSession, slackui.ActionDeny}
	for _, action := range actions {
		if resp := w.click(ctx, t, b.base, ask, intruderID, action); resp.StatusCode != http.StatusOK {
			t.Errorf("non-approver %s click: %s", action, resp.Status)
		}
	}
	if _, err := w.slack.WaitForCalls(ctx, "chat.postEphemeral", len(actions), func(c fakeslack.Call) bool { return c.User == intruderID }); err != nil {
		t.Fatalf("the non-approver was not told no for each click: %v", err)
	}

	now, _ := w.slack.Message(ask.Channel, ask.TS)
	if now.Updates != ask.Updates || text(now) != text(ask) || askID(now.Blocks) != askID(ask.Blocks) {
		t.Errorf("refused clicks changed the Ask message (%d → %d updates):\n%s", ask.Updates, now.Updates, text(now))
	}
	if _, body := w.slash(ctx, t, b.base, approverID, "pending"); !strings.Contains(body, "1 open Ask") || !strings.Contains(body, "refused.txt") {
		t.Errorf("/askops pending after refused clicks: %s", body)
	}
	if exists(filepath.Join(w.ws, "refused.txt")) {
		t.Fatal("a refused click ran the command")
	}
	if m := a.metrics(ctx, t); metric(m, "askops_asks_pending") != 1 {
		t.Errorf("A no longer waits on the Ask:\n%s", m)
	}

	// Still pending: the approver decides it, and the message names them.
	w.click(ctx, t, b.base, ask, approverID, slackui.ActionApprove)
	final := w.waitDecided(ctx, t, ask, "Approved", approverID)
	if strings.Contains(text(final), intruderID) {
		t.Errorf("the decided message names the non-approver:\n%s", text(final))
	}
	w.waitAnswer(ctx, t, ask.ThreadTS, "written after approval")
	if !exists(filepath.Join(w.ws, "refused.txt")) {
		t.Error("the approved command did not run")
	}
}

func readBody(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestAskExitCodes (scenario 6, bot ask): with Redis configured `bot ask`
// opens no port (it reads the serve replica's own config, whose port is
// taken) and a click delivered to the serve replica decides it: exit 0
// approved, 1 denied or timed out, 2 unavailable or bad usage.
func TestAskExitCodes(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	s := w.serve(ctx, t, "S", settings{})
	downRedis := w.writeConfig(t, "redis-down", freePort(t), settings{RedisURL: "redis://" + closedPort(t) + "/0"})

	tests := []struct {
		name       string
		args       []string // after -config
		click      string   // the approver's click, if any
		wantCode   int
		wantStdout string
		wantMsg    string // the Ask message at the end
	}{
		{name: "approved", args: []string{"--", "make", "deploy-approved"}, click: slackui.ActionApprove,
			wantCode: 0, wantStdout: "approved by " + approverID, wantMsg: "Approved"},
		{name: "denied", args: []string{"--", "make", "deploy-denied"}, click: slackui.ActionDeny,
			wantCode: 1, wantStdout: "denied by " + approverID, wantMsg: "Denied"},
		{name: "timeout", args: []string{"-timeout", "1s", "--", "make", "deploy-timeout"},
			wantCode: 1, wantStdout: "expired", wantMsg: "Expired"},
		{name: "no command", args: nil, wantCode: 2},
	}
	for _, tt := range tests {
		// In turn, within the parent's time: parallel subtests wait for a
		// free slot after the parent returns, and under load the
		// parent's 60 s (and the serve with it) could run out first.
		t.Run(tt.name, func(t *testing.T) {
			p := w.start(t, "ask-"+strings.ReplaceAll(tt.name, " ", "-"), append([]string{"ask", "-config", s.config}, tt.args...)...)
			var ask fakeslack.Message
			if tt.wantMsg != "" {
				ask = w.waitOpenAsk(ctx, t, tt.args[len(tt.args)-1])
				if ask.Channel != approvalChannel {
					t.Errorf("the Ask went to %s, want %s", ask.Channel, approvalChannel)
				}
			}
			if tt.click != "" {
				w.clickOn(ctx, t, s, ask, approverID, tt.click)
			}
			code := p.wait(ctx, t)
			if code != tt.wantCode || !strings.Contains(p.stdout(), tt.wantStdout) {
				t.Errorf("exit %d, stdout %q; want %d and %q\nstderr:\n%s", code, p.stdout(), tt.wantCode, tt.wantStdout, p.stderr())
			}
			if tt.wantMsg != "" {
				w.waitDecided(ctx, t, ask, tt.wantMsg)
			}
		})
	}
	t.Run("redis unreachable", func(t *testing.T) {
		p := w.start(t, "ask-redis-down", "ask", "-config", downRedis, "--", "true")
		if code := p.wait(ctx, t); code != 2 || !strings.HasPrefix(p.stdout(), "unavailable") {
			t.Errorf("exit %d, stdout %q; want 2 and unavailable", code, p.stdout())
		}
	})
}

// TestRunExitCodes (scenario 6, bot run): with Redis configured `bot run`
// posts its Asks to the approval channel and a serve replica takes the
// click; a finished run exits 0 and prints the answer, a failing run exits
// non-zero.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-cron", steps(bash("c1", "echo hi > cron.txt"), fakeopenai.Text("nightly job done")))
	w.script.on("e2e-loop", func(step int) fakeopenai.Reply {
		return fakeopenai.Call(fakeopenai.ToolCall{ID: "r" + string(rune('a'+step)), Name: "read_file", Arguments: `{"path":"cron.txt"}`})
	})
	w.script.on("e2e-broken", steps(fakeopenai.Error(http.StatusBadRequest, "the model exploded")))
	s := w.serve(ctx, t, "S", settings{})
	// On the serve replica's own port: with Redis, bot run does not listen.
	short := w.writeConfig(t, "run-short", strings.TrimPrefix(s.base, "http://"), settings{MaxIterations: 2})

	t.Run("finished", func(t *testing.T) {
		p := w.start(t, "run-cron", "run", "-config", s.config, "e2e-cron: write cron.txt")
		ask := w.waitOpenAsk(ctx, t, "cron.txt")
		if ask.Channel != approvalChannel || ask.ThreadTS != "" {
			t.Errorf("the Ask went to %s (thread %q), want the top of %s", ask.Channel, ask.ThreadTS, approvalChannel)
		}
		w.click(ctx, t, s.base, ask, approverID, slackui.ActionApprove)
		if code := p.wait(ctx, t); code != 0 || !strings.Contains(p.stdout(), "nightly job done") {
			t.Errorf("exit %d, want 0 and the answer\nstdout:\n%s", code, p.stdout())
		}
		if !exists(filepath.Join(w.ws, "cron.txt")) {
			t.Error("the approved command did not run")
		}
	})
	for _, tt := range []struct {
		name, config, task, wantStdout string
		wantCode                       int
	}{
		{"max iterations", short, "e2e-loop: read forever", "failed", 1},
		{"model error", s.config, "e2e-broken: anything", "failed", 1},
		{"no task", s.config, "", "", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"run", "-config", tt.config}
			if tt.task != "" {
				args = append(args, tt.task)
			}
			p := w.start(t, "run-"+strings.ReplaceAll(tt.name, " ", "-"), args...)
			if code := p.wait(ctx, t); code != tt.wantCode || !strings.Contains(p.stdout(), tt.wantStdout) {
				t.Errorf("exit %d, stdout %q; want %d and %q", code, p.stdout(), tt.wantCode, tt.wantStdout)
			}
		})
	}
	if n := len(w.requestsOf("e2e-loop")); n != 2 {
		t.Errorf("the looping run made %d model requests, want 2 (agent.max_iterations)", n)
	}
}

// TestCheckConfig (scenario 8): check-config exits 2 and names each broken
// key of a deliberately broken file, without printing its secrets; a good
// file passes and reaches Redis, Slack and the model.
func TestCheckConfig(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dir := t.TempDir()
	const secret = "xoxb-e2e-do-not-print"
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte(`
slack:
  mode: http                # http without signing_secret
  bot_token: `+secret+`
  approval_channel: CAPPROVALS
  colour: blue              # unknown key
http:
  listen: "127.0.0.1:0"
openai:
  base_url: http://127.0.0.1:1/v1
  model: fake-model
approvals:
  timeout: ten minutes      # bad duration
  approvers: {users: []}    # no approvers
policy:
  mode: sometimes           # bad mode
  rules:
    - {tool: bash, command: "terraform apply", decision: maybe}   # bad decision
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "check-broken", []string{secret}, "check-config", "-config", broken)
	if code := p.wait(ctx, t); code != 2 {
		t.Errorf("check-config of a broken file exited %d, want 2", code)
	}
	out := p.stdout() + p.stderr()
	for _, key := range []string{
		"slack.colour:",
		"approvals.timeout:",
		"policy.mode:",
		"slack.signing_secret:",
		"approvals.approvers:",
		"policy.rules[0].decision:",
	} {
		if !strings.Contains(out, key) {
			t.Errorf("check-config does not name %s", strings.TrimSuffix(key, ":"))
		}
	}
	if t.Failed() {
		t.Logf("check-config said:\n%s", out)
	}

	// A bad slack.mode is named too (it cannot share a file with the http
	// mode case above).
	badMode := filepath.Join(dir, "bad-mode.yaml")
	if err := os.WriteFile(badMode, []byte("slack:\n  mode: carrier-pigeon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p = startProc(t, "check-bad-mode", nil, "check-config", "--config", badMode)
	if code := p.wait(ctx, t); code != 2 || !strings.Contains(p.stderr(), "slack.mode:") {
		t.Errorf("slack.mode: carrier-pigeon: exit %d\n%s", code, p.stderr())
	}

	// The control: a good file passes, so the keys above are named because
	// they are broken.
	w := newWorld(t)
	good := w.writeConfig(t, "good", freePort(t), settings{})
	p = w.start(t, "check-good", "check-config", "-config", good)
	if code := p.wait(ctx, t); code != 0 {
		t.Errorf("check-config of a good file exited %d\nstdout:\n%s\nstderr:\n%s", code, p.stdout(), p.stderr())
	}
	for _, want := range []string{"ok config", "ok redis", "ok slack", "ok model"} {
		if !strings.Contains(p.stdout(), want) {
			t.Errorf("check-config of a good file does not say %q:\n%s", want, p.stdout())
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	p := startProc(t, "version", nil, "version")
	if code := p.wait(ctx, t); code != 0 || !strings.HasPrefix(p.stdout(), "askops ") {
		t.Errorf("bot version: exit %d, stdout %q", code, p.stdout())
	}
}

// TestGracefulShutdown: SIGTERM to the replica whose run waits on an Ask
// stops the run; the Ask ends cancelled with its message saying so, the
// command does not run, and the replica exits 0.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-sigterm", steps(bash("c1", "echo hi > sigterm.txt")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-sigterm: write sigterm.txt", "sigterm.txt")
	if code := a.terminate(); code != 0 {
		t.Errorf("A exited %d after SIGTERM, want 0", code)
	}
	// A updated the message before it exited: no waiting needed.
	final, _ := w.slack.Message(ask.Channel, ask.TS)
	if askID(final.Blocks) != "" || !strings.Contains(text(final), "Cancelled") {
		t.Errorf("after A's shutdown the Ask message says:\n%s", text(final))
	}
	// The cancelled Ask is closed for every replica: a late click on B
	// changes nothing and the command never runs.
	w.click(ctx, t, b.base, ask, approverID, slackui.ActionApprove)
	if _, err := w.slack.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == approverID }); err != nil {
		t.Errorf("the late clicker was not told the Ask is closed: %v", err)
	}
	if exists(filepath.Join(w.ws, "sigterm.txt")) {
		t.Error("the command of a stopped run ran")
	}
	if now, _ := w.slack.Message(ask.Channel, ask.TS); !strings.Contains(text(now), "Cancelled") {
		t.Errorf("a late click changed the cancelled Ask's message:\n%s", text(now))
	}
}

// TestMentionRetriedToOtherReplica: Slack redelivers an app_mention it
// thinks failed, here to the other replica; the replicas share the event id
// through Redis and start one run between them.
func TestMentionRetriedToOtherReplica(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-mention", steps(fakeopenai.Text("hello from one run")))
	a, b := w.servePair(ctx, t, settings{})

	const threadTS = "1700000000.000100"
	envelope, err := w.slack.EventEnvelope(w.slack.AppMention(approverID, opsChannel, "<@"+w.slack.BotUserID()+"> e2e-mention: say hello", threadTS, ""))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []*replica{a, b} {
		resp, err := w.slack.PostEvent(ctx, r.base+"/slack/events", envelope, fakeslack.EventOptions{RetryNum: i})
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("event delivery %d to %s: %s", i, r.name, resp.Status)
		}
	}
	w.waitAnswer(ctx, t, threadTS, "hello from one run")
	// Both deliveries were looked at: one replica started the run, the
	// other logged the duplicate.
	testwait.Until(ctx, t, "a replica to drop the duplicate delivery", func() bool {
		return strings.Contains(a.stderr()+b.stderr(), "duplicate event delivery ignored")
	})
	if n := len(w.requestsOf("e2e-mention")); n != 1 {
		t.Errorf("the mention started %d runs, want 1", n)
	}
}

// TestRedisOutage: while Redis is down, /readyz says so and a click cannot
// approve anything (fail closed: the clicker is told, the command does not
// run); once Redis is back (with its data), the same Ask is decided by a
// click on B and the run on A resumes.
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-outage", steps(bash("c1", "echo hi > outage.txt"), fakeopenai.Text("written once redis was back")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-outage: write outage.txt", "outage.txt")

	w.redis.Stop()
	testwait.Until(ctx, t, "B's /readyz to report the store down", func() bool {
		code, body, err := httpGet(ctx, b.base+"/readyz")
		return err == nil && code == http.StatusServiceUnavailable && strings.Contains(body, "store")
	})
	w.click(ctx, t, b.base, ask, approverID, slackui.ActionApprove)
	if _, err := w.slack.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == approverID }); err != nil {
		t.Errorf("the clicker was not told the click could not be recorded: %v", err)
	}
	if exists(filepath.Join(w.ws, "outage.txt")) {
		t.Fatal("the command ran while the decision could not be recorded")
	}
	if now, _ := w.slack.Message(ask.Channel, ask.TS); askID(now.Blocks) == "" {
		t.Fatalf("the Ask message lost its buttons while Redis was down:\n%s", text(now))
	}

	w.redis.Restart()
	if err := b.waitReady(ctx); err != nil {
		t.Fatalf("B not ready after Redis came back: %v", err)
	}
	w.click(ctx, t, b.base, ask, approverID, slackui.ActionApprove)
	w.waitDecided(ctx, t, ask, "Approved", approverID)
	w.waitAnswer(ctx, t, ask.ThreadTS, "written once redis was back")
	if !exists(filepath.Join(w.ws, "outage.txt")) {
		t.Error("the approved command did not run after Redis came back")
	}
}

// TestRacingClicks: Approve clicked on A and Deny on B at the same moment:
// exactly one wins, the message shows the winner, the command ran only if
// Approve won, and the other clicker is told the Ask was already decided.
func TestRacingClicks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-race", steps(bash("c1", "echo hi > raced.txt"), fakeopenai.Text("race settled")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-race: write raced.txt", "raced.txt")
	approve := w.slack.BlockActionsPayload(fakeslack.BlockActions{User: approverID, Channel: ask.Channel, MessageTS: ask.TS, ActionID: slackui.ActionApprove, Value: askID(ask.Blocks)})
	deny := w.slack.BlockActionsPayload(fakeslack.BlockActions{User: approverID, Channel: ask.Channel, MessageTS: ask.TS, ActionID: slackui.ActionDeny, Value: askID(ask.Blocks)})
	errs := make(chan error, 2)
	for _, c := range []struct {
		base    string
		payload []byte
	}{{a.base, approve}, {b.base, deny}} {
		go func() {
			resp, err := w.slack.PostInteraction(ctx, c.base+"/slack/interactions", c.payload)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("click answered %s", resp.Status)
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	w.waitAnswer(ctx, t, ask.ThreadTS, "race settled")
	final := w.waitDecided(ctx, t, ask, approverID)
	approved, denied := strings.Contains(text(final), "Approved"), strings.Contains(text(final), "Denied")
	if approved == denied {
		t.Fatalf("the message shows approved=%v denied=%v, want exactly one:\n%s", approved, denied, text(final))
	}
	if ran := exists(filepath.Join(w.ws, "raced.txt")); ran != approved {
		t.Errorf("the command ran=%v but the message says approved=%v", ran, approved)
	}
	if _, err := w.slack.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == approverID }); err != nil {
		t.Errorf("the losing click was not told: %v", err)
	}
	m := a.metrics(ctx, t)
	total := 0.0
	for _, o := range []string{"approved", "denied"} {
		total += metric(m, `askops_asks_total{outcome="`+o+`"}`)
	}
	if total != 1 {
		t.Errorf("A counts %v approvals and denials, want 1:\n%s", total, m)
	}
}

// TestInterrupted: Ctrl-C (SIGINT to the built binary) while `bot run` or
// `bot ask` waits on an Ask stops it with exit 1; the Ask ends cancelled,
// its message says so, and the command does not run.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-ctrlc", steps(bash("c1", "echo hi > ctrlc.txt")))
	s := w.serve(ctx, t, "S", settings{})

	for _, tt := range []struct {
		name, want, stdout string
		args               []string
	}{
		{"run", "ctrlc.txt", "stopped", []string{"run", "-config", s.config, "e2e-ctrlc: write ctrlc.txt"}},
		{"ask", "deploy-interrupted", "cancelled", []string{"ask", "-config", s.config, "--", "make", "deploy-interrupted"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := w.start(t, tt.name, tt.args...)
			ask := w.waitOpenAsk(ctx, t, tt.want)
			// The Ask must be linked to its message before the signal, or
			// nobody knows which message to update.
			link := "/archives/" + ask.Channel + "/p" + strings.ReplaceAll(ask.TS, ".", "")
			testwait.Until(ctx, t, "the Ask's message to be recorded", func() bool {
				_, body := w.slashIn(ctx, t, s.base, approvalChannel, approverID, "pending")
				return strings.Contains(body, link)
			})
			p.interrupt(t)
			if code := p.wait(ctx, t); code != 1 || !strings.Contains(p.stdout(), tt.stdout) {
				t.Errorf("exit %d, stdout %q; want 1 and %q", code, p.stdout(), tt.stdout)
			}
			w.waitDecided(ctx, t, ask, "Cancelled")
		})
	}
	if exists(filepath.Join(w.ws, "ctrlc.txt")) {
		t.Error("the command of an interrupted run ran")
	}
}

// TestSocketMode: the same round trip over Socket Mode: a replica with no
// public endpoint gets /askops run and the Approve click as websocket
// envelopes, acknowledges each, and the approved command runs.
func TestSocketMode(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.script.on("e2e-socket", steps(bash("c1", "echo hi > socket.txt"), fakeopenai.Text("done over socket mode")))
	s := w.serve(ctx, t, "S", settings{Mode: "socket"})
	if err := w.slack.WaitForSocket(ctx); err != nil {
		t.Fatalf("no Socket Mode connection: %v", err)
	}

	env, err := w.slack.SendSlashCommand(ctx, slack.SlashCommand{Command: "/askops", Text: "run e2e-socket: write socket.txt", UserID: approverID, ChannelID: opsChannel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.slack.WaitForAck(ctx, env); err != nil {
		t.Fatalf("the slash command was not acknowledged: %v", err)
	}
	ask := w.waitOpenAsk(ctx, t, "socket.txt")
	env, err = w.slack.SendInteractive(ctx, w.slack.BlockActionsPayload(fakeslack.BlockActions{
		User: approverID, Channel: ask.Channel, MessageTS: ask.TS, ActionID: slackui.ActionApprove, Value: askID(ask.Blocks),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.slack.WaitForAck(ctx, env); err != nil {
		t.Fatalf("the click was not acknowledged: %v", err)
	}
	w.waitDecided(ctx, t, ask, "Approved", approverID)
	w.waitAnswer(ctx, t, ask.ThreadTS, "done over socket mode")
	if !exists(filepath.Join(w.ws, "socket.txt")) {
		t.Error("the approved command did not run")
	}
	if code := s.terminate(); code != 0 {
		t.Errorf("the socket-mode replica exited %d after SIGTERM", code)
	}
}
