package slackui

// The approval round trip (package approval) with Slack as its notifier:
// what the Slack message shows and becomes.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// A run stopped while chat.postMessage is in flight: Slack has made the
// message by then, so the Ask ends cancelled and that message loses its
// buttons instead of looking live forever.
func TestRunStoppedWhilePostingUpdatesTheMessage(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		w.fake.SetDelay("chat.postMessage", 300*time.Millisecond)
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan pending.Ask, 1)
		go func() { done <- w.approver.Approve(ctx, bashRequest("run-stop", "sess-1", "make deploy")) }()
		post, err := w.fake.WaitForCall(t.Context(), "chat.postMessage", nil)
		if err != nil {
			t.Fatal(err)
		}
		stop() // the message exists; its answer is still on the way
		var got pending.Ask
		select {
		case got = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Approve did not return")
		}
		if got.Status != pending.Status(pending.Cancelled) {
			t.Fatalf("got %s, want cancelled", got.Status)
		}
		msgs := w.fake.Messages()
		if len(msgs) != 1 || msgs[0].Channel != post.Channel {
			t.Fatalf("messages %+v, want the one posted", msgs)
		}
		wctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := w.fake.WaitForMessage(wctx, msgs[0].Channel, msgs[0].TS, func(m fakeslack.Message) bool {
			return m.Updates > 0 && !blocksHaveButton(m.Blocks, ActionApprove) && !blocksHaveButton(m.Blocks, ActionDeny)
		}); err != nil {
			t.Fatalf("the posted message kept its buttons: %v", err)
		}
		if a, err := w.asks.Get(t.Context(), got.ID); err != nil || a.Status != pending.Status(pending.Cancelled) || a.MessageTS != msgs[0].TS {
			t.Fatalf("stored ask %s at %q (%v)", a.Status, a.MessageTS, err)
		}
	})
}

// sessionConfirmText is the confirm dialog text of the session button in
// blocks, or "" if there is none.
func sessionConfirmText(blocks []slack.Block) string {
	for _, b := range blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.Elements == nil {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == ActionApproveSession && btn.Confirm != nil && btn.Confirm.Text != nil {
				return btn.Confirm.Text.Text
			}
		}
	}
	return ""
}

// "Approve for session" on a file call covers the identical later call, as
// the real policy engine sees it (the agent hands it the resolved absolute
// path), and nothing beside it. The grant is scoped to the path the policy
// judged (Request.Path), so a call through a symlink is covered next time
// too; see approval.DefaultScopeFor.
func TestApproveForSessionCoversTheIdenticalFileCall(t *testing.T) {
	tests := []struct {
		name      string
		given     string // the path as the model wrote it (Args)
		judged    string // Request.Path: what the policy saw; "" if the caller did not say
		scopeText string // what the confirm dialog states
	}{
		{"plain path", "sub/a.txt", "/ws/sub/a.txt", "write_file: sub/a.txt"},
		{"plain path, caller without a judged path", "sub/a.txt", "", "write_file: sub/a.txt"},
		{"through a symlink (alias -> sub)", "alias/a.txt", "/ws/sub/a.txt", "write_file: sub/a.txt"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOptions{})
			sess := fmt.Sprintf("sess-%d", i)
			args, _ := json.Marshal(map[string]string{"path": tc.given, "content": "hello"})
			req := pending.Request{
				RunID: "run-file", SessionID: sess, Label: "deploy-bot", StartedBy: "UOWNER",
				Tool: "write_file", Args: string(args), Summary: "write_file sub/a.txt (5 bytes)", Path: tc.judged,
				Reason: "side effect", Workspace: "/ws", Cwd: "/ws",
			}
			wa := w.ask(req)
			m, ok := w.fake.Message(wa.channel, wa.ts)
			if !ok {
				t.Fatal("posted message not found")
			}
			confirm := sessionConfirmText(m.Blocks)
			if !strings.Contains(confirm, tc.scopeText) || !strings.Contains(confirm, "until the session ends") {
				t.Errorf("confirm dialog %q; want it to state %q and that it lasts for the session", confirm, tc.scopeText)
			}
			engine := approveForSession(t, w, wa)
			call := func(path, session string) policy.Call {
				return policy.Call{Tool: "write_file", Safety: policy.SideEffect, Path: path, Cwd: "/ws", Workspace: "/ws", SessionID: session, Resolved: true, Exact: true}
			}
			if v := engine.Evaluate(t.Context(), call("/ws/sub/a.txt", sess)); v.Decision != policy.Allow || v.Grant == "" {
				t.Errorf("identical call: %s (%s), want allowed by the session grant", v.Decision, v.Reason)
			}
			for _, other := range []policy.Call{call("/ws/sub/b.txt", sess), call("/ws/sub/a.txt", "another-session")} {
				if v := engine.Evaluate(t.Context(), other); v.Decision != policy.Ask {
					t.Errorf("%s in %s: %s (%s), want ask", other.Path, other.SessionID, v.Decision, v.Reason)
				}
			}
		})
	}
}
