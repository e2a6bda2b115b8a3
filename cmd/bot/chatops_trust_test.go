package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
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
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, fakeopenai.Text("All done. "+hostileText))
	cfg, base, env := httpModeConfig(t, fake, "agent:\n  workspace: "+t.TempDir()+"\n")
	env["OPENAI_BASE_URL"] = model.BaseURL()
	serveCtx, stopServe := context.WithCancel(ctx)
	served := startBot(serveCtx, t, env, "serve", "-config", cfg)
	waitHTTP(ctx, t, base+"/healthz")

	reply := slash(ctx, t, fake, base, approverID, "run deploy "+hostileText)
	answer, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return strings.Contains(c.Text, "All done.") })
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if !strings.Contains(answer.Text, "&lt;!channel&gt;") || !strings.Contains(answer.Text, "xoxb-[REDACTED]") {
		t.Errorf("answer not shown escaped and redacted: %q", answer.Text)
	}
	if _, err := fake.WaitForCall(ctx, "chat.update", func(c fakeslack.Call) bool { return strings.Contains(c.Text, "finished") }); err != nil {
		t.Fatalf("status never finished: %v", err)
	}
	stopServe()
	if r := waitResult(t, served); r.code != 0 {
		t.Fatalf("serve exited %d\n%s", r.code, r.stderr)
	}

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
