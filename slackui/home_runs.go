package slackui

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// HomeRuns lists each user's runs in progress, on every replica alike
// (both sessions stores; chat-ops records each run it starts). With it, a
// Home lists all the viewer's running runs, each marked when it waits on
// an Ask; without it, only the runs that wait on an Ask (from the Asks).
type HomeRuns interface {
	RunsOf(ctx context.Context, users []string) (map[string][]sessions.Run, error)
}

// homeRuns is what the Home last read of its viewers' runs.
type homeRuns struct {
	byUser map[string][]sessions.Run
	shown  map[string]string // user -> fingerprint of the runs last read
}

// readRuns reads the runs of every viewer in one call and marks dirty the
// viewers whose runs changed (a run started or ended, on any replica). On
// a store error the last read stands.
func (h *Home) readRuns(ctx context.Context) {
	if h.cfg.Runs == nil {
		return
	}
	h.mu.Lock()
	users := make([]string, 0, len(h.viewers))
	for u := range h.viewers {
		users = append(users, u)
	}
	h.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, storeTimeout)
	byUser, err := h.cfg.Runs.RunsOf(rctx, users)
	cancel()
	if err != nil {
		h.log.Warn("home: could not list the viewers' runs; showing the last read", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs.shown == nil {
		h.runs.shown = map[string]string{}
	}
	for _, u := range users {
		fp := runsFingerprint(byUser[u])
		if h.runs.shown[u] != fp {
			h.runs.shown[u] = fp
			if v := h.viewers[u]; v != nil {
				v.dirty = true
			}
		}
	}
	for u := range h.runs.shown {
		if _, ok := h.viewers[u]; !ok {
			delete(h.runs.shown, u)
		}
	}
	h.runs.byUser = byUser
}

// runsOf is what readRuns last read of user's runs, and whether the Home
// has a run record at all.
func (h *Home) runsOf(user string) ([]sessions.Run, bool) {
	if h.cfg.Runs == nil {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs.byUser[user], true
}

func runsFingerprint(runs []sessions.Run) string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return strings.Join(ids, ",")
}

// runsRecordText lists the viewer's runs in progress from the record,
// each with the Ask it waits on (from waiting, the viewer's pending Asks);
// runs that wait on an Ask but are not in the record (bot run, an API
// session, a record that failed) follow, as before the record.
func (h *Home) runsRecordText(running []sessions.Run, waiting []pending.Ask) string {
	if len(running) == 0 && len(waiting) == 0 {
		return "*Your runs:* none is running."
	}
	asksOf := map[string][]pending.Ask{}
	for _, a := range waiting {
		asksOf[a.RunID] = append(asksOf[a.RunID], a)
	}
	recorded := map[string]bool{}
	var lines []string
	for _, r := range running {
		recorded[r.ID] = true
		label := r.Label
		if label == "" {
			label = r.ID
		}
		line := "• " + inlineCode(label, 60)
		if r.Channel != "" && isSlackID(r.Channel) {
			line += " in <#" + r.Channel + ">"
		}
		line += ", started " + slackDate(r.StartedAt)
		if as := asksOf[r.ID]; len(as) > 0 {
			line += fmt.Sprintf(" · :hourglass: waiting for a decision: %s", askGist(as[0], askview.Of(as[0], messageRedactLimit)))
		} else {
			line += " · running"
		}
		lines = append(lines, line)
	}
	unrecorded := 0
	for _, a := range waiting {
		if recorded[a.RunID] {
			continue
		}
		unrecorded++
		run := a.RunID
		if a.Label != "" {
			run = a.Label
		}
		lines = append(lines, "• "+inlineCode(run, 60)+": :hourglass: "+askGist(a, askview.Of(a, messageRedactLimit))+", asked "+slackDate(a.CreatedAt))
	}
	head := fmt.Sprintf("*Your runs:* %d running", len(running))
	if unrecorded > 0 {
		head += fmt.Sprintf(", %d more waiting for a decision", unrecorded)
	}
	if len(lines) > maxHomeRuns {
		lines = append(lines[:maxHomeRuns], fmt.Sprintf("…and %d more", len(lines)-maxHomeRuns))
	}
	return head + "\n" + strings.Join(lines, "\n")
}

// isSlackID accepts what a Slack channel id looks like, so a stored
// channel cannot become markup.
func isSlackID(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// setRunsText replaces the runs section of a rendered Home.
func setRunsText(view *slack.HomeTabViewRequest, text string) {
	for i, b := range view.Blocks.BlockSet {
		if s, ok := b.(*slack.SectionBlock); ok && s.BlockID == "askops_home_runs" {
			view.Blocks.BlockSet[i] = sectionBlock("askops_home_runs", text)
		}
	}
}
