package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/slacklink"
	"github.com/askops/askops/pending"
)

// This file is how `bot ask` answers the script that asked: the exit code
// (its documented contract), the line or JSON on stdout, and the progress
// on stderr.

// Exit codes of a script's question: 0 approved, 1 not approved (denied,
// expired, cancelled), 2 unavailable (or, for the command line, bad usage).
const (
	ScriptApproved    = 0
	ScriptNotApproved = 1
	ScriptUnavailable = 2
)

// ScriptExit is the exit status for a final Ask.
func ScriptExit(a pending.Ask) int {
	outcome, ok := a.Outcome()
	switch {
	case ok && outcome.Approves():
		return ScriptApproved
	case !ok || outcome == pending.Unavailable:
		return ScriptUnavailable
	default:
		return ScriptNotApproved
	}
}

// ScriptLine is the final Ask in one line: the outcome, who decided, and
// why.
func ScriptLine(a pending.Ask) string {
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

// ScriptJSON is the final Ask as `bot ask -o json` prints it: the API's Ask
// (the same fields a client of /v1/asks reads) and the command asked
// about. link, when known, is the message's permalink.
func ScriptJSON(a pending.Ask, link string) []byte {
	j := NewAskJSON(a)
	j.Reason = a.DecisionReason
	if link != "" {
		j.MessageURL = link
	}
	b, _ := json.Marshal(struct {
		AskJSON
		Command string `json:"command"`
	}{j, a.Summary})
	return b
}

// ScriptProgress tells the person running bot ask, on Out (stderr), where
// the Ask waits and how it ended: without it a Slack that accepts the post
// but never answers looks like a hang for the whole timeout.
type ScriptProgress struct {
	Out     io.Writer
	Now     func() time.Time
	TeamURL string // from auth.test: https://TEAM.slack.com/; set before the Ask

	mu    sync.Mutex // Posted may run on a notifier's goroutine
	start time.Time
}

// Asking says what a human is asked about.
func (p *ScriptProgress) Asking(command string) {
	fmt.Fprintf(p.Out, "bot ask: asking a human about: %s\n", ClipLine(command, 200))
}

// Posted says where the Ask was shown and until when it waits.
func (p *ScriptProgress) Posted(a pending.Ask, channel, ts string) {
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
func (p *ScriptProgress) Ended(a pending.Ask) {
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
func (p *ScriptProgress) Link(channel, ts string) string {
	return slacklink.Message(p.TeamURL, channel, ts, "")
}

// ClipLine is s on one line (newlines shown as ⏎), cut to n runes.
func ClipLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// ScriptGranted is the answer when grant g covers the script's request
// (see GrantFor): the approved Ask -o json prints, and the line text
// prints.
func ScriptGranted(req pending.Request, g grants.Grant) (pending.Ask, string) {
	a := pending.Ask{Request: req, Status: pending.Status(pending.Approved), DecidedBy: g.By, DecisionReason: "covered by " + g.String()}
	if g.Standing() {
		return a, fmt.Sprintf("approved by standing grant %s (from %s)", g.ID, g.By)
	}
	return a, fmt.Sprintf("approved by grant %s (from %s, session %s)", g.ID, g.By, shownSession(req.SessionID))
}
