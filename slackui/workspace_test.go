package slackui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

// outsider is a member of a Slack Connect channel from another
// organisation: Slack reports their home team as partnerTeam.
const (
	outsider    = "UPARTNER"
	partnerTeam = "TPARTNER"
)

// submitReason posts the deny-reason form for wa as user and returns the
// modal's answer.
func (w *world) submitReason(wa *waiting, user, reason string) slack.ViewSubmissionResponse {
	w.t.Helper()
	resp, err := w.fake.PostInteraction(w.t.Context(), w.url, w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: user, CallbackID: CallbackDenyReason, PrivateMetadata: wa.reasonForm(),
		Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: reason}},
	}))
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var got slack.ViewSubmissionResponse
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("form answered %d", resp.StatusCode)
	}
	_ = json.NewDecoder(resp.Body).Decode(&got) // an empty body is no response
	return got
}

// noTraceOf fails if the store holds any vote or audit event of user on wa.
func (w *world) noTraceOf(wa *waiting, user string) {
	w.t.Helper()
	a, err := w.clicks.Get(w.t.Context(), wa.id)
	if err != nil {
		w.t.Fatal(err)
	}
	if a.Status != pending.StatusPending || len(a.Votes.List()) != 0 {
		w.t.Fatalf("ask is %s with votes %v after the outsider's clicks", a.Status, a.Votes.List())
	}
	events, err := w.clicks.Audit(w.t.Context(), 0)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range events {
		if e.By == user {
			w.t.Fatalf("the audit holds the outsider's %s event: %+v", e.Kind, e)
		}
	}
}

// A member of another organisation in a Slack Connect channel decides
// nothing, by whatever path askops would otherwise have admitted them:
// anyone_in_channel, their user id among the approvers, or a user group
// that (wrongly) lists them. Each click and the deny-reason form is
// refused with the outsiders' words before any check or store is asked,
// so the Ask keeps no vote and the audit no event of theirs; an approver
// of askops' own workspace then decides it as always. Through the signed
// wire and slack-go's decoding, against both stores.
func TestOutsiderOfASharedChannelDecidesNothing(t *testing.T) {
	ways := []struct {
		name string
		cfg  func(w *world) ApproversConfig
	}{
		{"anyone_in_channel", func(*world) ApproversConfig { return ApproversConfig{AnyoneInChannel: true} }},
		{"named among the approvers", func(*world) ApproversConfig {
			return ApproversConfig{Users: []string{approverA, outsider}}
		}},
		{"member of an approver group", func(w *world) ApproversConfig {
			w.fake.SetUserGroup("SAPPROVERS", approverA, outsider)
			return ApproversConfig{Groups: []string{"SAPPROVERS"}, API: w.api}
		}},
	}
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
				w.fake.SetUserTeam(outsider, partnerTeam)
				approvers, err := NewApprovers(way.cfg(w))
				if err != nil {
					t.Fatal(err)
				}
				w.serveClicks(approvers, testLog(t))
				if ok, _ := approvers.MayDecide(t.Context(), outsider); !ok {
					t.Fatal("the approver set does not name the outsider: the test proves nothing")
				}
				wa := w.ask(bashRequest("run-x", "sess-x", "make deploy"))
				actions := []string{ActionApprove, ActionApproveSession, ActionDeny, ActionDenyReason, ActionShowFull}
				for n, action := range actions {
					clickOK(t, w.click(wa, outsider, action))
					if got := w.nthEphemeral(outsider, n+1); got != OutsiderText {
						t.Fatalf("%s: the outsider was told %q", action, got)
					}
				}
				if got := w.submitReason(wa, outsider, "not on my watch"); got.ResponseAction != slack.RAErrors || got.Errors[BlockDenyReason] != OutsiderText {
					t.Fatalf("the outsider's deny-reason form was answered %+v", got)
				}
				if opened := w.fake.Calls("views.open"); len(opened) != 0 {
					t.Errorf("a modal was opened for the outsider: %+v", opened)
				}
				w.noTraceOf(wa, outsider)
				w.stillPending("sess-x", wa)

				clickOK(t, w.click(wa, approverA, ActionApprove))
				if got := wa.result(t); got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverA {
					t.Fatalf("the insider's approval ended the Ask %s by %s", got.Status, got.DecidedBy)
				}
			})
		})
	}
}

// An outsider's approval is no vote toward a quorum either: the Ask
// needs two of askops' own people.
func TestOutsiderIsNoQuorumVote(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.fake.SetUserTeam(outsider, partnerTeam)
	approvers, err := NewApprovers(ApproversConfig{AnyoneInChannel: true})
	if err != nil {
		t.Fatal(err)
	}
	w.serveClicks(approvers, testLog(t))
	wa := w.ask(quorumRequest())
	clickOK(t, w.click(wa, outsider, ActionApprove))
	w.nthEphemeral(outsider, 1)
	clickOK(t, w.click(wa, approverA, ActionApprove))
	w.nthEphemeral(approverA, 1) // "counted: 1 of 2"
	if a, _ := w.clicks.Get(t.Context(), wa.id); a.Status != pending.StatusPending || strings.Join(a.Votes.List(), ",") != approverA {
		t.Fatalf("after the outsider's and one insider's approval the Ask is %s with votes %v", a.Status, a.Votes.List())
	}
	clickOK(t, w.click(wa, approverB, ActionApprove))
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("two insiders' approvals ended the Ask %s", got.Status)
	}
}

// Enterprise Grid: a user Slack reports with askops' organisation's id
// (E…) decides; a user of another workspace (T…), even one that may be
// of the same organisation, is refused: a payload cannot place it.
func TestEnterpriseGridUsers(t *testing.T) {
	w := newWorld(t, worldOptions{enterprise: "EGRID"})
	w.fake.SetUserTeam(approverA, "TSIBLING")
	w.fake.SetUserTeam(approverB, "EGRID")
	wa := w.ask(bashRequest("run-g", "sess-g", "make deploy"))
	clickOK(t, w.click(wa, approverA, ActionApprove))
	if got := w.nthEphemeral(approverA, 1); got != OutsiderText {
		t.Fatalf("a user of another workspace was told %q", got)
	}
	w.noTraceOf(wa, approverA)
	clickOK(t, w.click(wa, approverB, ActionApprove))
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverB {
		t.Fatalf("the organisation's user ended the Ask %s by %s", got.Status, got.DecidedBy)
	}
}

// authTests counts auth.test calls and fails the first failures of them.
type authTests struct {
	calls, fail int
	team        string
}

func (a *authTests) AuthTestContext(context.Context) (*slack.AuthTestResponse, error) {
	a.calls++
	if a.calls <= a.fail {
		return nil, errors.New("slack is down")
	}
	return &slack.AuthTestResponse{TeamID: a.team}, nil
}

// The workspace is learnt once auth.test answers, and until then nobody
// is admitted (any doubt is a no), with words that say why.
func TestWorkspaceIsLearntOnceAndDoubtRefuses(t *testing.T) {
	api := &authTests{fail: 1, team: "THOME"}
	ws := NewWorkspace(api)
	err := ws.Admits(t.Context(), approverA, "THOME")
	if err == nil || OutsiderShown(err) != workspaceUncheckedText {
		t.Fatalf("with auth.test failing: %v", err)
	}
	for range 3 {
		if err := ws.Admits(t.Context(), approverA, "THOME"); err != nil {
			t.Fatalf("a user of the home team: %v", err)
		}
	}
	if api.calls != 2 {
		t.Errorf("auth.test called %d times; want 2 (one failure, then learnt)", api.calls)
	}
	for _, team := range []string{"", "TOTHER", "EOTHER"} {
		err := ws.Admits(t.Context(), outsider, team)
		if _, ok := errors.AsType[*OutsiderError](err); !ok || OutsiderShown(err) != OutsiderText {
			t.Errorf("user team %q: %v", team, err)
		}
	}
	grid := KnownWorkspace("THOME", "EGRID")
	if err := grid.Admits(t.Context(), approverA, "EGRID"); err != nil {
		t.Errorf("an org-level Grid user: %v", err)
	}
	cmd := slack.SlashCommand{UserID: approverA, TeamID: "TSIBLING", EnterpriseID: "EGRID"}
	if err := grid.AdmitsCommand(t.Context(), cmd); err != nil {
		t.Errorf("a command typed in a workspace of the same Grid organisation: %v", err)
	}
	cmd.EnterpriseID = "EOTHER"
	if err := grid.AdmitsCommand(t.Context(), cmd); err == nil {
		t.Error("a command typed in another organisation's workspace was admitted")
	}
}

// Over Socket Mode the outsider's click is refused the same way: the
// envelope is acknowledged (Slack must not retry it), and nothing changes.
func TestSocketModeOutsiderClickRefused(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.fake.SetUserTeam(outsider, partnerTeam)
	approvers, err := NewApprovers(ApproversConfig{AnyoneInChannel: true})
	if err != nil {
		t.Fatal(err)
	}
	w.serveClicks(approvers, testLog(t))
	startSocketMode(t, w, SocketHandlers{Interaction: w.inter.Handle})
	wa := w.ask(bashRequest("run-socket", "sess-1", "make deploy"))
	env, err := w.fake.SendInteractive(t.Context(), w.fake.BlockActionsPayload(fakeslack.BlockActions{
		User: outsider, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.fake.WaitForAck(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	if got := w.nthEphemeral(outsider, 1); got != OutsiderText {
		t.Fatalf("the outsider was told %q", got)
	}
	w.noTraceOf(wa, outsider)
	clickOK(t, w.click(wa, approverA, ActionDeny))
	if got := wa.result(t); got.Status != pending.Status(pending.Denied) || got.DecidedBy != approverA {
		t.Fatalf("the insider's denial ended the Ask %s by %s", got.Status, got.DecidedBy)
	}
}

// Clicks that arrive together before the workspace is known make one
// auth.test between them, not one each (it runs while they wait for
// their acknowledgement).
func TestWorkspaceLearntOnceUnderConcurrentClicks(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	ws := NewWorkspace(fakeAPI(fake))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := ws.Admits(t.Context(), approverA, fake.TeamID()); err != nil {
				t.Errorf("a user of the fake's team: %v", err)
			}
		})
	}
	wg.Wait()
	if n := len(fake.Calls("auth.test")); n != 1 {
		t.Errorf("%d auth.test calls; want 1", n)
	}
}
