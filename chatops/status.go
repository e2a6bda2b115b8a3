package chatops

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/askops/askops/internal/slacklink"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/slackui"
)

// runStatus is what the status message shows.
type runStatus struct {
	id, user, task string
	state          string // starting, running, waiting for approval, finished, failed, stopped
	step           int
	calls          int
	// The last call, as its event told it: the text is made when the
	// message is, so a waiting run keeps no copy of it. lastReason says
	// why an Ask ended unavailable (never shown, say).
	lastTool, lastSummary, lastOutcome, lastReason string
	lastBounded                                    string // whether the last command ran inside the OS bound (agent.Event.Bounded)
}

func (s *runStatus) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Run* `%s` by %s: %s\n", slackui.Text(s.id, 100), slackui.Person(s.user), slackui.Text(headLine(s.task), 300))
	fmt.Fprintf(&b, "_%s_ · step %d · %d tool call(s)", s.state, s.step, s.calls)
	if s.lastTool != "" {
		fmt.Fprintf(&b, "\nlast: `%s` %s", slackui.Text(s.lastTool, 60), slackui.Text(headLine(s.lastSummary), 120))
		if s.lastOutcome != "" {
			b.WriteString(" → " + slackui.Text(outcomeText(s.lastOutcome), 40))
			if s.lastReason != "" {
				b.WriteString(": " + slackui.Text(headLine(s.lastReason), 160))
			}
		}
		if s.lastBounded != "" {
			b.WriteString(" · bounded: " + slackui.Text(s.lastBounded, 120))
		}
	}
	return b.String()
}

// statusUpdater keeps the run's status message (a slackui.StatusMessage)
// in step with its events: each event changes the state, and the message
// shows the latest state when Slack's pace allows (states in between may
// be skipped, the run's end never is). It holds no goroutine.
type statusUpdater struct {
	msg *slackui.StatusMessage // nil until the message is queued (and in tests)
	log *slog.Logger

	mu sync.Mutex
	st *runStatus
}

func newStatusUpdater(st *runStatus, log *slog.Logger) *statusUpdater {
	return &statusUpdater{st: st, log: log}
}

// text is the status as it is now: the message's text whenever it is
// posted or edited.
func (u *statusUpdater) text() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st.text()
}

func (u *statusUpdater) event(e agent.Event) {
	u.mu.Lock()
	s := u.st
	if e.Iteration > s.step {
		s.step = e.Iteration
	}
	switch e.Kind {
	case agent.EventStarted:
		s.state = "running"
	case agent.EventToolCall:
		s.calls++
		s.state = "running"
		s.lastTool, s.lastSummary, s.lastOutcome, s.lastReason, s.lastBounded = e.Tool, e.Summary, "", "", ""
	case agent.EventAsked:
		s.state = "waiting for approval"
	case agent.EventDecided:
		s.state = "running"
		s.lastOutcome, s.lastReason = string(e.Outcome), ""
		if e.Outcome == agent.Unavailable {
			// Why nobody could decide ("never shown: the channel's
			// queue did not reach it in time"), as the model is told.
			s.lastReason = e.Reason
		}
	case agent.EventToolResult:
		s.lastBounded = e.Bounded
	}
	u.mu.Unlock()
	if u.msg != nil {
		u.msg.Changed()
	}
}

// finish shows how the run ended and waits (within ctx) until the message
// says so.
func (u *statusUpdater) finish(ctx context.Context, res agent.Result) {
	u.mu.Lock()
	switch res.Status {
	case agent.StatusFinished:
		u.st.state = "finished"
	case agent.StatusCancelled:
		u.st.state = "stopped"
	default:
		u.st.state = "failed"
	}
	if res.Iterations > u.st.step {
		u.st.step = res.Iterations
	}
	u.mu.Unlock()
	if u.msg == nil {
		return
	}
	if err := u.msg.Finish(ctx); err != nil {
		u.log.Warn("could not show how the run ended in its status message", "run", u.st.id, "err", err)
	}
}

// headLine is s's first line, marked when more follows. It is not cut:
// slackui.Text cuts after redacting, so a secret is never cut into a piece
// the redaction no longer recognises.
func headLine(s string) string {
	if line, _, more := strings.Cut(s, "\n"); more {
		return line + " …"
	}
	return s
}

// messageLink is the permalink of a message, built only from parts that
// look like what Slack sends (a team domain, a channel id, a message ts),
// so nothing stored or typed can turn it into markup.
func messageLink(domain, channel, ts string) (string, bool) {
	if !teamDomainRe.MatchString(domain) {
		return "", false
	}
	link := slacklink.Message("https://"+domain+".slack.com", channel, ts, "")
	return link, link != ""
}

// teamDomainRe is a Slack workspace's subdomain as slash commands carry it.
var teamDomainRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// outcomeText is an outcome as people read it.
func outcomeText(o string) string {
	if o == "approved_session" {
		return "approved for session"
	}
	return o
}
