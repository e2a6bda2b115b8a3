package chatops

import (
	"context"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/approval/foragent"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/pending"
)

// A run started in a Slack thread names its session by the words it was
// asked in, as the person wrote them, and by when it started: its Asks
// say "thread 'deploy v1.4 & tag it'", started when the run did.
func TestThreadRunNamesItsSession(t *testing.T) {
	got := make(chan pending.Request, 1)
	approver := foragent.Approver{Next: approveFunc(func(_ context.Context, r pending.Request) pending.Ask {
		got <- r
		return pending.Ask{Request: r, ID: "ask-1", Status: pending.Status(pending.Denied), DecidedBy: approverID}
	})}
	o := newTestOps(t, testOptions{approver: approver, replies: []fakeopenai.Reply{
		bashCall("c1", "make deploy"), fakeopenai.Text("not allowed"),
	}})
	before := time.Now()
	o.Event(t.Context(), slackevents.EventsAPIEvent{
		Data: &slackevents.EventsAPICallbackEvent{EventID: "EvName"},
		InnerEvent: slackevents.EventsAPIInnerEvent{Data: &slackevents.AppMentionEvent{
			User: starterID, Channel: "COPS", Text: "<@UBOT> deploy <https://example.com/v1.4|v1.4> &amp; tag it\nthen tell #ops", TimeStamp: "7.000001",
		}},
	})
	var req pending.Request
	select {
	case req = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never asked")
	}
	if req.SessionName != "thread 'deploy v1.4 & tag it'" {
		t.Errorf("session name %q, want thread 'deploy v1.4 & tag it'", req.SessionName)
	}
	if req.SessionStarted.Before(before.Truncate(time.Second)) || req.SessionStarted.After(time.Now()) {
		t.Errorf("session started %v, want the run's start (after %v)", req.SessionStarted, before)
	}
	if err := o.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A thread's name is its run's first line, Slack's markup read back as
// the text it shows, cut with a mark; a bot run keeps its id.
func TestRunSessionNames(t *testing.T) {
	for _, tc := range []struct{ task, want string }{
		{"deploy v1.4", "thread 'deploy v1.4'"},
		{"\n  roll back <#C123|ops>   now \nsecond line", "thread 'roll back #ops now'"},
		{"ping <!here> about &lt;prod&gt;", "thread 'ping @here about <prod>'"},
		{"fix the flaky test in the payments service and open a pull request", "thread 'fix the flaky test in the payments serv…'"},
		{"   ", ""},
	} {
		if got := threadName(tc.task); got != tc.want {
			t.Errorf("threadName(%q) = %q, want %q", tc.task, got, tc.want)
		}
	}
}

// approveFunc is a round trip that answers with a function, on a
// goroutine of its own.
type approveFunc func(context.Context, pending.Request) pending.Ask

func (f approveFunc) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return pending.Ask{Request: req}, func(ctx context.Context, done func(pending.Ask)) { go func() { done(f(ctx, req)) }() }
}
