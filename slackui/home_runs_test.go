package slackui

import (
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// A Home lists the viewer's runs in progress from the run record: a run
// with no Ask ("running"), the same run once it waits on an Ask, a run
// recorded by another replica (no nudge: the next poll), and drops a run
// once it ends.
func TestHomeListsRecordedRunsAndRefreshes(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		ctx := t.Context()
		runs := sessions.NewMemoryStore(sessions.Options{})
		approvers := testApprovers(t)
		h := NewHome(HomeConfig{
			Asks: w.clicks, API: w.api, Notifier: w.notifier, Approvers: approvers, Runs: runs,
			Poll: 50 * time.Millisecond, Debounce: 20 * time.Millisecond, PublishEvery: time.Millisecond,
		})
		runHome(t, h)
		homeText := func(want ...string) string {
			t.Helper()
			v, err := w.fake.WaitForHome(ctx, "UOWNER", func(v fakeslack.View) bool {
				text := fakeslack.BlockText(v.Request.Blocks.BlockSet)
				for _, s := range want {
					if !strings.Contains(text, s) {
						return false
					}
				}
				return true
			})
			if err != nil {
				t.Fatalf("Home never showed %q: %v", want, err)
			}
			return fakeslack.BlockText(v.Request.Blocks.BlockSet)
		}

		end1, err := runs.RecordRun(ctx, sessions.Run{ID: "run-1", StartedBy: "UOWNER", Channel: "COPS", Label: "fix the build", StartedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		h.Opened("UOWNER")
		homeText("*Your runs:* 1 running", "fix the build", "<#COPS>", "· running")

		w.ask(bashRequest("run-1", "s1", "terraform apply"))
		text := homeText("*Your runs:* 1 running", "fix the build", "waiting for a decision", "terraform apply")
		if strings.Contains(text, "· running") {
			t.Errorf("a run waiting on an Ask is also shown as just running:\n%s", text)
		}

		end2, err := runs.RecordRun(ctx, sessions.Run{ID: "run-2", StartedBy: "UOWNER", Label: "tidy the logs", StartedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		homeText("*Your runs:* 2 running", "tidy the logs", "fix the build")

		end2()
		text = homeText("*Your runs:* 1 running")
		if strings.Contains(text, "tidy the logs") {
			t.Errorf("an ended run still listed:\n%s", text)
		}
		end1()
	})
}

// The runs section escapes what a run's starter typed, links only a real
// channel id, bounds the list, and keeps the runs that wait on an Ask but
// are not in the record.
func TestHomeRunsRecordText(t *testing.T) {
	h := &Home{}
	at := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	running := []sessions.Run{{ID: "run-1", Label: "ping <!channel> `x`", Channel: "<!here>", StartedAt: at}}
	waiting := []pending.Ask{{ID: "a1", Request: pending.Request{RunID: "run-cli", Label: "bot run", Tool: "bash", Summary: "make deploy"}, CreatedAt: at}}
	text := h.runsRecordText(running, waiting)
	if strings.Contains(text, "<!channel>") || strings.Contains(text, "<!here>") || strings.Contains(text, "<#") {
		t.Errorf("markup from the record reached the Home:\n%s", text)
	}
	if !strings.Contains(text, "1 running, 1 more waiting for a decision") || !strings.Contains(text, "bot run") {
		t.Errorf("runs section:\n%s", text)
	}
	if got := h.runsRecordText(nil, nil); got != "*Your runs:* none is running." {
		t.Errorf("empty: %q", got)
	}
	many := make([]sessions.Run, 25)
	for i := range many {
		many[i] = sessions.Run{ID: "run-" + string(rune('a'+i)), StartedAt: at}
	}
	if text := h.runsRecordText(many, nil); strings.Count(text, "\n• ") != maxHomeRuns || !strings.Contains(text, "…and 15 more") || !strings.HasPrefix(text, "*Your runs:* 25 running") {
		t.Errorf("25 runs:\n%s", text)
	}
}
