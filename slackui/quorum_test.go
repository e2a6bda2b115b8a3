package slackui

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// messageNow is wa's message as it stands.
func (w *world) messageNow(wa *waiting) fakeslack.Message {
	m, _ := w.fake.Message(wa.channel, wa.ts)
	return m
}

// lastEphemeral waits for the nth ephemeral reply to user (1-based) and
// returns its text.
func (w *world) nthEphemeral(user string, n int) string {
	w.t.Helper()
	calls, err := w.fake.WaitForCalls(w.t.Context(), "chat.postEphemeral", n, func(c fakeslack.Call) bool { return c.User == user })
	if err != nil {
		w.t.Fatalf("no ephemeral reply #%d to %s: %v", n, user, err)
	}
	return calls[n-1].Text
}

// quorumRequest is a bash call ("terraform apply", run run-q, session
// sess-q) that needs two approvals: the Ask every quorum test starts from.
func quorumRequest() pending.Request {
	req := bashRequest("run-q", "sess-q", "terraform apply")
	req.Approvals = 2
	return req
}

func clickOK(t *testing.T, resp *http.Response) {
	t.Helper()
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("click answered %d", resp.StatusCode)
	}
}

func TestQuorumNeedsTwoDistinctApprovers(t *testing.T) {
	forEachStore(t, worldOptions{grantDurations: []time.Duration{15 * time.Minute}}, func(t *testing.T, w *world) {
		wa := w.ask(quorumRequest())
		open := w.messageNow(wa)
		if blocksHaveButton(open.Blocks, ActionApproveSession) || blocksHaveButton(open.Blocks, ApproveForAction(15*time.Minute)) {
			t.Fatal("a quorum Ask offers a session approval")
		}
		if s := fakeslack.BlockText(open.Blocks); !strings.Contains(s, "Needs 2 approvals from different people") || !strings.Contains(open.Text, "(0 of 2 approvals)") {
			t.Fatalf("the open message does not say it needs 2 approvals:\n%s\n%s", open.Text, s)
		}
		if err := CheckLimits(open.Blocks); err != nil {
			t.Error(err)
		}

		clickOK(t, w.click(wa, approverA, ActionApprove))
		if got := w.nthEphemeral(approverA, 1); !strings.Contains(got, "counted: 1 of 2") {
			t.Errorf("first approver told %q", got)
		}
		if _, err := w.fake.WaitForMessage(t.Context(), wa.channel, wa.ts, func(m fakeslack.Message) bool {
			return strings.Contains(fakeslack.BlockText(m.Blocks), "1 of 2 approvals: <@"+approverA+">") && blocksHaveButton(m.Blocks, ActionApprove)
		}); err != nil {
			t.Fatalf("the message never showed the first vote: %v\n%s", err, fakeslack.BlockText(w.messageNow(wa).Blocks))
		}

		clickOK(t, w.click(wa, approverA, ActionApprove))
		if got := w.nthEphemeral(approverA, 2); !strings.Contains(got, "already approved") || !strings.Contains(got, "one person counts once") {
			t.Errorf("repeat approver told %q", got)
		}
		select {
		case a := <-wa.done:
			t.Fatalf("one person's two clicks decided the Ask: %s by %s", a.Status, a.DecidedBy)
		default:
		}

		clickOK(t, w.click(wa, approverB, ActionApprove))
		got := wa.result(t)
		if got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverB || got.Votes.List()[0] != approverA {
			t.Fatalf("result %s by %s, votes %q", got.Status, got.DecidedBy, got.Votes)
		}
		if ended := w.messageEnded(wa); !strings.Contains(ended, "2 of 2 approvals: <@"+approverA+">, <@"+approverB+">") {
			t.Errorf("the decided message does not name both approvers:\n%s", ended)
		}
		events, _ := w.clicks.Audit(t.Context(), 0)
		var kinds []string
		for _, e := range events {
			if e.AskID == got.ID {
				kinds = append(kinds, string(e.Kind))
			}
		}
		if strings.Join(kinds, " ") != "asked voted refused voted decided" {
			t.Errorf("audit trail %q; want asked voted refused voted decided", kinds)
		}
	})
}

func TestQuorumOneDenyEndsIt(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(quorumRequest())
		clickOK(t, w.click(wa, approverA, ActionApprove))
		w.nthEphemeral(approverA, 1)
		clickOK(t, w.click(wa, approverB, ActionDeny))
		got := wa.result(t)
		if got.Status != pending.Status(pending.Denied) || got.DecidedBy != approverB || got.Tally() != "1 of 2 approvals ("+approverA+")" {
			t.Fatalf("result %s by %s, %s", got.Status, got.DecidedBy, got.Tally())
		}
		if ended := w.messageEnded(wa); !strings.Contains(ended, "Denied* by <@"+approverB+">") || !strings.Contains(ended, "Ended after 1 of 2 approvals: <@"+approverA+">") {
			t.Errorf("the denied message:\n%s", ended)
		}
	})
}

func TestSelfApprovalRefused(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		req := bashRequest("run-s", "sess-s", "make deploy")
		req.StartedBy = approverA // approverA started the run
		wa := w.ask(req)
		clickOK(t, w.click(wa, approverA, ActionApprove))
		if got := w.nthEphemeral(approverA, 1); got != approval.SelfApprovalRefusal {
			t.Errorf("the starter was told %q", got)
		}
		clickOK(t, w.click(wa, approverA, ActionApproveSession))
		w.nthEphemeral(approverA, 2)
		if a, _ := w.clicks.Get(t.Context(), wa.id); a.Status != pending.StatusPending {
			t.Fatalf("the starter's own approval decided the Ask: %s", a.Status)
		}
		events, _ := w.clicks.Audit(t.Context(), 0)
		refused := 0
		for _, e := range events {
			if e.Kind == pending.EventRefused && e.AskID == wa.id && e.By == approverA && strings.Contains(e.Reason, "self-approval") {
				refused++
			}
		}
		if refused != 2 {
			t.Errorf("%d refused self-approvals audited; want 2", refused)
		}
		clickOK(t, w.click(wa, approverB, ActionApprove))
		if got := wa.result(t); got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverB {
			t.Fatalf("another approver's click: %s by %s", got.Status, got.DecidedBy)
		}

		// The starter may still deny their own run's call.
		own := w.ask(req)
		clickOK(t, w.click(own, approverA, ActionDeny))
		if got := own.result(t); got.Status != pending.Status(pending.Denied) || got.DecidedBy != approverA {
			t.Fatalf("the starter's deny: %s by %s", got.Status, got.DecidedBy)
		}
	})
}

func TestSelfApprovalRule(t *testing.T) {
	a := pending.Ask{Request: pending.Request{StartedBy: "U1"}}
	only := func(u string) bool { return u == "U1" }
	nobody := func(string) bool { return false }
	for _, tc := range []struct {
		name    string
		p       approval.SelfApproval
		by      string
		outcome pending.Outcome
		only    func(string) bool
		refuse  bool
	}{
		{"starter approves", approval.SelfApproval{}, "U1", pending.Approved, nobody, true},
		{"starter approves for session", approval.SelfApproval{}, "U1", pending.ApprovedSession, nobody, true},
		{"starter denies", approval.SelfApproval{}, "U1", pending.Denied, nobody, false},
		{"another approves", approval.SelfApproval{}, "U2", pending.Approved, nobody, false},
		{"starter is the only approver", approval.SelfApproval{}, "U1", pending.Approved, only, false},
		{"self_approval: true", approval.SelfApproval{Allowed: true}, "U1", pending.Approved, nobody, false},
	} {
		if got := tc.p.Refuses(a, tc.by, tc.outcome, tc.only); got != tc.refuse {
			t.Errorf("%s: refuses = %v", tc.name, got)
		}
	}
	ap, _ := NewApprovers(ApproversConfig{Users: []string{"U1"}})
	two, _ := NewApprovers(ApproversConfig{Users: []string{"U1", "U2"}})
	if !ap.Only("U1") || two.Only("U1") || ap.Only("U2") {
		t.Error("Approvers.Only")
	}
}

func TestApproveForADuration(t *testing.T) {
	forEachStore(t, worldOptions{grantDurations: []time.Duration{15 * time.Minute, time.Hour}}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-d", "sess-d", "make deploy"))
		open := w.messageNow(wa)
		var labels []string
		confirms := map[string]string{}
		for _, b := range open.Blocks {
			ab, ok := b.(*slack.ActionBlock)
			if !ok {
				continue
			}
			for _, e := range ab.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					labels = append(labels, btn.Text.Text)
					if btn.Confirm != nil {
						confirms[btn.Text.Text] = btn.Confirm.Title.Text + " | " + btn.Confirm.Text.Text
					}
				}
			}
		}
		if got := strings.Join(labels, ", "); !strings.HasPrefix(got, "Approve, Approve for 15 min, Approve for 1 h, Approve for session, Deny") {
			t.Fatalf("buttons %q", got)
		}
		if c := confirms["Approve for 15 min"]; !strings.HasPrefix(c, "Approve for 15 min? |") || !strings.Contains(c, "for the next 15 min") || !strings.Contains(c, `exactly "make deploy"`) {
			t.Errorf("15-min confirm %q does not state the time and scope", c)
		}
		if c := confirms["Approve for session"]; !strings.Contains(c, "until the session ends") {
			t.Errorf("session confirm %q", c)
		}
		if err := CheckLimits(open.Blocks); err != nil {
			t.Error(err)
		}
		// A duration the message did not offer changes nothing.
		clickOK(t, w.click(wa, approverB, ApproveForAction(30*time.Minute)))
		if got := w.nthEphemeral(approverB, 1); !strings.Contains(got, "not offered") {
			t.Errorf("an unoffered duration: told %q", got)
		}

		clickOK(t, w.click(wa, approverA, ApproveForAction(15*time.Minute)))
		got := wa.result(t)
		if got.Status != pending.Status(pending.ApprovedSession) || got.GrantTTL != 15*time.Minute {
			t.Fatalf("result %s, grant ttl %s", got.Status, got.GrantTTL)
		}
		if ended := w.messageEnded(wa); !strings.Contains(ended, "Approved for 15 min* by <@"+approverA+">") {
			t.Errorf("decided message:\n%s", ended)
		}
		gs, err := w.grants.List(t.Context(), "sess-d")
		if err != nil || len(gs) != 1 || gs[0].Until.IsZero() || gs[0].Until.Sub(gs[0].CreatedAt) != 15*time.Minute {
			t.Fatalf("grants %+v, %v; want one lasting 15 min", gs, err)
		}
	})
}

func TestSelfApprovalAuthorityForTheHome(t *testing.T) {
	ap, _ := NewApprovers(ApproversConfig{Users: []string{approverA, approverB}})
	own := pending.Ask{Request: pending.Request{StartedBy: approverA}}
	for _, tc := range []struct {
		rule approval.SelfApproval
		user string
		want bool
	}{
		{approval.SelfApproval{}, approverA, false},
		{approval.SelfApproval{}, approverB, true},
		{approval.SelfApproval{Allowed: true}, approverA, true},
		{approval.SelfApproval{}, stranger, false},
	} {
		got, err := SelfApprovalAuthority{Approvers: ap, Rule: tc.rule}.MayDecideAsk(t.Context(), tc.user, own)
		if err != nil || got != tc.want {
			t.Errorf("%+v %s: %v, %v; want %v", tc.rule, tc.user, got, err, tc.want)
		}
	}
}

// An "Approve for" action id carries its duration and reads back only as one.
func TestApproveForActionID(t *testing.T) {
	if d, ok := parseApproveFor(ApproveForAction(15 * time.Minute)); !ok || d != 15*time.Minute {
		t.Errorf("round trip of the action id: %s %v", d, ok)
	}
	for _, bad := range []string{ActionApproveFor, ActionApproveFor + "x", ActionApproveFor + "-5", ActionApproveFor + "0", ActionApprove} {
		if _, ok := parseApproveFor(bad); ok {
			t.Errorf("parseApproveFor(%q) ok", bad)
		}
	}
}

// A quorum counts people: an API token's approval (cast on the store as
// the gateway casts it, the token's name the decider) and a Slack
// approver's click may be one person, so together they are one of two
// approvals, and the message and the clicker are told why. A second Slack
// approver completes it.
func TestQuorumTokenAndSlackUserMayBeOnePerson(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(quorumRequest())
		if _, err := w.clicks.Cast(t.Context(), wa.id, pending.Ballot{Outcome: pending.Approved, By: "ci-token"}); err != nil {
			t.Fatal(err)
		}

		clickOK(t, w.click(wa, approverA, ActionApprove))
		if got := w.nthEphemeral(approverA, 1); !strings.Contains(got, "counted: 1 of 2") || !strings.Contains(got, pending.UncountedNote) {
			t.Errorf("the Slack approver after a token told %q", got)
		}
		select {
		case a := <-wa.done:
			t.Fatalf("a token and a Slack user who may be one person decided a 2-approval Ask: %s by %s (votes %q)", a.Status, a.DecidedBy, a.Votes)
		default:
		}
		if _, err := w.fake.WaitForMessage(t.Context(), wa.channel, wa.ts, func(m fakeslack.Message) bool {
			s := fakeslack.BlockText(m.Blocks)
			return strings.Contains(s, "1 of 2 approvals: ci-token, <@"+approverA+">") && strings.Contains(s, pending.UncountedNote) && blocksHaveButton(m.Blocks, ActionApprove)
		}); err != nil {
			t.Fatalf("the message does not show one person counted of the two votes: %v\n%s", err, fakeslack.BlockText(w.messageNow(wa).Blocks))
		}

		clickOK(t, w.click(wa, approverB, ActionApprove))
		if got := wa.result(t); got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverB || got.Counted() != 2 {
			t.Fatalf("a second Slack approver: %s by %s, %d counted", got.Status, got.DecidedBy, got.Counted())
		}
	})
}
