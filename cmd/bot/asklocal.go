package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/askops/askops/gateway/script"
	"io"
	"os"
	"time"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// scriptHere is the Script of a `bot ask` run on this machine: asked by
// $USER from this host's working directory.
func scriptHere(getenv func(string) string, command, reason, label, session string) script.Question {
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	return script.Question{Command: command, Reason: reason, Label: label, Session: session,
		User: getenv("USER"), Host: host, Cwd: cwd}
}

// askLocal asks the `bot serve` running on this machine with no Slack (its
// console) about s, through the Ask API it announces in the endpoint file,
// and waits for the final Ask; progress (stderr) is told where it waits
// and how it ended. An error means there was nobody to ask (no endpoint
// file, or an unreadable one); every later failure is an unavailable Ask.
func askLocal(ctx context.Context, getenv func(string) string, s script.Question, timeout time.Duration, progress io.Writer) (pending.Ask, error) {
	ep, err := hook.ReadLocalEndpoint(getenv)
	if err != nil {
		return pending.Ask{}, err
	}
	req := s.Request()
	// The local API namespaces the session by its own token's caller.
	req.SessionID = s.Session
	if req.SessionID == "" {
		req.SessionID = req.RunID // an ask of its own: no session grant covers it
	}
	input, _ := json.Marshal(map[string]string{"command": s.Command})
	(&askProgress{Out: progress}).Asking(s.Command)
	start := time.Now()
	client := &hook.Client{BaseURL: ep.URL, Token: ep.Token, HTTP: ep.HTTPClient(), Created: func(a hook.Ask) {
		fmt.Fprintf(progress, "bot ask: waiting for a decision in the console at %s until %s (%s)\n",
			ep.URL, a.Due().Local().Format("15:04:05"), time.Until(a.Due()).Round(time.Second))
	}}
	final := gateway.AskOf(client.Settle(ctx, hook.Call{
		SessionID: req.SessionID, Agent: req.Label, Tool: "Bash", Input: input,
		Cwd: req.Cwd, Reason: req.Reason, Timeout: timeout, By: req.StartedBy, OneOff: s.Session == "",
	}))
	fmt.Fprintf(progress, "bot ask: %s after %s\n", final.Status, time.Since(start).Round(100*time.Millisecond))
	if final.Summary == "" {
		final.Summary = s.Command
	}
	return final, nil
}
