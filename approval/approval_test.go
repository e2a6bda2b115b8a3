package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// notifier is a channel that shows Asks to nobody in particular: it records
// what it was handed and answers as the test says.
type notifier struct {
	name string
	// post answers Post; nil posts at once to (name, "ts-"+id).
	post func(ctx context.Context, a pending.Ask) (string, string, error)

	posted chan pending.Ask // every Ask handed to Post; buffered

	mu      sync.Mutex
	updates []pending.Ask
}

func newNotifier(name string) *notifier {
	return &notifier{name: name, posted: make(chan pending.Ask, 16)}
}

func (n *notifier) Post(ctx context.Context, a pending.Ask) (string, string, error) {
	n.posted <- a
	if n.post != nil {
		return n.post(ctx, a)
	}
	return n.name, "ts-" + a.ID, nil
}

func (n *notifier) PostThen(ctx context.Context, a *pending.Ask, done func(string, string, error)) {
	go func() { done(n.Post(ctx, *a)) }()
}

func (n *notifier) Update(_ context.Context, a pending.Ask) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.updates = append(n.updates, a)
	return nil
}

func (n *notifier) updated() []pending.Ask {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]pending.Ask(nil), n.updates...)
}

// waitPosted returns the next Ask the notifier was handed.
func (n *notifier) waitPosted(t *testing.T) pending.Ask {
	t.Helper()
	select {
	case a := <-n.posted:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("the ask was never posted")
		return pending.Ask{}
	}
}

// timers is Config.AfterFunc driven by the test: it keeps the deadline
// timers of the Asks the round trip parked until fire, and arms says one
// was armed (a signal already waiting stands for any armed since).
type timers struct {
	mu    sync.Mutex
	armed []func()
	arms  chan struct{}
}

func (ts *timers) afterFunc(_ time.Duration, f func()) func() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.armed = append(ts.armed, f)
	select {
	case ts.arms <- struct{}{}:
	default:
	}
	return func() bool { return true }
}

// fire runs the timers armed so far.
func (ts *timers) fire() {
	ts.mu.Lock()
	fs := ts.armed
	ts.armed = nil
	ts.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// deadlines is the store's clock and deadline timer, both driven by the
// test, with the round trip's timers: the store refuses to expire an Ask
// before its deadline, so firing the timers also moves the clock past it.
type deadlines struct {
	timers // guards now too
	fire   chan time.Time
	now    time.Time
}

func (d *deadlines) after(time.Duration) <-chan time.Time { return d.fire }

func (d *deadlines) clock() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

// expire moves the clock past every deadline and fires the timers: a
// parked Ask's first (it wakes and waits in the store's WaitFor), then the
// one the store's WaitFor waits on, which records the expiry.
func (d *deadlines) expire() {
	d.mu.Lock()
	d.now = d.now.Add(24 * time.Hour)
	d.mu.Unlock()
	for {
		d.timers.fire()
		select {
		case d.fire <- d.clock():
			return
		case <-d.arms: // a parked Ask's timer, armed meanwhile
		}
	}
}

type setup struct {
	asks      *pending.MemoryStore
	grants    *grants.MemoryStore
	deadlines *deadlines
}

func newSetup(t *testing.T) *setup {
	s := &setup{deadlines: &deadlines{timers: timers{arms: make(chan struct{}, 1)}, fire: make(chan time.Time), now: time.Now()}}
	s.asks = pending.NewMemoryStore(pending.Options{Now: s.deadlines.clock, After: s.deadlines.after, Logger: slog.New(slog.DiscardHandler)})
	s.grants = grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { s.asks.Close(); s.grants.Close() })
	return s
}

func (s *setup) core(t *testing.T, store Store, ns ...Notifier) *Core {
	t.Helper()
	if store == nil {
		store = s.asks
	}
	c, err := New(Config{Asks: store, Grants: s.grants, Notifiers: ns, Timeout: time.Hour, SessionTTL: time.Hour, UpdateTimeout: 5 * time.Second,
		AfterFunc: s.deadlines.afterFunc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bashRequest(run, sess, command string) pending.Request {
	args, _ := json.Marshal(map[string]string{"command": command})
	return pending.Request{
		RunID: run, SessionID: sess, Label: "deploy-bot", StartedBy: "UOWNER",
		Tool: "bash", Args: string(args), Summary: command,
		Reason: "side effect", Workspace: "/ws", Cwd: "/ws/app",
	}
}

// approveAsync starts Approve and returns its answer channel.
func approveAsync(ctx context.Context, c *Core, req pending.Request) chan pending.Ask {
	done := make(chan pending.Ask, 1)
	go func() { done <- c.Approve(ctx, req) }()
	return done
}

func result(t *testing.T, done chan pending.Ask) pending.Ask {
	t.Helper()
	return testwait.Receive(t, done, "Approve to return")
}

// decidedEvents counts the audit's decided events for id.
func decidedEvents(t *testing.T, s *pending.MemoryStore, id string) int {
	t.Helper()
	audit, err := s.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range audit {
		if e.AskID == id && e.Kind == pending.EventDecided {
			n++
		}
	}
	return n
}

func TestNewRefusesMissingParts(t *testing.T) {
	s := newSetup(t)
	n := newNotifier("n")
	for name, cfg := range map[string]Config{
		"nothing":        {},
		"no notifier":    {Asks: s.asks, Grants: s.grants, Timeout: time.Hour, SessionTTL: time.Hour},
		"nil notifier":   {Asks: s.asks, Grants: s.grants, Notifiers: []Notifier{nil}, Timeout: time.Hour, SessionTTL: time.Hour},
		"no timeout":     {Asks: s.asks, Grants: s.grants, Notifiers: []Notifier{n}, SessionTTL: time.Hour},
		"no session ttl": {Asks: s.asks, Grants: s.grants, Notifiers: []Notifier{n}, Timeout: time.Hour},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A decision reaches the waiter; the message saved on the record is left to
// whoever decided (a click updates its own message), and a session approval
// records the scope the approver was shown.
func TestDecisionReachesWaiterAndSessionGrantIsRecorded(t *testing.T) {
	for _, o := range []pending.Outcome{pending.Approved, pending.ApprovedSession, pending.Denied} {
		t.Run(string(o), func(t *testing.T) {
			s := newSetup(t)
			n := newNotifier("C1")
			// The decision comes after the waiter saved the message (before
			// it, the waiter updates the message too: message_test.go).
			store := savesSignalled{s.asks, make(chan struct{})}
			c := s.core(t, store, n)
			req := bashRequest("run-1", "sess-1", "make deploy")
			done := approveAsync(t.Context(), c, req)
			shown := n.waitPosted(t)
			store.waitSaved(t)
			if _, err := s.asks.Decide(t.Context(), shown.ID, o, "U1", "why"); err != nil {
				t.Fatal(err)
			}
			got := result(t, done)
			if got.Status != pending.Status(o) || got.DecidedBy != "U1" || got.Channel != "C1" || got.MessageTS != "ts-"+shown.ID {
				t.Fatalf("got %s by %q at %s/%s", got.Status, got.DecidedBy, got.Channel, got.MessageTS)
			}
			if u := n.updated(); len(u) != 0 {
				t.Errorf("the waiter updated the decided message %d times; the decider does", len(u))
			}
			call := policy.Call{Tool: "bash", Command: "make deploy", Cwd: "/ws/app", Workspace: "/ws", SessionID: "sess-1"}
			g, ok, err := s.grants.Match(t.Context(), "sess-1", call)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (o == pending.ApprovedSession) {
				t.Fatalf("grant recorded = %v after %s", ok, o)
			}
			if ok && g.By != "U1" {
				t.Errorf("grant by %q", g.By)
			}
		})
	}
}

// A losing "Approve for session" leaves no grant behind: only the winner's
// waiter records one.
func TestLosingSessionClickRecordsNoGrant(t *testing.T) {
	s := newSetup(t)
	n := newNotifier("C1")
	c := s.core(t, nil, n)
	done := approveAsync(t.Context(), c, bashRequest("run-1", "sess-1", "make deploy"))
	shown := n.waitPosted(t)
	if _, err := s.asks.Decide(t.Context(), shown.ID, pending.Approved, "U1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.asks.Decide(t.Context(), shown.ID, pending.ApprovedSession, "U2", ""); pending.ErrorCode(err) != pending.CodeConflict {
		t.Fatalf("second decision: %v, want a conflict", err)
	}
	if got := result(t, done); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("got %s", got.Status)
	}
	list, err := s.grants.List(t.Context(), "sess-1")
	if err != nil || len(list) != 0 {
		t.Fatalf("grants %v (%v), want none", list, err)
	}
}

// The failure rules: every way an Ask ends without a human ends it in the
// store too (one decided event pairs its asked), says why, and takes the
// buttons off whatever was shown.
func TestUnansweredOutcomes(t *testing.T) {
	// While the message waits for a human: the Ask ends as want when end
	// (given the setup and the run's stop) says so.
	for _, tc := range []struct {
		name string
		end  func(s *setup, stopRun context.CancelFunc)
		want pending.Outcome
	}{
		{"deadline: expired", func(s *setup, _ context.CancelFunc) { s.deadlines.expire() }, pending.Expired},
		{"run stopped while waiting: cancelled", func(_ *setup, stopRun context.CancelFunc) { stopRun() }, pending.Cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			n := newNotifier("C1")
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			done := approveAsync(ctx, s.core(t, nil, n), bashRequest("run-1", "sess-1", "ls"))
			n.waitPosted(t)
			tc.end(s, stop)
			got := result(t, done)
			if got.Status != pending.Status(tc.want) {
				t.Fatalf("got %s, want %s", got.Status, tc.want)
			}
			checkEnded(t, s, n, got)
		})
	}
	// A run stopped while its message was on the way ends cancelled before
	// it waits; a stop that says why (a serve shutting down) is recorded in
	// the words Wait records a moment later, so the reason never depends on
	// which side of the post the stop fell.
	for _, tc := range []struct {
		name  string
		cause error
		want  string
	}{
		{"run stopped while posting: cancelled", nil, "the run stopped while the approval request was being posted"},
		{"serve stopped while posting: cancelled with its cause", errors.New("askops is shutting down"), "wait ended: askops is shutting down"},
		{"asker gone while posting: cancelled as gone", pending.ErrAskerGone, pending.ReasonAskerGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			n := newNotifier("C1")
			ctx, stop := context.WithCancelCause(t.Context())
			defer stop(nil)
			n.post = func(_ context.Context, a pending.Ask) (string, string, error) {
				stop(tc.cause) // Slack has made the message; its answer is on the way
				return "C1", "ts-" + a.ID, nil
			}
			got := s.core(t, nil, n).Approve(ctx, bashRequest("run-1", "sess-1", "ls"))
			if got.Status != pending.Status(pending.Cancelled) || got.DecisionReason != tc.want {
				t.Fatalf("got %s (%q), want cancelled (%q)", got.Status, got.DecisionReason, tc.want)
			}
			checkEnded(t, s, n, got)
		})
	}
	t.Run("post failed: unavailable with the notifier's reason", func(t *testing.T) {
		s := newSetup(t)
		n := newNotifier("C1")
		n.post = func(context.Context, pending.Ask) (string, string, error) {
			return "", "", &NotPosted{Reason: "no channel is configured", Err: errors.New("internal detail")}
		}
		got := s.core(t, nil, n).Approve(t.Context(), bashRequest("run-1", "sess-1", "ls"))
		if got.Status != pending.Status(pending.Unavailable) || got.DecidedBy != SystemDecider || got.DecisionReason != "no channel is configured" {
			t.Fatalf("got %s by %q (%q)", got.Status, got.DecidedBy, got.DecisionReason)
		}
		if stored, err := s.asks.Get(t.Context(), got.ID); err != nil || stored.Status != pending.Status(pending.Unavailable) {
			t.Fatalf("stored %s (%v)", stored.Status, err)
		}
		if d := decidedEvents(t, s.asks, got.ID); d != 1 {
			t.Fatalf("%d decided events", d)
		}
	})
	t.Run("store down: unavailable, nothing posted", func(t *testing.T) {
		s := newSetup(t)
		n := newNotifier("C1")
		got := s.core(t, createFails{s.asks}, n).Approve(t.Context(), bashRequest("run-1", "sess-1", "ls"))
		if got.Status != pending.Status(pending.Unavailable) || got.DecisionReason == "" {
			t.Fatalf("got %s (%q)", got.Status, got.DecisionReason)
		}
		if len(n.posted) != 0 {
			t.Fatal("an Ask the store never recorded was posted")
		}
	})
}

// checkEnded: the Ask ended in the store as got says, once, and the message
// was updated to that outcome.
func checkEnded(t *testing.T, s *setup, n *notifier, got pending.Ask) {
	t.Helper()
	if stored, err := s.asks.Get(t.Context(), got.ID); err != nil || stored.Status != got.Status {
		t.Fatalf("stored %s (%v), want %s", stored.Status, err, got.Status)
	}
	if d := decidedEvents(t, s.asks, got.ID); d != 1 {
		t.Fatalf("%d decided events", d)
	}
	u := n.updated()
	if len(u) != 1 || u[0].Status != got.Status || u[0].MessageTS != "ts-"+got.ID {
		t.Fatalf("updates %+v, want one to %s", u, got.Status)
	}
}

type createFails struct{ *pending.MemoryStore }

func (createFails) Create(context.Context, pending.Request, time.Duration) (pending.Ask, error) {
	return pending.Ask{}, &pending.Error{Code: pending.CodeUnavailable, Op: "create", Msg: "connection refused"}
}

// A post that does not answer is not waited for until the Ask's deadline
// once the run has stopped: it gets UpdateTimeout, then the Ask ends
// cancelled. (Moved from slackui, where a slow fake Slack played the post.)
func TestRunStoppedWhilePostingHangsNoLongerThanUpdateTimeout(t *testing.T) {
	s := newSetup(t)
	n := newNotifier("C1")
	n.post = func(ctx context.Context, _ pending.Ask) (string, string, error) {
		<-ctx.Done() // a post that never answers
		return "", "", ctx.Err()
	}
	c, err := New(Config{Asks: s.asks, Grants: s.grants, Notifiers: []Notifier{n},
		Timeout: time.Hour, SessionTTL: time.Hour, UpdateTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := approveAsync(ctx, c, bashRequest("run-hang", "sess-1", "make deploy"))
	n.waitPosted(t)
	stop()
	select {
	case got := <-done:
		if got.Status != pending.Status(pending.Cancelled) {
			t.Fatalf("got %s, want cancelled", got.Status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Approve still waits for a post that does not answer after its run stopped")
	}
}

// waitFails is a store whose Wait fails the way a store outage does: it
// answers unavailable without having recorded anything.
// waitFails is a store whose WaitFor fails; it cannot wake a parked Ask
// (no OnEnd), so the round trip waits in WaitFor at once.
type waitFails struct{ Store }

func (w waitFails) WaitFor(_ context.Context, a pending.Ask) (pending.Ask, error) {
	return pending.Ask{ID: a.ID, Status: pending.Status(pending.Unavailable)},
		&pending.Error{Code: pending.CodeUnavailable, Op: "wait", Msg: "connection refused"}
}

// When Wait fails, the call does not run; the Ask must end that way in the
// store too. Left pending, its buttons would later let someone "approve" a
// call that never ran, and the audit would pair its asked with that.
// (Moved from slackui.)
func TestWaitFailureEndsTheStoredAsk(t *testing.T) {
	s := newSetup(t)
	n := newNotifier("C1")
	got := s.core(t, waitFails{s.asks}, n).Approve(t.Context(), bashRequest("run-wait-fails", "sess-1", "make deploy"))
	if o, _ := got.Outcome(); o.Approves() || o == "" {
		t.Fatalf("Approve returned %q, want a refusal", got.Status)
	}
	stored, err := s.asks.Get(t.Context(), got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status == pending.StatusPending {
		t.Fatalf("the Ask is still pending in the store after its waiter gave up")
	}
	if _, err := s.asks.Decide(t.Context(), got.ID, pending.Approved, "U1", ""); err == nil {
		t.Fatal("a late click approved a call that never ran")
	}
}

// Every notifier is shown the Ask; one that fails does not stop the others.
// The record keeps the first address; the waiter keeps the others' messages
// in step, since no click handler knows of them.
func TestEveryNotifierIsShownTheAsk(t *testing.T) {
	s := newSetup(t)
	down, first, second := newNotifier("DOWN"), newNotifier("C1"), newNotifier("C2")
	down.post = func(context.Context, pending.Ask) (string, string, error) {
		return "", "", errors.New("unreachable")
	}
	// The decision comes after the waiter saved the message (before it,
	// the waiter updates that one too: message_test.go).
	store := savesSignalled{s.asks, make(chan struct{})}
	c := s.core(t, store, down, first, second)
	done := approveAsync(t.Context(), c, bashRequest("run-1", "sess-1", "ls"))
	shown := first.waitPosted(t)
	second.waitPosted(t)
	down.waitPosted(t)
	store.waitSaved(t)
	if _, err := s.asks.Decide(t.Context(), shown.ID, pending.Denied, "U1", "no"); err != nil {
		t.Fatal(err)
	}
	got := result(t, done)
	if got.Status != pending.Status(pending.Denied) || got.Channel != "C1" {
		t.Fatalf("got %s at %q", got.Status, got.Channel)
	}
	if u := first.updated(); len(u) != 0 {
		t.Errorf("the recorded message was updated by the waiter: %+v", u)
	}
	if u := second.updated(); len(u) != 1 || u[0].Channel != "C2" || u[0].Status != pending.Status(pending.Denied) {
		t.Errorf("second notifier's updates %+v, want one, to its own message, denied", u)
	}
	if u := down.updated(); len(u) != 0 {
		t.Errorf("a notifier that showed nothing got updates %+v", u)
	}
}

// Nobody reached through any notifier: unavailable, with the first one's
// reason.
func TestNoNotifierReachedIsUnavailable(t *testing.T) {
	s := newSetup(t)
	a, b := newNotifier("A"), newNotifier("B")
	a.post = func(context.Context, pending.Ask) (string, string, error) {
		return "", "", &NotPosted{Reason: "A is down"}
	}
	b.post = func(context.Context, pending.Ask) (string, string, error) { return "", "", errors.New("B is down") }
	got := s.core(t, nil, a, b).Approve(t.Context(), bashRequest("run-1", "sess-1", "ls"))
	if got.Status != pending.Status(pending.Unavailable) || got.DecisionReason != "A is down" {
		t.Fatalf("got %s (%q)", got.Status, got.DecisionReason)
	}
	if d := decidedEvents(t, s.asks, got.ID); d != 1 {
		t.Fatalf("%d decided events", d)
	}
}

func TestScopeText(t *testing.T) {
	text := ScopeText(nil)
	if got := text(pending.Ask{Request: bashRequest("r", "sess-1", "make deploy")}); got == "" {
		t.Error("a bash Ask in a session states no scope")
	}
	if got := text(pending.Ask{Request: bashRequest("r", "", "make deploy")}); got != "" {
		t.Errorf("an Ask without a session states scope %q", got)
	}
}

// An Ask whose session is its own (a bot ask without -session) is made
// offering no session approval, and an approved_session that reaches its
// store anyway (no surface sends one) leaves no grant behind; the same
// call in a real session is offered it and granted.
func TestOneOffSessionIsOfferedNoGrant(t *testing.T) {
	for _, oneOff := range []bool{true, false} {
		t.Run(fmt.Sprintf("one-off %v", oneOff), func(t *testing.T) {
			s := newSetup(t)
			n := newNotifier("C1")
			c := s.core(t, nil, n)
			req := bashRequest("ask-1", "ask-1", "make deploy")
			req.OneOff, req.SessionName = oneOff, "bot ask session 'nightly'"
			done := approveAsync(t.Context(), c, req)
			shown := n.waitPosted(t)
			if offered, known := shown.OffersSession(); !known || offered == oneOff {
				t.Fatalf("offers session %v (known %v)", offered, known)
			}
			if text := ScopeText(nil)(shown); (text == "") != oneOff || (!oneOff && !strings.HasSuffix(text, "— in bot ask session 'nightly'")) {
				t.Errorf("scope text %q", text)
			}
			if _, err := s.asks.Decide(t.Context(), shown.ID, pending.ApprovedSession, "U1", ""); err != nil {
				t.Fatal(err)
			}
			result(t, done)
			list, err := s.grants.List(t.Context(), "ask-1")
			if err != nil || len(list) != map[bool]int{true: 0, false: 1}[oneOff] {
				t.Fatalf("grants %v (%v)", list, err)
			}
		})
	}
}

// A session grant for a command holding a secret is built from the
// command as it came, not from the store's redacted copy: the next
// identical call, secret and all, is covered by it.
func TestSessionGrantKeepsTheSecretTheStoreHides(t *testing.T) {
	s := newSetup(t)
	n := newNotifier("C1")
	store := savesSignalled{s.asks, make(chan struct{})}
	c := s.core(t, store, n)
	const command = "PGPASSWORD=Tr0ub4dor-horse-staple-9 psql -c 'select 1'"
	done := approveAsync(t.Context(), c, bashRequest("run-1", "sess-1", command))
	shown := n.waitPosted(t)
	store.waitSaved(t)
	if strings.Contains(shown.Args, "Tr0ub4dor") {
		t.Fatalf("the store kept the secret: %s", shown.Args)
	}
	if _, err := s.asks.Decide(t.Context(), shown.ID, pending.ApprovedSession, "U1", ""); err != nil {
		t.Fatal(err)
	}
	result(t, done)
	call := policy.Call{Tool: "bash", Command: command, Cwd: "/ws/app", Workspace: "/ws", SessionID: "sess-1"}
	if _, ok, err := s.grants.Match(t.Context(), "sess-1", call); err != nil || !ok {
		t.Fatalf("the identical call with its secret is not covered by the grant: %v, %v", ok, err)
	}
}

// A round trip keeps the request as it came only when the store's copy
// says something else (a secret hidden): otherwise one copy is enough.
func TestTripKeepsTheRequestOnlyWhenTheStoreChangedIt(t *testing.T) {
	s := newSetup(t)
	for _, tt := range []struct {
		command string
		kept    bool
	}{
		{"make deploy", false},
		{"PGPASSWORD=Tr0ub4dor-horse-staple-9 psql -c 'select 1'", true},
	} {
		req := bashRequest("run-1", "sess-1", tt.command)
		req.SessionName, req.Approvals = "this agent session in /ws", 1
		a, err := s.asks.Create(t.Context(), req, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		tr := newTrip(req, a)
		if kept := tr.req != nil; kept != tt.kept {
			t.Errorf("%q: request kept = %v, want %v", tt.command, kept, tt.kept)
		}
		if got := tr.request(); got.Args != req.Args || got.Summary != req.Summary {
			t.Errorf("%q: the trip's request says %q, want the call as it came", tt.command, got.Args)
		}
	}
}
