package main

import (
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
)

// A signed request stays valid for five minutes, so a captured (or
// re-sent) /askops run could be delivered twice. Each slash command
// invocation has its own trigger_id: the second delivery starts nothing.
func TestReplayedSlashCommandStartsOneRun(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	fake := fakeslack.New(t, fakeslack.Options{})
	model := fakeopenai.Start(t, fakeopenai.Text("all done"), fakeopenai.Text("all done again"))
	cfg, base, env := agentConfig(t, fake, model, t.TempDir())
	serve := startServe(ctx, t, env, cfg, base)

	cmd := slack.SlashCommand{
		Command: "/askops", Text: "run say hello", UserID: approverID, ChannelID: "COPS",
		TriggerID: "13345224609.738474920.8088930838d88f008e0", ResponseURL: fake.URL() + "/response/replayed",
	}
	for i := range 2 {
		resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", cmd)
		if err != nil {
			t.Fatal(err)
		}
		b := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("delivery %d answered %s: %s", i+1, resp.Status, b)
		}
	}
	if _, err := fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.Channel == "COPS" && strings.Contains(c.Text, "all done")
	}); err != nil {
		t.Fatalf("the run did not answer: %v", err)
	}
	serve.Stop() // serve waits for its runs, so every run has posted by now
	var started int
	for _, c := range fake.Calls("chat.postMessage") {
		if c.Channel == "COPS" && c.ThreadTS == "" {
			started++ // a run's status message opens its thread
		}
	}
	if started != 1 {
		t.Fatalf("one /askops run delivered twice started %d runs", started)
	}
}
