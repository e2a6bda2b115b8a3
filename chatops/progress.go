package chatops

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/askops/askops/agent"
)

// NewProgress prints to w.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, where: "Slack"} }

// NewConsoleProgress is NewProgress for a run whose Asks go to the local
// console instead of Slack.
func NewConsoleProgress(w io.Writer) *Progress { return &Progress{w: w, where: "the console"} }

// Progress prints a run's events as lines a person (or a cron log) can
// follow: bot run's run status, the terminal's twin of the status message.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	where string // where the run's Asks are shown: "Slack", "the console"
	// held is the last assistant line, printed when the run goes on: the
	// final answer also arrives as an assistant message and is printed once,
	// at the end.
	held string
}

// Event prints e; it is the run's onEvent.
func (p *Progress) Event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Kind == agent.EventFinished {
		p.held = ""
		return
	}
	if p.held != "" {
		fmt.Fprintln(p.w, p.held)
		p.held = ""
	}
	line := progressLine(e, p.where)
	if e.Kind == agent.EventAssistant {
		p.held = line
		return
	}
	if line != "" {
		fmt.Fprintln(p.w, line)
	}
}

func progressLine(e agent.Event, where string) string {
	switch e.Kind {
	case agent.EventStarted:
		return fmt.Sprintf("run %s started", e.RunID)
	case agent.EventToolCall:
		d := string(e.Decision)
		if d == "" {
			d = "malformed"
		}
		return fmt.Sprintf("[%d] %s: %s (%s)", e.Iteration, e.Tool, firstLine(e.Summary, 200), d)
	case agent.EventAsked:
		return fmt.Sprintf("[%d] asking in %s: %s — %s", e.Iteration, where, firstLine(e.Summary, 200), e.Reason)
	case agent.EventDecided:
		s := fmt.Sprintf("[%d] %s", e.Iteration, outcomeText(string(e.Outcome)))
		if e.By != "" {
			s += " by " + e.By
		}
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		return s
	case agent.EventToolResult:
		if e.NotPerformed {
			return fmt.Sprintf("[%d] not performed: %s", e.Iteration, firstLine(e.Text, 200))
		}
		if e.IsError {
			return fmt.Sprintf("[%d] failed: %s", e.Iteration, firstLine(e.Text, 200))
		}
		if e.Bounded != "" {
			return fmt.Sprintf("[%d] ran, bounded: %s", e.Iteration, e.Bounded)
		}
		return ""
	case agent.EventAssistant:
		if t := strings.TrimSpace(e.Text); t != "" {
			return fmt.Sprintf("[%d] %s", e.Iteration, firstLine(t, 300))
		}
	}
	return ""
}

// Result prints how the run ended and reports whether it finished (with
// an answer).
func (p *Progress) Result(res agent.Result) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != "" && res.Status != agent.StatusFinished {
		fmt.Fprintln(p.w, p.held)
	}
	switch res.Status {
	case agent.StatusFinished:
		fmt.Fprintln(p.w, res.Answer)
		return true
	case agent.StatusCancelled:
		fmt.Fprintf(p.w, "run %s stopped\n", res.RunID)
	default:
		msg := "failed"
		if res.Err != nil {
			msg += ": " + res.Err.Error()
		}
		fmt.Fprintf(p.w, "run %s %s\n", res.RunID, msg)
	}
	return false
}

// firstLine is s's first line, cut to n runes.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	} else if cut {
		return s + " …"
	}
	return s
}
