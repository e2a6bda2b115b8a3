package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/slackui"
)

// The chat-ops tests run the agent on replica A and send every slash
// command and click to replica B: what /askops stop, mode, grants and
// pending do must reach A through Redis, not through B's memory.

// actionRevokeGrant is the action id of the Revoke buttons /askops grants
// shows (cmd/bot's ActionRevokeGrant; package main cannot be imported).
const actionRevokeGrant = "askops_revoke_grant"

// slashAnswer is a slash command's immediate reply, as Slack shows it.
type slashAnswer struct {
	ResponseType string
	Text         string
	Blocks       []slack.Block
}

// command types `/askops TEXT` as user on replica base and decodes the
// reply; anything but a 200 with a JSON reply fails the test.
func (w *world) command(ctx context.Context, t *testing.T, base, user, cmdText string) slashAnswer {
	t.Helper()
	code, body := w.slash(ctx, t, base, user, cmdText)
	if code != http.StatusOK {
		t.Fatalf("/askops %s answered %d: %s", cmdText, code, body)
	}
	var r struct {
		ResponseType string          `json:"response_type"`
		Text         string          `json:"text"`
		Blocks       json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("/askops %s: reply %q: %v", cmdText, body, err)
	}
	a := slashAnswer{ResponseType: r.ResponseType, Text: r.Text}
	if len(r.Blocks) > 0 {
		var blocks slack.Blocks
		if err := json.Unmarshal(r.Blocks, &blocks); err != nil {
			t.Fatalf("/askops %s: blocks %s: %v", cmdText, r.Blocks, err)
		}
		a.Blocks = blocks.BlockSet
	}
	return a
}

// revokeRow is one grant /askops grants lists: what it says and the value
// of its Revoke button.
type revokeRow struct{ text, value string }

func revokeRows(blocks []slack.Block) []revokeRow {
	var rows []revokeRow
	for _, b := range blocks {
		s, ok := b.(*slack.SectionBlock)
		if !ok || s.Accessory == nil || s.Accessory.ButtonElement == nil || s.Accessory.ButtonElement.ActionID != actionRevokeGrant {
			continue
		}
		text := ""
		if s.Text != nil {
			text = s.Text.Text
		}
		rows = append(rows, revokeRow{text: text, value: s.Accessory.ButtonElement.Value})
	}
	return rows
}

// revoke clicks a Revoke button (value) of an /askops grants reply, as user,
// on replica base, and waits for the ephemeral answer to user containing want.
func (w *world) revoke(ctx context.Context, t *testing.T, base, user, value, want string) {
	t.Helper()
	// The grants reply is ephemeral: Slack gives its clicks a message ts the
	// bot never posted, so any ts will do.
	resp, err := w.slack.PostInteraction(ctx, base+"/slack/interactions", w.slack.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: opsChannel, MessageTS: "1700000000.999999", ActionID: actionRevokeGrant, Value: value,
	}))
	if err != nil {
		t.Fatalf("revoke click: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke click by %s: %s", user, resp.Status)
	}
	if _, err := w.slack.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool {
		return c.OK() && c.User == user && strings.Contains(c.Text, want)
	}); err != nil {
		t.Fatalf("%s was not told %q after the revoke click: %v", user, want, err)
	}
}

// runIDRe finds the run id on a run's status message and in /askops pending.
var runIDRe = regexp.MustCompile("`(run_[a-z2-7]+)`")

// statusRunID is the id of the run whose status message starts threadTS.
func (w *world) statusRunID(t *testing.T, threadTS string) string {
	t.Helper()
	status, ok := w.slack.Message(opsChannel, threadTS)
	m := runIDRe.FindStringSubmatch(text(status))
	if !ok || m == nil {
		t.Fatalf("no run id on the status message %s: %q", threadTS, text(status))
	}
	return m[1]
}

// messageLink is the link /askops pending gives to an Ask's message.
func messageLink(m fakeslack.Message) string {
	return "/archives/" + m.Channel + "/p" + strings.ReplaceAll(m.TS, ".", "")
}

// TestPendingAndStopFromOtherReplica: /askops pending on B lists the Ask
// A's run waits on (its tool, command, run id and a link to its message);
// /askops stop RUN on B is refused to a non-approver and, from an approver,
// stops the run on A: B's ephemeral reply says the process running it took
// the request, the Ask ends cancelled (message updated, buttons gone, no
// longer pending), the command never runs, and the thread says the run was
// stopped.
func TestPendingAndStopFromOtherReplica(t *testing.T) {
	t.Parallel()
	pendingAndStopFromOtherReplica(t, newWorld(t))
}

// pendingAndStopFromOtherReplica runs the scenario in w (on its own Redis or a topology's).
func pendingAndStopFromOtherReplica(t *testing.T, w *world) {
	ctx := testCtx(t)
	w.script.on("e2e-stop", steps(bash("c1", "touch stopped.txt"), fakeopenai.Text("the stopped run went on")))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-stop: create stopped.txt", "stopped.txt")
	runID := w.statusRunID(t, ask.ThreadTS)

	// pending on B: A's Ask, once A has linked it to its message.
	var listed slashAnswer
	testwait.Until(ctx, t, "/askops pending on B to link A's Ask", func() bool {
		listed = w.command(ctx, t, b.base, approverID, "pending")
		return strings.Contains(listed.Text, messageLink(ask))
	})
	for _, want := range []string{"1 open Ask", "`bash`", "touch stopped.txt", "run `" + runID + "`"} {
		if !strings.Contains(listed.Text, want) {
			t.Errorf("/askops pending on B lacks %q:\n%s", want, listed.Text)
		}
	}
	if listed.ResponseType != "ephemeral" {
		t.Errorf("/askops pending answered %q, want ephemeral", listed.ResponseType)
	}

	// A non-approver may not stop it: the Ask stays open.
	if r := w.command(ctx, t, b.base, intruderID, "stop "+runID); !strings.Contains(r.Text, "only approvers and run starters may stop runs") {
		t.Errorf("a non-approver's stop on B: %q", r.Text)
	}
	if now, _ := w.slack.Message(ask.Channel, ask.TS); askID(now.Blocks) == "" {
		t.Fatalf("a refused stop closed the Ask:\n%s", text(now))
	}

	// The approver's stop on B reaches A, which confirms it.
	r := w.command(ctx, t, b.base, approverID, "stop "+runID)
	if r.ResponseType != "ephemeral" || !strings.Contains(r.Text, "Stopping run `"+runID+"`") || !strings.Contains(r.Text, "took the request") {
		t.Fatalf("stop on B of A's run answered %s %q, want an ephemeral saying A took the request", r.ResponseType, r.Text)
	}
	w.waitDecided(ctx, t, ask, "Cancelled")
	w.waitAnswer(ctx, t, ask.ThreadTS, "Run `"+runID+"` was stopped")
	testwait.Until(ctx, t, "/askops pending on B to list no open Ask", func() bool {
		return strings.Contains(w.command(ctx, t, b.base, approverID, "pending").Text, "No open Asks")
	})
	if exists(filepath.Join(w.ws, "stopped.txt")) {
		t.Error("the stopped run's command ran")
	}
	if n := len(w.requestsOf("e2e-stop")); n != 1 {
		t.Errorf("the stopped run made %d model requests, want 1", n)
	}
	ma, mb := a.metrics(ctx, t), b.metrics(ctx, t)
	if got := metric(ma, `askops_runs_total{state="cancelled"}`); got != 1 {
		t.Errorf("A counts %v cancelled runs, want 1", got)
	}
	if got := metric(mb, `askops_runs_total{state="cancelled"}`); got != 0 {
		t.Errorf("B counts %v cancelled runs, want 0: the run lived on A", got)
	}
}

// TestModeNeverFromOtherReplica: while A's run waits on an Ask, a
// non-approver's /askops mode never on B is refused and changes nothing;
// an approver's takes effect on A: the Ask already posted is still decided
// by a human (approved on B, its command runs), but the run's next asking
// call is denied without a new Ask message, does not run, and the model is
// told why.
func TestModeNeverFromOtherReplica(t *testing.T) {
	t.Parallel()
	modeNeverFromOtherReplica(t, newWorld(t))
}

// modeNeverFromOtherReplica runs the scenario in w (on its own Redis or a topology's).
func modeNeverFromOtherReplica(t *testing.T, w *world) {
	ctx := testCtx(t)
	w.script.on("e2e-never", steps(
		bash("c1", "touch before.txt"), bash("c2", "touch after.txt"),
		fakeopenai.Text("stopped asking in mode never"),
	))
	a, b := w.servePair(ctx, t, settings{})

	ask := w.startRunToAsk(ctx, t, a, "e2e-never: create before.txt and after.txt", "before.txt")

	if r := w.command(ctx, t, b.base, intruderID, "mode never"); !strings.Contains(r.Text, "only approvers may change the mode") {
		t.Errorf("a non-approver's mode never on B: %q", r.Text)
	}
	if r := w.command(ctx, t, a.base, approverID, "mode"); !strings.Contains(r.Text, "configured mode `ask`") {
		t.Fatalf("after a refused mode never, A sees: %q", r.Text)
	}
	if r := w.command(ctx, t, b.base, approverID, "mode never"); r.ResponseType != "ephemeral" || !strings.Contains(r.Text, "now use mode `never`") {
		t.Fatalf("mode never on B answered %s %q", r.ResponseType, r.Text)
	}
	if r := w.command(ctx, t, a.base, approverID, "mode"); !strings.Contains(r.Text, "mode `never`, set by <@"+approverID+">") {
		t.Fatalf("A does not see B's mode: %q", r.Text)
	}

	w.click(ctx, t, b.base, ask, approverID, slackui.ActionApprove)
	w.waitDecided(ctx, t, ask, "Approved", approverID)
	// The run either ends (c2 denied by the mode) or, wrongly, asks again.
	const answer = "stopped asking in mode never"
	testwait.Until(ctx, t, "the run to end or ask again", func() bool {
		if w.askPosts() > 1 {
			return true
		}
		for _, m := range w.slack.Thread(opsChannel, ask.ThreadTS) {
			if strings.Contains(m.Text, answer) {
				return true
			}
		}
		return false
	})
	if n := w.askPosts(); n != 1 {
		t.Fatalf("%d Ask messages were posted, want 1 (mode never asks no one)", n)
	}
	w.waitAnswer(ctx, t, ask.ThreadTS, answer)
	if !exists(filepath.Join(w.ws, "before.txt")) {
		t.Error("the call approved before mode never did not run")
	}
	if exists(filepath.Join(w.ws, "after.txt")) {
		t.Error("the call after mode never ran")
	}
	reqs := w.requestsOf("e2e-never")
	if len(reqs) != 3 {
		t.Fatalf("the run made %d model requests, want 3", len(reqs))
	}
	for _, want := range []string{"mode never: ", "no one is asked in this session", "not performed"} {
		if !strings.Contains(string(reqs[2].Raw), want) {
			t.Errorf("the model's request after the denied call lacks %q:\n%s", want, reqs[2].Raw)
		}
	}
}

// TestGrantsFromOtherReplica: "Approve for session" of A's run's Ask makes
// a session grant that /askops grants on B lists with a Revoke button; a
// non-approver's Revoke click is refused and the grant stays; the
// approver's Revoke on B removes it for every replica, so the run's next
// identical call on A is asked about again instead of running on the grant.
func TestGrantsFromOtherReplica(t *testing.T) {
	t.Parallel()
	grantsFromOtherReplica(t, newWorld(t))
}

// grantsFromOtherReplica runs the scenario in w (on its own Redis or a topology's).
func grantsFromOtherReplica(t *testing.T, w *world) {
	ctx := testCtx(t)
	const command = "echo g >> granted.txt"
	w.script.on("e2e-grants", steps(
		bash("c1", command), bash("c2", "touch between.txt"), bash("c3", command),
		fakeopenai.Text("asked again after the revoke"),
	))
	a, b := w.servePair(ctx, t, settings{})
	granted := filepath.Join(w.ws, "granted.txt")

	ask1 := w.startRunToAsk(ctx, t, a, "e2e-grants: append to granted.txt twice", "granted.txt")
	if r := w.command(ctx, t, b.base, approverID, "grants"); len(revokeRows(r.Blocks)) != 0 {
		t.Fatalf("/askops grants lists grants before any was made: %q", r.Text)
	}
	w.click(ctx, t, b.base, ask1, approverID, slackui.ActionApproveSession)
	w.waitDecided(ctx, t, ask1, "Approved for session", approverID)
	// The run now waits on c2, with the grant in place.
	ask2 := w.waitOpenAsk(ctx, t, "between.txt")
	if n := lines(t, granted); n != 1 {
		t.Fatalf("granted.txt has %d lines, want 1", n)
	}

	list := w.command(ctx, t, b.base, approverID, "grants")
	rows := revokeRows(list.Blocks)
	if len(rows) != 1 {
		t.Fatalf("/askops grants on B lists %d grants, want 1: %q %s", len(rows), list.Text, fakeslack.BlockText(list.Blocks))
	}
	session := opsChannel + "/" + ask1.ThreadTS
	for _, want := range []string{"granted.txt", "exactly", "session " + session, "<@" + approverID + ">"} {
		if !strings.Contains(rows[0].text, want) {
			t.Errorf("the listed grant lacks %q: %s", want, rows[0].text)
		}
	}
	if !strings.HasPrefix(rows[0].value, session+" ") {
		t.Errorf("the Revoke button's value %q does not name session %s", rows[0].value, session)
	}

	w.revoke(ctx, t, b.base, intruderID, rows[0].value, "only approvers may revoke")
	if n := len(revokeRows(w.command(ctx, t, b.base, approverID, "grants").Blocks)); n != 1 {
		t.Fatalf("after a non-approver's revoke B lists %d grants, want 1", n)
	}
	w.revoke(ctx, t, b.base, approverID, rows[0].value, "Grant revoked.")
	for _, r := range []*replica{a, b} {
		if l := w.command(ctx, t, r.base, approverID, "grants"); len(revokeRows(l.Blocks)) != 0 || !strings.Contains(l.Text, "No session grants") {
			t.Errorf("after the revoke %s lists: %q %s", r.name, l.Text, fakeslack.BlockText(l.Blocks))
		}
	}

	// Without the grant, the identical c3 asks again.
	w.click(ctx, t, b.base, ask2, approverID, slackui.ActionApprove)
	ask3 := w.waitOpenAsk(ctx, t, "granted.txt", ask1, ask2) // ask2 names the thread, whose title says granted.txt
	if ask3.ThreadTS != ask1.ThreadTS {
		t.Errorf("the repeated call asked in thread %q, want the run's %q", ask3.ThreadTS, ask1.ThreadTS)
	}
	w.click(ctx, t, b.base, ask3, approverID, slackui.ActionDeny)
	w.waitAnswer(ctx, t, ask1.ThreadTS, "asked again after the revoke")
	if n := lines(t, granted); n != 1 {
		t.Errorf("granted.txt has %d lines, want 1 (the revoked grant must not cover c3)", n)
	}
	if n := w.askPosts(); n != 3 {
		t.Errorf("%d Ask messages were posted, want 3", n)
	}
}

// The chat-ops scenarios on the topologies users run. On a Cluster, PUBLISH
// counts only the subscribers of the node that took it, which once made
// every /askops stop from another replica fail.

func TestChatOpsOnCluster(t *testing.T) {
	t.Parallel()
	requireBot(t)
	runOnTopology(t, redistest.StartCluster(t))
}

func TestChatOpsOnSentinel(t *testing.T) {
	t.Parallel()
	requireBot(t)
	runOnTopology(t, redistest.StartSentinel(t, 1))
}

// topology is a Cluster or a Sentinel set.
type topology interface {
	URL() string
	FlushAll() error
}

func runOnTopology(t *testing.T, top topology) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"PendingAndStopFromOtherReplica", pendingAndStopFromOtherReplica},
		{"ModeNeverFromOtherReplica", modeNeverFromOtherReplica},
		{"GrantsFromOtherReplica", grantsFromOtherReplica},
	} {
		t.Run(sc.name, func(t *testing.T) {
			if err := top.FlushAll(); err != nil {
				t.Fatal(err)
			}
			w := newWorld(t)
			w.redisURL = top.URL()
			sc.run(t, w)
		})
	}
}
