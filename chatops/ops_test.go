package chatops

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"go.uber.org/goleak"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/approval"
	"github.com/askops/askops/approval/foragent"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

const (
	approverID = "UAPPROVER1"
	starterID  = "USTARTER1"
	nobodyID   = "UNOBODY99"
)

// people is a fixed set of users.
type people []string

func (p people) MayDecide(_ context.Context, user string) (bool, error) {
	for _, u := range p {
		if u == user {
			return true, nil
		}
	}
	return false, nil
}

// gate is an agent Approver that holds every Ask until released: with
// honourCtx false it ignores cancellation, as a stuck call would.
type gate struct {
	honourCtx bool
	asked     chan struct{}
	release   chan struct{}
	once      sync.Once
}

func newGate(honourCtx bool) *gate {
	return &gate{honourCtx: honourCtx, asked: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gate) Approve(ctx context.Context, _ agent.Request, done func(agent.Decision)) {
	g.asked <- struct{}{}
	go func() {
		if g.honourCtx {
			select {
			case <-ctx.Done():
				done(agent.Decision{Outcome: agent.Cancelled})
				return
			case <-g.release:
			}
		} else {
			<-g.release
		}
		done(agent.Decision{Outcome: agent.Denied, By: approverID})
	}()
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

type noRuns struct{}

func (noRuns) RunEnded(string) {}

type testOptions struct {
	sessions SessionState
	replies  []fakeopenai.Reply
	approver agent.Approver
	noNew    bool   // build Ops without New (no stop handling): for a broken store
	runsOff  string // no runner: runs are off, for this reason
	pace     channelpace.Pace
	// roundTrip, when set, makes the runs' approver askops' own round
	// trip (an approval.Core) through the test's notifier, Asks ending
	// after it.
	roundTrip time.Duration
}

type testOps struct {
	*Ops
	fake   *fakeslack.Server
	model  *fakeopenai.Server
	asks   pending.Store
	grants grants.Store
}

// newTestOps builds Ops on fakeslack (the real slack-go client and
// slackui's Notifier as the poster), in-memory stores and a real agent
// runner talking to fakeopenai. No server is started.
func newTestOps(t *testing.T, o testOptions) *testOps {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	fake := fakeslack.New(t, fakeslack.Options{})
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	notifier := slackui.NewNotifier(api, slackui.NotifierConfig{ApprovalChannel: "CAPPROVALS", PerChannelInterval: time.Millisecond, RetryBackoff: time.Millisecond, Pace: o.pace})
	asks := pending.NewMemoryStore(pending.Options{Logger: log})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	if o.sessions == nil {
		o.sessions = sessions.NewMemoryStore(sessions.Options{TTL: time.Hour})
	}
	if o.roundTrip > 0 {
		core, err := approval.New(approval.Config{
			Asks: asks, Grants: gs, Notifiers: []approval.Notifier{notifier},
			Timeout: o.roundTrip, SessionTTL: time.Hour, Logger: log,
		})
		if err != nil {
			t.Fatal(err)
		}
		o.approver = foragent.Approver{Next: core}
	}
	if o.approver == nil {
		o.approver = newGate(true)
	}
	model := fakeopenai.Start(t, o.replies...)
	engine, err := policy.New(policy.Config{Grants: gs, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := agent.NewRunner(agent.Config{
		Model: agent.NewModel(model.BaseURL(), "", model.Client(), agent.RetryOptions{}), ModelName: "fake",
		Workspace: t.TempDir(), Policy: engine, Approver: o.approver, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	decider := approval.NewDecider(approval.DeciderConfig{Asks: asks, Messages: []approval.MessageUpdater{notifier}})
	t.Cleanup(decider.Close)
	cfg := Config{
		Command: "/askops", Mode: policy.ModeAsk, SessionTTL: 12 * time.Hour,
		Runner: runner, Approvers: people{approverID}, Starters: people{approverID, starterID},
		Sessions: o.sessions, Asks: asks, Grants: gs, Slack: notifier,
		Clicks: slackui.NewInteractions(slackui.InteractionsConfig{Asks: asks, Notifier: notifier, Approvers: nil, API: api, Logger: log, Decider: decider}),
		Runs:   noRuns{}, Logger: log,
	}
	if o.runsOff != "" {
		cfg.Runner, cfg.RunsOff = nil, o.runsOff
	}
	t.Cleanup(func() { _ = cfg.Clicks.(*slackui.Interactions).Close() })
	var ops *Ops
	if o.noNew {
		ops = &Ops{cfg: cfg, log: log}
	} else {
		ops, err = New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ops.Shutdown(context.Background()) })
	}
	return &testOps{Ops: ops, fake: fake, model: model, asks: asks, grants: gs}
}

func (o *testOps) slash(t *testing.T, channel, user, text string) *SlashReply {
	t.Helper()
	r, _ := o.SlashCommand(t.Context(), slack.SlashCommand{Command: "/askops", Text: text, UserID: user, ChannelID: channel, TeamDomain: "fake-askops"}).(*SlashReply)
	if r == nil {
		t.Fatalf("/askops %s: no reply", text)
	}
	return r
}

func bashCall(id, command string) fakeopenai.Reply {
	return fakeopenai.Call(fakeopenai.ToolCall{ID: id, Name: "bash", Arguments: `{"command":"` + command + `"}`})
}

// Who may do what, answered without a server: strangers are refused every
// listing, stop and mode; run starters may list and stop but not set the
// mode; the help and unknown subcommands answer anyone.
func TestPermissions(t *testing.T) {
	o := newTestOps(t, testOptions{})
	for _, tc := range []struct {
		user, text, want string
	}{
		{nobodyID, "run echo", "may not start runs"},
		{nobodyID, "pending", "only approvers and run starters"},
		{nobodyID, "grants", "only approvers and run starters"},
		{nobodyID, "stop run-1", "only approvers and run starters"},
		{nobodyID, "mode never", "only approvers may change the mode"},
		{starterID, "mode never", "only approvers may change the mode"},
		{starterID, "pending", "No open Asks in this channel."},
		{starterID, "grants", "No session grants for runs started in this channel."},
		{approverID, "grants", "no standing grants"},
		{starterID, "stop run-1", "No live run `run-1` here."},
		{approverID, "mode full", "mode full is set in the config only"},
		{approverID, "mode", "configured mode `ask`"},
		{nobodyID, "help", "/askops run TASK"},
		{nobodyID, "frobnicate", "Unknown subcommand"},
	} {
		if r := o.slash(t, "COPS", tc.user, tc.text); !strings.Contains(r.Text, tc.want) || r.ResponseType != "ephemeral" {
			t.Errorf("%s: /askops %s = %+v, want %q", tc.user, tc.text, r, tc.want)
		}
	}
	if r := o.slash(t, "COPS", approverID, "mode never"); !strings.Contains(r.Text, "now use mode `never`") || !strings.Contains(r.Text, "after 12h") {
		t.Errorf("mode never: %q", r.Text)
	}
	if r := o.slash(t, "COPS", starterID, "mode"); !strings.Contains(r.Text, "mode `never`, set by <@"+approverID+">") {
		t.Errorf("mode: %q", r.Text)
	}
	if len(o.fake.Calls("chat.postMessage")) != 0 {
		t.Error("a refused command posted to Slack")
	}
}

// A slash command delivered twice (same trigger_id) is answered once; an
// event redelivered is handled once.
func TestDeliveredTwiceHandledOnce(t *testing.T) {
	o := newTestOps(t, testOptions{})
	cmd := slack.SlashCommand{Command: "/askops", Text: "help", UserID: nobodyID, ChannelID: "COPS", TriggerID: "T1"}
	if o.SlashCommand(t.Context(), cmd) == nil {
		t.Fatal("first delivery unanswered")
	}
	if r := o.SlashCommand(t.Context(), cmd); r != nil {
		t.Fatalf("second delivery answered: %+v", r)
	}
	ev := slackevents.EventsAPIEvent{
		Data:       &slackevents.EventsAPICallbackEvent{EventID: "Ev1"},
		InnerEvent: slackevents.EventsAPIInnerEvent{Data: &slackevents.AppMentionEvent{User: nobodyID, Channel: "COPS", Text: "<@UBOT> help", TimeStamp: "1.000001"}},
	}
	o.Event(t.Context(), ev)
	o.Event(t.Context(), ev)
	if n := len(o.fake.Calls("chat.postEphemeral")); n != 1 {
		t.Fatalf("%d replies to one mention delivered twice", n)
	}
}

// A mention starts a run in its thread: the status message (a reply in the
// thread) is kept up to date through the poster, and the answer follows.
// A 429 on the status post is waited out, not lost.
func TestMentionRunsInThreadWithStatus(t *testing.T) {
	o := newTestOps(t, testOptions{replies: []fakeopenai.Reply{
		fakeopenai.Call(fakeopenai.ToolCall{ID: "c1", Name: "list_files", Arguments: `{"path":"."}`}),
		fakeopenai.Text("all done"),
	}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	o.fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{Status: 429, RetryAfter: time.Millisecond})
	mention(o, ctx, "Ev2", "5.000001")
	answerInThread(ctx, t, o, "5.000001", func(text string) bool { return strings.Contains(text, "all done") })
	finishedInThread(ctx, t, o, "5.000001", "1 tool call(s)", "list_files")
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// Shutdown stops the runs (an Ask waiting ends cancelled, the status says
// stopped, the thread is told) and waits for them; a run that ignores its
// cancellation is waited for only as long as Shutdown's context allows,
// and a later Shutdown still collects it. Intake is closed meanwhile.
func TestShutdownDrainsRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	t.Run("cancelled runs end", func(t *testing.T) {
		g := newGate(true)
		o := newTestOps(t, testOptions{approver: g, replies: []fakeopenai.Reply{bashCall("c1", "touch a.txt")}})
		o.slash(t, "COPS", approverID, "run touch a")
		<-g.asked
		if err := o.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		// Everything the run does is done by the time Shutdown returns.
		if !hasCall(o.fake, "chat.update", "_stopped_") || !hasCall(o.fake, "chat.postMessage", "was stopped") {
			t.Errorf("after Shutdown: status %v, answer %v", hasCall(o.fake, "chat.update", "_stopped_"), hasCall(o.fake, "chat.postMessage", "was stopped"))
		}
		if r := o.slash(t, "COPS", approverID, "run again"); !strings.Contains(r.Text, "shutting down") {
			t.Errorf("run after Shutdown: %q", r.Text)
		}
	})

	t.Run("a stuck run bounds the wait", func(t *testing.T) {
		g := newGate(false)
		o := newTestOps(t, testOptions{approver: g, replies: []fakeopenai.Reply{bashCall("c1", "touch b.txt"), fakeopenai.Text("denied, fine")}})
		o.slash(t, "COPS", approverID, "run touch b")
		<-g.asked
		short, cancelShort := context.WithCancel(ctx)
		cancelShort() // the bound has passed
		if err := o.Shutdown(short); err != ErrDrainCut {
			t.Fatalf("Shutdown with a stuck run = %v, want ErrDrainCut", err)
		}
		g.open()
		if err := o.Shutdown(ctx); err != nil {
			t.Fatalf("second Shutdown: %v", err)
		}
	})
}

func hasCall(fake *fakeslack.Server, method, text string) bool {
	for _, c := range fake.Calls(method) {
		if c.OK() && strings.Contains(c.Text, text) {
			return true
		}
	}
	return false
}

// A run whose status message Slack refuses for good does not start (or,
// in a thread, where it starts at once, is stopped), and the user who
// typed /askops run is told why through the command's response_url (which
// works where askops cannot post); a mention's user gets an ephemeral
// reply.
func TestRunNotStartedTellsTheUser(t *testing.T) {
	o := newTestOps(t, testOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var cmd slack.SlashCommand
	if err := json.Unmarshal(o.fake.SlashCommandPayload(slack.SlashCommand{Command: "/askops", Text: "run look around", UserID: starterID, ChannelID: "CNOTIN"}), &struct {
		ResponseURL *string `json:"response_url"`
		Channel     *string `json:"channel_id"`
		User        *string `json:"user_id"`
		Command     *string `json:"command"`
		Text        *string `json:"text"`
	}{&cmd.ResponseURL, &cmd.ChannelID, &cmd.UserID, &cmd.Command, &cmd.Text}); err != nil {
		t.Fatal(err)
	}
	o.fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{SlackError: "not_in_channel"})
	if r, _ := o.SlashCommand(ctx, cmd).(*SlashReply); r == nil || !strings.Contains(r.Text, "Starting a run") {
		t.Fatalf("reply %+v", r)
	}
	told, err := o.fake.WaitForCall(ctx, "response_url", func(c fakeslack.Call) bool { return strings.Contains(c.Text, "did not start") })
	if err != nil {
		t.Fatalf("the user was never told: %v", err)
	}
	if !strings.Contains(told.Text, "not_in_channel") || !strings.Contains(told.Text, "/invite @askops") {
		t.Errorf("told %q", told.Text)
	}

	o.fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{SlackError: "is_archived"})
	mention(o, ctx, "Ev9", "9.000001")
	if _, err := o.fake.WaitForCall(ctx, "chat.postEphemeral", func(c fakeslack.Call) bool {
		return c.User == starterID && strings.Contains(c.Text, "was stopped") && strings.Contains(c.Text, "is_archived")
	}); err != nil {
		t.Fatalf("the mention's user was never told: %v", err)
	}
}

// With no model configured, serve still approves agents' calls; a run
// asked for in Slack is answered with why runs are off, and nothing is
// posted or started.
func TestRunsOffWithoutAModel(t *testing.T) {
	o := newTestOps(t, testOptions{runsOff: "no model is configured (openai.model)"})
	r := o.slash(t, "COPS", approverID, "run deploy the site")
	if !strings.Contains(r.Text, "Runs are off here: no model is configured (openai.model).") {
		t.Errorf("reply %q", r.Text)
	}
	if msgs := o.fake.Messages(); len(msgs) != 0 {
		t.Errorf("posted %d messages for a run that cannot start", len(msgs))
	}
	// Stopping a run id nobody has is still a plain answer, not a crash.
	if r := o.slash(t, "COPS", approverID, "stop run_nope"); r.Text == "" {
		t.Errorf("stop: empty reply")
	}
}

// heldPace gives no posting slot until opened (edits always have one).
type heldPace struct{ open atomic.Bool }

func (p *heldPace) Take(_ context.Context, key string, _ channelpace.Limit, _ channelpace.Claim) (time.Duration, error) {
	if key == "chat.update" || p.open.Load() {
		return 0, nil
	}
	return 5 * time.Millisecond, nil
}

func (p *heldPace) Release(context.Context, string, string) error { return nil }

func mention(o *testOps, ctx context.Context, event, ts string) {
	o.Event(ctx, slackevents.EventsAPIEvent{
		Data:       &slackevents.EventsAPICallbackEvent{EventID: event},
		InnerEvent: slackevents.EventsAPIInnerEvent{Data: &slackevents.AppMentionEvent{User: starterID, Channel: "COPS", Text: "<@UBOT> look around", TimeStamp: ts}},
	})
}

// answerInThread waits for the run's answer, the first post that went
// through and whose text is the answer, and fails t unless it is in the
// thread of the mention at ts.
func answerInThread(ctx context.Context, t *testing.T, o *testOps, ts string, isAnswer func(text string) bool) {
	t.Helper()
	answer, err := o.fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return c.OK() && isAnswer(c.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if answer.ThreadTS != ts {
		t.Errorf("answer in thread %q, want the mention's %q", answer.ThreadTS, ts)
	}
}

// finishedInThread waits for the status message in the thread of the
// mention at ts to show the run finished, with every one of also. It is
// posted with the run's end or edited to it: the states between may be
// skipped.
func finishedInThread(ctx context.Context, t *testing.T, o *testOps, ts string, also ...string) {
	t.Helper()
	testwait.Until(ctx, t, "the status message to show the finished run", func() bool {
		for _, m := range o.fake.Messages() {
			if m.ThreadTS == ts && strings.Contains(m.Text, "_finished_") && containsAll(m.Text, also) {
				return true
			}
		}
		return false
	})
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A run in a thread starts at once, however long the channel makes its
// status message wait: the model hears from it, and it ends, before
// anything is posted; its status and answer follow when the channel
// allows, the status showing how it ended.
func TestRunStartsWhileTheChannelMakesItsStatusWait(t *testing.T) {
	pace := &heldPace{}
	o := newTestOps(t, testOptions{pace: pace, replies: []fakeopenai.Reply{fakeopenai.Text("all done")}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	mention(o, ctx, "Ev3", "7.000001")
	testwait.Until(ctx, t, "the run to reach the model", func() bool { return len(o.model.Requests()) == 1 })
	if n := len(o.fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("%d posts while the channel had no slot", n)
	}
	pace.open.Store(true)
	answerInThread(ctx, t, o, "7.000001", func(text string) bool { return text == "all done" })
	finishedInThread(ctx, t, o, "7.000001")
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// Slack failing for longer than one post's retries loses neither the
// run's status nor its answer: both are tried again until they are posted.
func TestAnswerOutlastsSlacksFailures(t *testing.T) {
	o := newTestOps(t, testOptions{replies: []fakeopenai.Reply{fakeopenai.Text("all done")}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	o.fake.FailNext("chat.postMessage", 12, fakeslack.FailMode{Status: 503}) // three posts' worth of retries
	mention(o, ctx, "Ev4", "8.000001")
	if _, err := o.fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return c.OK() && c.Text == "all done" }); err != nil {
		t.Fatalf("the answer was lost: %v", err)
	}
	testwait.Until(ctx, t, "the status to show the finished run", func() bool {
		for _, m := range o.fake.Messages() {
			if m.ThreadTS == "8.000001" && strings.Contains(m.Text, "_finished_") {
				return true
			}
		}
		return false
	})
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// askHeldPace gives a channel's posting slots to everything but new Asks:
// a channel that never reaches the Ask queued for it.
type askHeldPace struct{}

func (askHeldPace) Take(_ context.Context, key string, _ channelpace.Limit, c channelpace.Claim) (time.Duration, error) {
	if key != "chat.update" && c.Priority == int(slackui.PriorityAsk) {
		return 5 * time.Millisecond, nil
	}
	return 0, nil
}

func (askHeldPace) Release(context.Context, string, string) error { return nil }

// An Ask whose deadline comes while it still waits for its channel ends
// unavailable, never shown, and the run's status message says so beside
// the call: the run's people learn why it went on without the call.
func TestRunSaysItsAskWasNeverShown(t *testing.T) {
	o := newTestOps(t, testOptions{pace: askHeldPace{}, roundTrip: 2 * time.Second,
		replies: []fakeopenai.Reply{bashCall("c1", "make deploy"), fakeopenai.Text("all done")}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	mention(o, ctx, "Ev5", "9.000001")
	if _, err := o.fake.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool { return c.OK() && c.Text == "all done" }); err != nil {
		t.Fatalf("the run never answered: %v", err)
	}
	events, err := o.asks.(*pending.MemoryStore).Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var asks []pending.Ask
	for _, e := range events {
		if e.Kind == pending.EventAsked {
			a, err := o.asks.Get(ctx, e.AskID)
			if err != nil {
				t.Fatal(err)
			}
			asks = append(asks, a)
		}
	}
	if len(asks) != 1 {
		t.Fatalf("%d asks, want 1", len(asks))
	}
	if out, _ := asks[0].Outcome(); out != pending.Unavailable || !strings.Contains(asks[0].DecisionReason, "never shown") {
		t.Fatalf("asks: %+v, want one unavailable, never shown", asks)
	}
	for _, c := range o.fake.Calls("chat.postMessage") {
		if strings.Contains(c.Text, "make deploy") && !strings.Contains(c.Text, "*Run*") {
			t.Fatalf("the Ask was posted after all: %q", c.Text)
		}
	}
	testwait.Until(ctx, t, "the status to say the call's Ask was never shown", func() bool {
		for _, m := range o.fake.Messages() {
			if m.ThreadTS == "9.000001" && strings.Contains(m.Text, "_finished_") &&
				strings.Contains(m.Text, "→ unavailable: the approval request was never shown") {
				return true
			}
		}
		return false
	})
	if err := o.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
