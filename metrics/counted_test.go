package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/pending"
)

// launchFunc is a round trip that parks (*approval.Core's Launch): the
// test ends its Ask through the done it keeps.
type launchFunc struct {
	done chan func(pending.Ask)
}

func (l launchFunc) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	a := pending.Ask{Request: req, ID: "ask-1", Status: pending.StatusPending}
	return a, func(_ context.Context, done func(pending.Ask)) { l.done <- done }
}

// Launch waits parked through the round trip, counted as a waiting Ask
// until it ends, then as its outcome.
func TestLaunchCountsAParkedAsk(t *testing.T) {
	m := New("dev")
	next := launchFunc{done: make(chan func(pending.Ask), 1)}
	var log bytes.Buffer
	a := &Approver{Next: next, Metrics: m, Log: slog.New(slog.NewTextHandler(&log, nil))}
	got := make(chan pending.Ask, 1)
	_, run := a.Launch(t.Context(), pending.Request{RunID: "r1", SessionID: "s1", Tool: "bash"}, 0)
	run(t.Context(), func(ask pending.Ask) { got <- ask })
	done := <-next.done
	if out := scrape(t, m); !strings.Contains(out, "askops_asks_pending 1\n") {
		t.Fatalf("while parked:\n%s", out)
	}
	done(pending.Ask{ID: "ask-1", Status: pending.Status(pending.Denied), DecidedBy: "U1"})
	if ask := <-got; ask.ID != "ask-1" || ask.DecidedBy != "U1" {
		t.Fatalf("done got %+v", ask)
	}
	out := scrape(t, m)
	for _, want := range []string{"askops_asks_pending 0", `askops_asks_total{outcome="denied"} 1`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q after the end in:\n%s", want, out)
		}
	}
	if want := "msg=\"ask ended\" ask=ask-1 run=r1 session=s1 tool=bash outcome=denied by=U1 "; !strings.Contains(log.String(), want) {
		t.Errorf("log:\n%s\nwant a line with %s", log.String(), want)
	}
}

// A Starter's Ask (a hook's or the API's) is logged by session, tool and
// agent, as an agent knows it.
func TestStarterLogsTheAgentsNames(t *testing.T) {
	var log bytes.Buffer
	next := launchFunc{done: make(chan func(pending.Ask), 1)}
	s := Starter{Counted: &Approver{Next: next, Metrics: New("dev"), Log: slog.New(slog.NewTextHandler(&log, nil))}}
	_, run := s.Launch(t.Context(), pending.Request{SessionID: "s1", Tool: "Bash", Label: "claude-code"}, time.Minute)
	ended := make(chan struct{})
	run(t.Context(), func(pending.Ask) { close(ended) })
	(<-next.done)(pending.Ask{ID: "ask-1", Status: pending.Status(pending.Approved), DecidedBy: "U1"})
	<-ended
	if want := "msg=\"ask ended\" ask=ask-1 session=s1 tool=Bash agent=claude-code outcome=approved by=U1 "; !strings.Contains(log.String(), want) {
		t.Errorf("log:\n%s\nwant a line with %s", log.String(), want)
	}
}
