package chatops

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/internal/slacklink"

	"github.com/slack-go/slack"

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
	// message is, so a waiting run keeps no copy of it.
	lastTool, lastSummary, lastOutcome string
	lastBounded                        string // whether the last command ran inside the OS bound (agent.Event.Bounded)
}

func (s *runStatus) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Run* `%s` by %s: %s\n", slackui.Text(s.id, 100), slackui.Person(s.user), slackui.Text(headLine(s.task), 300))
	fmt.Fprintf(&b, "_%s_ · step %d · %d tool call(s)", s.state, s.step, s.calls)
	if s.lastTool != "" {
		fmt.Fprintf(&b, "\nlast: `%s` %s", slackui.Text(s.lastTool, 60), slackui.Text(headLine(s.lastSummary), 120))
		if s.lastOutcome != "" {
			b.WriteString(" → " + slackui.Text(outcomeText(s.lastOutcome), 40))
		}
		if s.lastBounded != "" {
			b.WriteString(" · bounded: " + slackui.Text(s.lastBounded, 120))
		}
	}
	return b.String()
}

// statusUpdater edits the run's status message as events arrive, a moment
// after them (statusSettle) and at most about once a second (Slack's
// chat.update limit), the last state always.
type statusUpdater struct {
	api     Poster
	channel string
	ts      string
	log     *slog.Logger

	mu      sync.Mutex
	st      *runStatus
	timer   *time.Timer // the next edit, once scheduled
	next    time.Time   // no edit before: edits are paced a second apart
	ended   bool        // finish makes the last edit
	editing sync.WaitGroup
}

// newStatusUpdater returns the updater of the run status message ts. It
// holds no goroutine: an edit is a timer until it is due, so 10,000 runs
// waiting for approval do not park 10,000 loops.
func newStatusUpdater(api Poster, channel, ts string, st *runStatus, log *slog.Logger) *statusUpdater {
	return &statusUpdater{api: api, channel: channel, ts: ts, st: st, log: log}
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
		s.lastTool, s.lastSummary, s.lastOutcome, s.lastBounded = e.Tool, e.Summary, "", ""
	case agent.EventAsked:
		s.state = "waiting for approval"
	case agent.EventDecided:
		s.state = "running"
		s.lastOutcome = string(e.Outcome)
	case agent.EventToolResult:
		s.lastBounded = e.Bounded
	}
	u.schedule()
	u.mu.Unlock()
}

// schedule arranges an edit statusSettle from now, or once the pace
// allows, unless one is already arranged. u.mu is held.
func (u *statusUpdater) schedule() {
	if u.timer != nil || u.ended {
		return
	}
	at := time.Now().Add(statusSettle)
	if at.Before(u.next) {
		at = u.next
	}
	u.editing.Add(1)
	u.timer = time.AfterFunc(time.Until(at), u.edit)
}

// edit is a scheduled edit: the status as it is now.
func (u *statusUpdater) edit() {
	defer u.editing.Done()
	u.mu.Lock()
	if u.ended {
		u.mu.Unlock()
		return // finish makes the last edit
	}
	u.timer = nil
	u.next = time.Now().Add(time.Second)
	text := u.st.text()
	u.mu.Unlock()
	u.update(text)
}

func (u *statusUpdater) finish(res agent.Result) {
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
	u.ended = true
	if u.timer != nil && u.timer.Stop() {
		u.editing.Done() // it will not run
	}
	u.timer = nil
	text := u.st.text()
	u.mu.Unlock()
	u.editing.Wait() // an edit on its way goes first: the last one is the end's
	u.update(text)
}

// statusSettle is how long the status message waits after an event before
// it is edited. One step of a run is a burst of events (decided, tool call,
// tool result, the next model turn), and the first of them comes just as an
// approval lets the agent go on: editing at once would spend the agent's
// critical moment (the tool run and its next model request) on a Slack call
// nobody needs within a quarter second, and edit the message several times
// for one step.
const statusSettle = 200 * time.Millisecond

func (u *statusUpdater) update(text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := u.api.UpdateMessage(ctx, u.channel, u.ts, slack.MsgOptionText(text, false)); err != nil {
		u.log.Warn("could not update run status", "run", u.st.id, "err", err)
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
