package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/askops/askops/gateway/script"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/slacklink"
	"github.com/askops/askops/pending"
)

// This file is how `bot ask` answers the script that asked: the exit code
// (its documented contract: exitOK approved, exitFailed not approved
// (denied, expired, cancelled), exitUsage unavailable), the line or JSON on
// stdout, and the progress on stderr.

// askExit is the exit status for a final Ask.
func askExit(a pending.Ask) int {
	outcome, ok := a.Outcome()
	switch {
	case ok && outcome.Approves():
		return exitOK
	case !ok || outcome == pending.Unavailable:
		return exitUsage
	default:
		return exitFailed
	}
}

// askLine is the final Ask in one line: the outcome, who decided, and why.
func askLine(a pending.Ask) string {
	outcome, ok := a.Outcome()
	if !ok {
		outcome = pending.Unavailable
	}
	line := string(outcome)
	switch outcome {
	case pending.ApprovedSession:
		line = "approved for session"
	}
	if a.DecidedBy != "" {
		line += " by " + a.DecidedBy
	}
	if t := a.Tally(); t != "" {
		line += " (" + t + ")" // a quorum: who else agreed, or how far it got
	}
	if a.DecisionReason != "" {
		line += ": " + a.DecisionReason
	}
	return line
}

// askJSON is the final Ask as `bot ask -o json` prints it: the API's Ask
// (the same fields a client of /v1/asks reads) and the command asked
// about. link, when known, is the message's permalink.
func askJSON(a pending.Ask, link string) []byte {
	j := gateway.NewAskJSON(a)
	j.Reason = a.DecisionReason
	if link != "" {
		j.MessageURL = link
	}
	b, _ := json.Marshal(struct {
		hook.Ask
		Command string `json:"command"`
	}{j, a.Summary})
	return b
}

// writeAskAnswer prints the final Ask as `bot ask -o` asks (text: one
// line, askLine; json: askJSON with link) and returns the exit code.
func writeAskAnswer(w io.Writer, a pending.Ask, asJSON bool, link string) int {
	if asJSON {
		fmt.Fprintln(w, string(askJSON(a, link)))
	} else {
		fmt.Fprintln(w, askLine(a))
	}
	return askExit(a)
}

// writeAskUnavailable answers a question that could not be asked at all:
// "unavailable: why", or as JSON the unavailable Ask decided by askops that
// a front door with nobody to ask answers (hook.Unavailable). Either way
// the exit code is exitUsage: nothing runs without an answer.
func writeAskUnavailable(ctx context.Context, w io.Writer, why string, asJSON bool) int {
	if asJSON {
		return writeAskAnswer(w, gateway.AskOf(hook.Unavailable{Reason: why}.Settle(ctx, hook.Call{})), true, "")
	}
	fmt.Fprintf(w, "unavailable: %s\n", why)
	return exitUsage
}

// writeAskGranted answers when grant g covered the script's request
// (script.Granted): the approved Ask as JSON, or a line naming the
// grant, whose it is and, for a session grant, the session as the asker
// named it (the API's session_id).
func writeAskGranted(w io.Writer, req pending.Request, g grants.Grant, asJSON bool) int {
	a := script.Granted(req, g)
	if asJSON {
		return writeAskAnswer(w, a, true, "")
	}
	if g.Standing() {
		fmt.Fprintf(w, "approved by standing grant %s (from %s)\n", g.ID, g.By)
	} else {
		fmt.Fprintf(w, "approved by grant %s (from %s, session %s)\n", g.ID, g.By, gateway.NewAskJSON(a).SessionID)
	}
	return exitOK
}

// askProgress tells the person running bot ask, on Out (stderr), where the
// Ask waits and how it ended: without it a Slack that accepts the post but
// never answers looks like a hang for the whole timeout.
type askProgress struct {
	Out     io.Writer
	Now     func() time.Time
	TeamURL string // from auth.test: https://TEAM.slack.com/; set before the Ask

	mu    sync.Mutex // Posted may run on a notifier's goroutine
	start time.Time
}

// Asking says what a human is asked about.
func (p *askProgress) Asking(command string) {
	fmt.Fprintf(p.Out, "bot ask: asking a human about: %s\n", clipLine(command, 200))
}

// Posted says where the Ask was shown and until when it waits.
func (p *askProgress) Posted(a pending.Ask, channel, ts string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		p.start = p.Now()
	}
	where := "channel " + channel
	if link := p.Link(channel, ts); link != "" {
		where += " (" + link + ")"
	}
	fmt.Fprintf(p.Out, "bot ask: waiting for a decision in %s until %s (%s)\n",
		where, a.Deadline.Local().Format("15:04:05"), a.Deadline.Sub(p.Now()).Round(time.Second))
}

// Ended says how the Ask ended and how long after it was shown.
func (p *askProgress) Ended(a pending.Ask) {
	p.mu.Lock()
	defer p.mu.Unlock()
	took := ""
	if !p.start.IsZero() {
		took = " after " + p.Now().Sub(p.start).Round(100*time.Millisecond).String()
	}
	fmt.Fprintf(p.Out, "bot ask: %s%s\n", a.Status, took)
}

// Link is a Slack message's permalink, https://TEAM.slack.com/archives/C…/p…
// (the shape chat.getPermalink answers; the API's message_url is built by
// the same slacklink.Message), or "" when the team URL is unknown. bot ask
// posts at the top level of its channel, so there is no thread to name.
func (p *askProgress) Link(channel, ts string) string {
	return slacklink.Message(p.TeamURL, channel, ts, "")
}

// clipLine is s on one line (newlines shown as ⏎), cut to n runes.
func clipLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
