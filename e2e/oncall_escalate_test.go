package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// The on-call group of the fake workspace, and its members' DM channels
// (Slack's D… ids as the fake hands them out for conversations.open).
const (
	oncallGroup = "S_ONCALL"
	oncallA     = "UONCALL1"
	oncallB     = "UONCALL2"
)

// followups is the contract with short durations.
func followups(remind, escalate string) string {
	return "  remind_after: " + remind + "\n  escalate:\n    - {after: " + escalate + ", usergroups: [" + oncallGroup + "], users: [], dm: true}\n"
}

// setOncall makes members the fake workspace's on-call group, @oncall.
func (w *world) setOncall(members ...string) {
	w.slack.SetUserGroup(oncallGroup, members...)
	w.slack.SetUserGroupHandle(oncallGroup, "oncall")
}

// wantOnce fails the test for each count in counts (by what it counts)
// that is not 1: a step the replicas between them must do exactly once.
func wantOnce(t testing.TB, counts map[string]int) {
	t.Helper()
	for what, n := range counts {
		if n != 1 {
			t.Errorf("%d %s, want 1", n, what)
		}
	}
}

// postsIn counts the successful chat.postMessage calls to channel (in
// thread, when given) whose text holds want.
func (w *world) postsIn(channel, thread, want string) int {
	n := 0
	for _, c := range w.slack.Calls("chat.postMessage") {
		if c.OK() && c.Channel == channel && (thread == "" || c.ThreadTS == thread) && strings.Contains(c.Text, want) {
			n++
		}
	}
	return n
}

// dmAsks are the Ask messages (with an Approve button for askID, or once
// decided, any message) posted to user's DM channel.
func (w *world) dmAsks(user string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, c := range w.slack.Calls("chat.postMessage") {
		if c.OK() && c.Channel == "D"+user[1:] && askID(c.Blocks) != "" {
			m, _ := w.slack.Message(c.Channel, c.TS)
			out = append(out, m)
		}
	}
	return out
}

// TestOncallEscalation: an Ask nobody answers gets its reminder in the
// run's thread (mentioning the approvers), then escalates: a mention of the
// on-call group and the Ask as a DM to each member. An on-call member's
// click on their DM, delivered to the other replica, decides it; the
// command runs and every copy (the thread's Ask, both DMs) shows the
// decision. Each step was carried out exactly once between the replicas.
func TestOncallEscalation(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.setOncall(oncallA, oncallB)
	const command = "echo hi >> oncall.txt"
	w.script.on("e2e-oncall", steps(bash("c1", command), fakeopenai.Text("done after the on-call approved")))
	s := settings{Timeout: "60s", Approvals: followups("1s", "2s")}
	a, b := w.servePair(ctx, t, s)

	ask := w.startRunToAsk(ctx, t, a, "e2e-oncall: append hi to oncall.txt", "oncall.txt")
	id := askID(ask.Blocks)

	testwait.Until(ctx, t, "the reminder in the run's thread", func() bool {
		return w.postsIn(ask.Channel, ask.ThreadTS, "Reminder") == 1
	})
	if w.postsIn(ask.Channel, ask.ThreadTS, "<@"+approverID+">") != 1 {
		t.Errorf("the reminder does not mention the approver %s", approverID)
	}
	testwait.Until(ctx, t, "the escalation in the thread and both DMs", func() bool {
		return w.postsIn(ask.Channel, ask.ThreadTS, "<!subteam^"+oncallGroup+">") == 1 &&
			len(w.dmAsks(oncallA)) == 1 && len(w.dmAsks(oncallB)) == 1
	})
	dm := w.dmAsks(oncallB)[0]
	if askID(dm.Blocks) != id {
		t.Fatalf("the DM carries Ask %q, want %q", askID(dm.Blocks), id)
	}
	if lines(t, filepath.Join(w.ws, "oncall.txt")) != 0 {
		t.Fatal("the command ran before anyone approved")
	}

	// The escalation opened each DM once, between the two replicas (the
	// click below asks Slack again, on B, whose DM it is).
	if n := len(w.slack.Calls("conversations.open")); n != 2 {
		t.Errorf("%d conversations.open calls by the escalation, want 2", n)
	}

	// The on-call member approves from their DM; the click goes to B.
	w.clickOn(ctx, t, b, dm, oncallB, slackui.ActionApprove)
	testwait.Until(ctx, t, "the approved command to run", func() bool { return lines(t, filepath.Join(w.ws, "oncall.txt")) == 1 })
	w.waitDecided(ctx, t, ask, "Approved", oncallB)
	w.waitDecided(ctx, t, dm, "Approved", oncallB)
	w.waitDecided(ctx, t, w.dmAsks(oncallA)[0], "Approved", oncallB)
	w.waitAnswer(ctx, t, ask.ThreadTS, "done after the on-call approved")

	// Exactly once each, between the two replicas.
	wantOnce(t, map[string]int{
		"reminders":         w.postsIn(ask.Channel, ask.ThreadTS, "Reminder"),
		"escalations":       w.postsIn(ask.Channel, ask.ThreadTS, "Escalated"),
		"DMs to " + oncallA: len(w.dmAsks(oncallA)),
		"DMs to " + oncallB: len(w.dmAsks(oncallB)),
	})
}

// TestEscalationSurvivesKill9: the replica that ran the Ask is killed with
// SIGKILL before its reminder and escalation are due; the other replica
// carries both out, exactly once. The run that asked died with its replica,
// so once its lease lapses the Ask ends cancelled ("the agent stopped
// waiting") on every copy instead of waiting for an approval nothing would
// act on.
func TestEscalationSurvivesKill9(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.setOncall(oncallA, oncallB)
	w.script.on("e2e-oncall-kill", steps(bash("c1", "echo hi > oncall-killed.txt")))
	s := settings{Timeout: "9s", SweepInterval: "200ms", Approvals: followups("3s", "4s")}
	a, b := w.servePair(ctx, t, s)

	ask := w.startRunToAsk(ctx, t, a, "e2e-oncall-kill: write oncall-killed.txt", "oncall-killed.txt")
	w.killAfterRecorded(ctx, t, a, b, ask)
	if n := w.postsIn(ask.Channel, ask.ThreadTS, "Reminder"); n > 0 {
		// A slow machine: A got to the reminder before the kill. B still
		// owes the escalation, and nothing may happen twice.
		t.Logf("A posted %d reminder(s) before it was killed", n)
	}
	// A's waiter is gone: B reminds and escalates while A's lease runs
	// out, then any replica's sweep cancels the Ask.
	w.waitDecided(ctx, t, ask, "Cancelled", pending.ReasonAskerGone)
	for _, u := range []string{oncallA, oncallB} {
		dms := w.dmAsks(u)
		if len(dms) != 1 {
			t.Fatalf("%d DMs to %s, want 1", len(dms), u)
		}
		w.waitDecided(ctx, t, dms[0], "Cancelled")
	}
	wantOnce(t, map[string]int{
		"reminders":   w.postsIn(ask.Channel, ask.ThreadTS, "Reminder"),
		"escalations": w.postsIn(ask.Channel, ask.ThreadTS, "Escalated"),
	})
	if exists(filepath.Join(w.ws, "oncall-killed.txt")) {
		t.Error("the command ran")
	}
	// The audit trail has each follow-up once and the truthful end.
	events := w.auditEvents(ctx, t)
	kinds := map[string]int{}
	var reason string
	for _, e := range events {
		kinds[e.kind]++
		if e.kind == "decided" {
			reason = e.reason
		}
	}
	if kinds["reminded"] != 1 || kinds["escalated"] != 1 || kinds["decided"] != 1 {
		t.Errorf("audit kinds %v, want one reminded, one escalated, one decided", kinds)
	}
	if reason != pending.ReasonAskerGone {
		t.Errorf("the end recorded %q, want %q", reason, pending.ReasonAskerGone)
	}
}

type auditEvent struct{ kind, reason string }

// auditEvents reads the audit stream from the world's Redis.
func (w *world) auditEvents(ctx context.Context, t *testing.T) []auditEvent {
	t.Helper()
	c, err := redisconn.Open(w.redis.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs, err := c.XRange(ctx, "askops:{askops}:audit", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []auditEvent
	for _, m := range msgs {
		k, _ := m.Values["kind"].(string)
		r, _ := m.Values["reason"].(string)
		out = append(out, auditEvent{kind: k, reason: r})
	}
	return out
}

// TestTruthfulExpiry: an Ask that expires after its reminder and escalation
// says so to whoever waits on it: `bot ask` prints it, and the model's next
// request carries it, never a bare "denied".
func TestTruthfulExpiry(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.setOncall(oncallA)
	w.script.on("e2e-oncall-expire", steps(bash("c1", "echo hi > oncall-expired.txt"), fakeopenai.Text("nobody came")))
	s := w.serve(ctx, t, "S", settings{Timeout: "4s", Approvals: followups("1s", "2s")})
	const want = "expired: nobody answered in 4s (reminded at 1s, escalated to @oncall at 2s)"

	ask := w.start(t, "ask-oncall", "ask", "-config", s.config, "--", "make", "deploy-oncall")
	run := w.startRunToAsk(ctx, t, s, "e2e-oncall-expire: write oncall-expired.txt", "oncall-expired.txt")

	if code := ask.wait(ctx, t); code != 1 || !strings.Contains(ask.stdout(), want) {
		t.Errorf("bot ask exited %d printing %q; want 1 and %q", code, ask.stdout(), want)
	}
	w.waitDecided(ctx, t, run, "Expired", "reminded at 1s")
	w.waitAnswer(ctx, t, run.ThreadTS, "nobody came")
	reqs := w.requestsOf("e2e-oncall-expire")
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Raw), want) {
		t.Errorf("the model was not told %q (%d requests)", want, len(reqs))
	}
	if exists(filepath.Join(w.ws, "oncall-expired.txt")) {
		t.Error("the expired command ran")
	}
}

// TestEscalationTakenOverAfterLease: replica A claims the escalation and
// is killed with SIGKILL in the middle of it (its conversations.open hangs,
// before anything was shown). Once A's lease lapses, replica B, started
// only now, carries the escalation out: one mention, one DM per target; the
// reminder A finished is not repeated. A click on a DM, on B, decides the
// Ask and every copy shows it.
func TestEscalationTakenOverAfterLease(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	w.setOncall(oncallA, oncallB)
	w.script.on("e2e-oncall-lease", steps(bash("c1", "echo hi > oncall-lease.txt")))
	s := settings{Timeout: "40s", Approvals: followups("1s", "2s") + "  followup_lease: 2s\n"}
	w.slack.SetDelay("conversations.open", time.Minute)
	a := w.serve(ctx, t, "A", s)

	ask := w.startRunToAsk(ctx, t, a, "e2e-oncall-lease: write oncall-lease.txt", "oncall-lease.txt")
	testwait.Until(ctx, t, "A's reminder", func() bool { return w.postsIn(ask.Channel, ask.ThreadTS, "Reminder") == 1 })
	if _, err := w.slack.WaitForCall(ctx, "conversations.open", func(fakeslack.Call) bool { return true }); err != nil {
		t.Fatalf("A never started the escalation: %v", err)
	}
	if n := w.postsIn(ask.Channel, ask.ThreadTS, "Escalated"); n != 0 {
		t.Fatalf("A showed the escalation (%d) before its DM channels were open", n)
	}
	a.kill9(t)
	w.slack.SetDelay("conversations.open", 0)
	b := w.serve(ctx, t, "B", s)

	testwait.Until(ctx, t, "B's escalation and DMs", func() bool {
		return w.postsIn(ask.Channel, ask.ThreadTS, "Escalated") == 1 && len(w.dmAsks(oncallA)) == 1 && len(w.dmAsks(oncallB)) == 1
	})
	dm := w.dmAsks(oncallA)[0]
	w.clickOn(ctx, t, b, dm, oncallA, slackui.ActionApprove)
	w.waitDecided(ctx, t, ask, "Approved", oncallA)
	w.waitDecided(ctx, t, dm, "Approved", oncallA)
	w.waitDecided(ctx, t, w.dmAsks(oncallB)[0], "Approved", oncallA)
	wantOnce(t, map[string]int{
		"reminders":         w.postsIn(ask.Channel, ask.ThreadTS, "Reminder"),
		"escalations":       w.postsIn(ask.Channel, ask.ThreadTS, "Escalated"),
		"DMs to " + oncallA: len(w.dmAsks(oncallA)),
		"DMs to " + oncallB: len(w.dmAsks(oncallB)),
	})
	kinds := map[string]int{}
	for _, e := range w.auditEvents(ctx, t) {
		kinds[e.kind]++
	}
	if kinds["reminded"] != 1 || kinds["escalated"] != 1 {
		t.Errorf("audit kinds %v, want one reminded and one escalated", kinds)
	}
}
