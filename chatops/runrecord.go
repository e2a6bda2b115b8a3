package chatops

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/askops/askops/redact"
	"github.com/askops/askops/sessions"
)

// RunRecord keeps the runs in progress per starter where every replica
// sees them (both sessions stores), so the App Home of any replica lists a
// user's runs. When Config.Sessions implements it, each run started from
// Slack is recorded while it runs.
type RunRecord interface {
	RecordRun(ctx context.Context, r sessions.Run) (end func(), err error)
}

// runLabelRunes bounds the task kept as a recorded run's label.
const runLabelRunes = 100

// recordRun records the run for the Homes and says so (RunsChanged); the
// returned func ends the record. A failure only logs: the Home is a view,
// and the run must not wait on it.
func (o *Ops) recordRun(ctx context.Context, id, channel, user, task string) (end func()) {
	rec, ok := o.cfg.Sessions.(RunRecord)
	if !ok {
		return func() {}
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	stop, err := rec.RecordRun(rctx, sessions.Run{ID: id, StartedBy: user, Channel: channel, Label: runLabel(task), StartedAt: o.cfg.Now()})
	if err != nil {
		o.log.Warn("could not record the run for the App Home", "run", id, "err", err)
		return func() {}
	}
	o.runsChanged()
	return func() {
		stop()
		o.runsChanged()
	}
}

func (o *Ops) runsChanged() {
	if o.cfg.RunsChanged != nil {
		o.cfg.RunsChanged()
	}
}

// runLabel is the task as a Home shows it: secrets redacted, the first
// runLabelRunes runes. (The Home escapes it when it renders it.)
func runLabel(task string) string {
	s := redact.Secrets(task)
	if utf8.RuneCountInString(s) <= runLabelRunes {
		return s
	}
	r := []rune(s)
	return string(r[:runLabelRunes]) + "…"
}
