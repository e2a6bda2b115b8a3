package slackui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

const (
	approverA = "UAPPROVERA"
	approverB = "UAPPROVERB"
	stranger  = "USTRANGER"
	approvals = "CAPPROVALS"
)

// verifyNoLeaks checks, after every other cleanup of the test has run, that
// no goroutine started since this call is left (background Slack calls
// drained, waiters gone, listeners stopped). The goroutines already running
// are taken now, not in the cleanup: taken there, every goroutine the test
// left would be ignored, and only those a still-running world started
// during the cleanup (another world of the same test: give each its own
// subtest) would be seen.
func verifyNoLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// world is askops' Slack side wired to a fake Slack: one process's
// approval round trip with Slack as its notifier (the waiting side) and an Interactions (the clicking side),
// possibly on different store instances.
type world struct {
	t        *testing.T
	fake     *fakeslack.Server
	api      *slack.Client
	asks     pending.Store // the waiter's store
	clicks   pending.Store // the store the interaction handler uses
	grants   grants.Store
	notifier *Notifier
	approver *approval.Core
	inter    *Interactions
	url      string // POST /slack/interactions
	redisURL string // the Redis the stores share, if any
}

type worldOptions struct {
	redis       bool          // real Redis, two store instances (waiter: A, clicks: B)
	timeout     time.Duration // how long an Ask waits; default 30s
	maxAttempts int
	// grantDurations are approvals.grant_durations (see quorum_test.go).
	grantDurations []time.Duration
	// enterprise puts the fake's workspace in that Enterprise Grid
	// organisation (workspace_test.go).
	enterprise string
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	verifyNoLeaks(t)
	if o.timeout == 0 {
		o.timeout = 30 * time.Second
	}
	log := testLog(t)
	w := &world{t: t}
	w.fake = fakeslack.New(t, fakeslack.Options{SigningSecret: "test-secret", EnterpriseID: o.enterprise})
	w.fake.SetUser(approverA, "alice")
	w.fake.SetUser(approverB, "bob")
	w.fake.SetUser(stranger, "mallory")
	w.api = fakeAPI(w.fake)

	redisURL := ""
	if o.redis {
		redisURL = redistest.Start(t).URL()
	}
	w.redisURL = redisURL
	w.openStores(redisURL, log)

	w.notifier = NewNotifier(w.api, NotifierConfig{
		ApprovalChannel: approvals,
		Mention:         "<!subteam^SAPPROVERS>",
		ScopeText:       approval.ScopeText(approval.DefaultScopeFor),
		Logger:          log,
		MaxAttempts:     o.maxAttempts,
		GrantDurations:  o.grantDurations,
		RetryBackoff:    20 * time.Millisecond,
		// Pacing has its own test; here it would only slow retries down.
		PerChannelInterval: 20 * time.Millisecond,
	})
	var err error
	w.approver, err = approval.New(approval.Config{
		Asks: w.asks, Grants: w.grants, Notifiers: []approval.Notifier{w.notifier},
		Timeout: o.timeout, SessionTTL: time.Hour, GrantDurations: o.grantDurations, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	approvers := testApprovers(t)
	w.serveClicks(approvers, log)
	return w
}

// testApprovers is the approver set the test worlds use: approverA and approverB.
func testApprovers(t *testing.T) *Approvers {
	t.Helper()
	approvers, err := NewApprovers(ApproversConfig{Users: []string{approverA, approverB}})
	if err != nil {
		t.Fatal(err)
	}
	return approvers
}

// testLog is the tests' logger: silent, or with -v at debug level into
// the test's own log, so a failing test's log reads beside its output.
func testLog(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// fakeAPI is a Slack client that calls fake as askops' bot calls Slack.
func fakeAPI(fake *fakeslack.Server) *slack.Client {
	return slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
}

// redisAsks opens a client on the Redis at url and a pending store over
// it, both closed when tb ends (the store first). The client is returned
// for what else a replica keeps on that Redis (grants, pace, batches).
func redisAsks(tb testing.TB, url string, opts pending.Options) (*pending.RedisStore, redis.UniversalClient) {
	tb.Helper()
	client, err := redisconn.Open(url)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := pending.NewRedisStore(tb.Context(), client, opts)
	if err != nil {
		client.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(); client.Close() })
	return s, client
}

// openStores gives w its stores. With redisURL they are two replicas'
// stores on that Redis (w.asks the waiter's, w.clicks the clicking
// side's) and the grants beside the waiter's, whose client is returned;
// without, one memory store is both, and the client is nil.
func (w *world) openStores(redisURL string, log *slog.Logger) redis.UniversalClient {
	if redisURL == "" {
		s := pending.NewMemoryStore(pending.Options{Logger: log})
		w.t.Cleanup(func() { s.Close() })
		w.asks, w.clicks = s, s
		w.grants = grants.NewMemoryStore(grants.Options{})
		return nil
	}
	var client redis.UniversalClient
	w.asks, client = redisAsks(w.t, redisURL, pending.Options{Logger: log})
	w.clicks, _ = redisAsks(w.t, redisURL, pending.Options{Logger: log})
	w.grants = grants.NewRedisStore(client, grants.Options{})
	return client
}

// serveClicks makes w.inter, the clicking side over w.clicks with the
// Decider the wiring builds, and serves it behind the signature check at
// w.url, until the test ends.
func (w *world) serveClicks(approvers *Approvers, log *slog.Logger) {
	w.inter = NewInteractions(InteractionsConfig{
		Asks: w.clicks, Notifier: w.notifier, Approvers: approvers, API: w.api, Logger: log,
		Decider: testDecider(w.t, w.clicks, w.notifier, approvers, approval.SelfApproval{}),
		// As the wiring has it: the team learnt through the fake's auth.test.
		Workspace: NewWorkspace(w.api),
	})
	w.url = serveInteractions(w.t, w.fake.SigningSecret(), w.inter) + "/slack/interactions"
}

// serveInteractions serves inter behind the signature check with secret
// on a test server, and returns the server's URL. When tb ends, the
// server stops taking requests, then inter drains its background Slack
// calls (cleanups run last-in first-out), before the fake Slack and the
// stores registered earlier go.
func serveInteractions(tb testing.TB, secret string, inter *Interactions) string {
	srv := httptest.NewServer(Verified(secret, time.Now, inter))
	tb.Cleanup(func() { inter.Close() })
	tb.Cleanup(srv.Close)
	return srv.URL
}

// testDecider is the Decider the wiring builds, for clicks on asks'
// messages rendered by messages: its grant durations, its one approver's
// exception, rule; the test's cleanup closes it.
func testDecider(tb testing.TB, asks approval.DecideStore, messages AskMessages, approvers *Approvers, rule approval.SelfApproval) *approval.Decider {
	cfg := approval.DeciderConfig{Asks: asks, SelfApproval: rule, Messages: []approval.MessageUpdater{messages}}
	if l, ok := messages.(grantLives); ok {
		cfg.GrantDurations = l.GrantLives()
	}
	if approvers != nil {
		cfg.OnlyApprover = approvers.Only
	}
	d := approval.NewDecider(cfg)
	tb.Cleanup(d.Close)
	return d
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// bashRequest is a bash tool call in session sess.
func bashRequest(run, sess, command string) pending.Request {
	args, _ := json.Marshal(map[string]string{"command": command})
	return pending.Request{
		RunID: run, SessionID: sess, Label: "deploy-bot", StartedBy: "UOWNER",
		Tool: "bash", Args: string(args), Summary: command,
		Reason: "side effect", Workspace: "/ws", Cwd: "/ws/app",
	}
}

// waiting is an Approve call in flight and its posted message.
type waiting struct {
	id, channel, ts string
	done            chan pending.Ask
}

// ask starts Approve(req) and returns once its message is posted and saved
// on the record, so a click can find it.
func (w *world) ask(req pending.Request) *waiting {
	w.t.Helper()
	ctx := w.t.Context()
	done := make(chan pending.Ask, 1)
	go func() { done <- w.approver.Approve(ctx, req) }()
	wa := &waiting{done: done}
	testwait.For(w.t, "the ask to be posted and saved", func() bool {
		asks, err := w.asks.ListPending(ctx, pending.Filter{RunID: req.RunID})
		if err != nil || len(asks) == 0 || asks[0].MessageTS == "" {
			return false
		}
		wa.id, wa.channel, wa.ts = asks[0].ID, asks[0].Channel, asks[0].MessageTS
		return true
	})
	w.t.Cleanup(func() {
		// A test that leaves its Ask open still ends: t.Context is
		// cancelled before cleanups, so Approve returns cancelled.
		<-done
	})
	return wa
}

// reasonForm is the private_metadata of the deny-reason modal opened from
// wa's message.
func (wa *waiting) reasonForm() string { return wa.id + " " + wa.channel + " " + wa.ts }

func (wa *waiting) result(t *testing.T) pending.Ask {
	t.Helper()
	select {
	case a := <-wa.done:
		wa.done <- a // keep it for the cleanup
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("Approve did not return")
		return pending.Ask{}
	}
}

// click delivers a signed button click on wa's message as Slack would.
func (w *world) click(wa *waiting, user, action string, so ...fakeslack.SignOptions) *http.Response {
	w.t.Helper()
	payload := w.fake.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: wa.channel, MessageTS: wa.ts, ActionID: action, Value: wa.id,
	})
	resp, err := w.fake.PostInteraction(w.t.Context(), w.url, payload, so...)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp
}

func blocksHaveButton(blocks []slack.Block, actionID string) bool {
	for _, b := range blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.Elements == nil {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
				return true
			}
		}
	}
	return false
}

// messageEnded waits until wa's message was updated in place and has no
// decision buttons left, and returns its text.
func (w *world) messageEnded(wa *waiting) string {
	w.t.Helper()
	m, err := w.fake.WaitForMessage(w.t.Context(), wa.channel, wa.ts, func(m fakeslack.Message) bool {
		return m.Updates > 0 && !blocksHaveButton(m.Blocks, ActionApprove) && !blocksHaveButton(m.Blocks, ActionDeny)
	})
	if err != nil {
		w.t.Fatalf("message %s/%s never showed the decision: %v", wa.channel, wa.ts, err)
	}
	return m.Text + "\n" + fakeslack.BlockText(m.Blocks)
}

func (w *world) ephemeralsTo(user string) []fakeslack.Call {
	var out []fakeslack.Call
	for _, c := range w.fake.Calls("chat.postEphemeral") {
		if c.User == user {
			out = append(out, c)
		}
	}
	return out
}

func (w *world) waitEphemeral(user string) fakeslack.Call {
	w.t.Helper()
	c, err := w.fake.WaitForCall(w.t.Context(), "chat.postEphemeral", func(c fakeslack.Call) bool { return c.User == user })
	if err != nil {
		w.t.Fatalf("no ephemeral reply to %s: %v", user, err)
	}
	return c
}

// forEachStore runs f against the memory store and against two Redis store
// instances (the waiter on one, the click handler on the other, as two
// replicas would be).
func forEachStore(t *testing.T, o worldOptions, f func(t *testing.T, w *world)) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			o := o
			o.redis = store == "redis"
			f(t, newWorld(t, o))
		})
	}
}

func TestApproveDenyRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		action  string
		want    pending.Outcome
		grant   bool
		ends    string // shown on the updated message
		decided string
	}{
		{"approve", ActionApprove, pending.Approved, false, "pprove", approverA},
		{"approve for session", ActionApproveSession, pending.ApprovedSession, true, "pprove", approverA},
		{"deny", ActionDeny, pending.Denied, false, "enied", approverA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
				ctx := t.Context()
				req := bashRequest("run-"+t.Name(), "sess-1", "npm test")
				wa := w.ask(req)

				posted, _ := w.fake.Message(wa.channel, wa.ts)
				if wa.channel != approvals || !blocksHaveButton(posted.Blocks, ActionApprove) || !blocksHaveButton(posted.Blocks, ActionApproveSession) {
					t.Fatalf("posted to %s with blocks %s; want the approval channel and all buttons", wa.channel, posted.RawBlocks)
				}
				if !strings.Contains(posted.Text, "<!subteam^SAPPROVERS>") {
					t.Errorf("message text %q lacks the configured mention", posted.Text)
				}

				resp := w.click(wa, approverA, tt.action)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("click answered %d", resp.StatusCode)
				}
				got := wa.result(t)
				if o, _ := got.Outcome(); o != tt.want || got.DecidedBy != tt.decided {
					t.Fatalf("Approve returned %s by %q, want %s by %s", got.Status, got.DecidedBy, tt.want, tt.decided)
				}
				text := w.messageEnded(wa)
				if !strings.Contains(text, tt.ends) {
					t.Errorf("updated message does not say %q:\n%s", tt.ends, text)
				}

				call := policy.Call{Tool: "bash", Command: "npm test", Cwd: "/ws/app", Workspace: "/ws", SessionID: "sess-1"}
				g, ok, err := w.grants.Match(ctx, "sess-1", call)
				if err != nil {
					t.Fatal(err)
				}
				if ok != tt.grant {
					t.Fatalf("grant recorded = %v (%v), want %v", ok, g, tt.grant)
				}
				if !tt.grant {
					return
				}
				if g.By != approverA {
					t.Errorf("grant by %q, want %s", g.By, approverA)
				}
				// The second identical call is covered: it runs without a
				// new message. A different command is not.
				posts := len(w.fake.Calls("chat.postMessage"))
				second := gatedApprove(ctx, w, req)
				if o, _ := second.Outcome(); !o.Approves() {
					t.Fatalf("second identical call: %s", second.Status)
				}
				if n := len(w.fake.Calls("chat.postMessage")); n != posts {
					t.Fatalf("second identical call posted %d new messages", n-posts)
				}
				other := call
				other.Command = "npm publish"
				if _, ok, _ := w.grants.Match(ctx, "sess-1", other); ok {
					t.Fatal("the session grant covers a different command")
				}
				if _, ok, _ := w.grants.Match(ctx, "sess-2", call); ok {
					t.Fatal("the session grant covers another session")
				}
			})
		})
	}
}

// gatedApprove is what the policy does with a grant in front of the
// Approver: a call the session's grants cover runs without asking.
func gatedApprove(ctx context.Context, w *world, req pending.Request) pending.Ask {
	var args struct{ Command string }
	_ = json.Unmarshal([]byte(req.Args), &args)
	call := policy.Call{Tool: req.Tool, Command: args.Command, Cwd: req.Cwd, Workspace: req.Workspace, SessionID: req.SessionID}
	if g, ok, err := w.grants.Match(ctx, req.SessionID, call); err == nil && ok {
		return pending.Ask{Request: req, Status: pending.Status(pending.Approved), DecidedBy: g.By}
	}
	return w.approver.Approve(ctx, req)
}

// The confirm dialog of "Approve for session" states exactly the scope that
// a click records.
func TestSessionButtonStatesRecordedScope(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-scope", "sess-1", "make deploy"))
	m, _ := w.fake.Message(wa.channel, wa.ts)
	scope, err := approval.DefaultScopeFor(pending.Ask{Request: bashRequest("run-scope", "sess-1", "make deploy")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(m.RawBlocks, []byte(jsonString(Escape(scope.String())))) && !bytes.Contains(m.RawBlocks, []byte(jsonString(scope.String()))) {
		t.Fatalf("the session button's confirm does not state %q:\n%s", scope.String(), m.RawBlocks)
	}
	w.click(wa, approverA, ActionDeny)
	wa.result(t)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func TestDenyWithReasonReachesWaiter(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-reason", "sess-1", "rm -rf build"))
		if resp := w.click(wa, approverA, ActionDenyReason); resp.StatusCode != http.StatusOK {
			t.Fatalf("click answered %d", resp.StatusCode)
		}
		open, err := w.fake.WaitForCall(t.Context(), "views.open", nil)
		if err != nil {
			t.Fatal(err)
		}
		if open.View == nil || open.View.CallbackID != CallbackDenyReason || open.View.PrivateMetadata != wa.reasonForm() {
			t.Fatalf("views.open got %+v, want the deny-reason modal for %s", open.View, wa.id)
		}
		var viewID string
		for _, v := range w.fake.Views() {
			viewID = v.ID
		}
		submit := w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
			User: approverA, ViewID: viewID,
			Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: "use the staging cluster"}},
		})
		resp, err := w.fake.PostInteraction(t.Context(), w.url, submit)
		if err != nil {
			t.Fatal(err)
		}
		if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || len(bytes.TrimSpace(body)) != 0 {
			t.Fatalf("submission answered %d %q, want 200 with an empty body (modal closes)", resp.StatusCode, body)
		}
		got := wa.result(t)
		if got.Status != pending.Status(pending.Denied) || got.DecisionReason != "use the staging cluster" || got.DecidedBy != approverA {
			t.Fatalf("waiter got %s by %q reason %q", got.Status, got.DecidedBy, got.DecisionReason)
		}
		if text := w.messageEnded(wa); !strings.Contains(text, "use the staging cluster") {
			t.Errorf("updated message does not show the reason:\n%s", text)
		}
	})
}

func TestDenyReasonModalRefusesEmptyReasonAndStrangers(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-empty", "sess-1", "ls"))
	for _, tc := range []struct{ user, reason, want string }{
		{approverA, "   ", "why"},
		{stranger, "no", "not one of the approvers"},
	} {
		submit := w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
			User: tc.user, CallbackID: CallbackDenyReason, PrivateMetadata: wa.id,
			Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: tc.reason}},
		})
		resp, err := w.fake.PostInteraction(t.Context(), w.url, submit)
		if err != nil {
			t.Fatal(err)
		}
		var got slack.ViewSubmissionResponse
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.ResponseAction != slack.RAErrors || !strings.Contains(got.Errors[BlockDenyReason], tc.want) {
			t.Fatalf("user %s reason %q: answer %+v, want an error on the input saying %q", tc.user, tc.reason, got, tc.want)
		}
	}
	if a, _ := w.asks.Get(t.Context(), wa.id); a.Status != pending.StatusPending {
		t.Fatalf("ask is %s after refused submissions", a.Status)
	}
	w.click(wa, approverA, ActionApprove)
	wa.result(t)
}

func TestNonApproverClickChangesNothing(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-stranger", "sess-1", "make deploy"))
		for _, action := range []string{ActionApprove, ActionApproveSession, ActionDeny, ActionDenyReason} {
			if resp := w.click(wa, stranger, action); resp.StatusCode != http.StatusOK {
				t.Fatalf("click answered %d", resp.StatusCode)
			}
		}
		if _, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 4, func(c fakeslack.Call) bool {
			return c.User == stranger && strings.Contains(c.Text, "not one of the approvers")
		}); err != nil {
			t.Fatal(err)
		}
		a, err := w.asks.Get(t.Context(), wa.id)
		if err != nil || a.Status != pending.StatusPending {
			t.Fatalf("ask is %s (%v) after a stranger's clicks, want pending", a.Status, err)
		}
		if n := len(w.fake.Calls("chat.update")) + len(w.fake.Calls("views.open")); n != 0 {
			t.Fatalf("a stranger's click caused %d message updates / modals", n)
		}
		if gs, _ := w.grants.List(t.Context(), "sess-1"); len(gs) != 0 {
			t.Fatalf("a stranger's click left grants %v", gs)
		}
		w.click(wa, approverA, ActionDeny)
		if got := wa.result(t); got.DecidedBy != approverA {
			t.Fatalf("decided by %q", got.DecidedBy)
		}
	})
}

func TestForgedOrStaleOrHugeRequestsChangeNothing(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-forged", "sess-1", "make deploy"))
	payload := w.fake.BlockActionsPayload(fakeslack.BlockActions{
		User: approverA, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id,
	})
	huge := []byte("payload=" + strings.Repeat("a", 2<<20))
	tests := []struct {
		name string
		send func() (*http.Response, error)
		want int
	}{
		{"forged signature", func() (*http.Response, error) {
			return w.fake.PostInteraction(t.Context(), w.url, payload, fakeslack.SignOptions{Secret: "a-guess"})
		}, http.StatusUnauthorized},
		{"unsigned", func() (*http.Response, error) {
			return w.fake.PostInteraction(t.Context(), w.url, payload, fakeslack.SignOptions{Unsigned: true})
		}, http.StatusUnauthorized},
		{"timestamp 6 minutes old", func() (*http.Response, error) {
			return w.fake.PostInteraction(t.Context(), w.url, payload, fakeslack.SignOptions{Timestamp: time.Now().Add(-6 * time.Minute)})
		}, http.StatusUnauthorized},
		{"2 MiB body", func() (*http.Response, error) {
			return w.fake.PostSigned(t.Context(), w.url, "application/x-www-form-urlencoded", huge, fakeslack.SignOptions{})
		}, http.StatusRequestEntityTooLarge},
		{"signed garbage", func() (*http.Response, error) {
			return w.fake.PostSigned(t.Context(), w.url, "application/x-www-form-urlencoded", []byte("payload=%7Bnot+json"), fakeslack.SignOptions{})
		}, http.StatusBadRequest},
		{"signed, no payload", func() (*http.Response, error) {
			return w.fake.PostSigned(t.Context(), w.url, "application/x-www-form-urlencoded", []byte("token=x"), fakeslack.SignOptions{})
		}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.send()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.want {
				t.Fatalf("answered %d, want %d", resp.StatusCode, tt.want)
			}
			if a, _ := w.asks.Get(t.Context(), wa.id); a.Status != pending.StatusPending {
				t.Fatalf("ask is %s", a.Status)
			}
		})
	}
	if n := len(w.fake.Calls("chat.update")) + len(w.fake.Calls("chat.postEphemeral")); n != 0 {
		t.Fatalf("rejected requests caused %d Slack calls", n)
	}
	w.click(wa, approverA, ActionApprove)
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("the genuine click gave %s", got.Status)
	}
}

func TestConcurrentApproversOneDecision(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-race", "sess-1", "make deploy"))
		var wg sync.WaitGroup
		var bad atomic.Int32
		for _, c := range []struct{ user, action string }{{approverA, ActionApproveSession}, {approverB, ActionDeny}} {
			wg.Go(func() {
				if resp := w.click(wa, c.user, c.action); resp.StatusCode != http.StatusOK {
					bad.Add(1)
				}
			})
		}
		wg.Wait()
		if bad.Load() != 0 {
			t.Fatal("a click was not answered 200")
		}
		got := wa.result(t)
		winner, loser := approverA, approverB
		if got.DecidedBy == approverB {
			winner, loser = approverB, approverA
		}
		if o, _ := got.Outcome(); (winner == approverA) != (o == pending.ApprovedSession) {
			t.Fatalf("outcome %s does not match the winner %s", o, winner)
		}
		told := w.waitEphemeral(loser)
		if !strings.Contains(told.Text, "<@"+winner+">") || !strings.Contains(told.Text, "Already") {
			t.Fatalf("loser was told %q; want who decided first (%s)", told.Text, winner)
		}
		if n := len(w.ephemeralsTo(winner)); n != 0 {
			t.Fatalf("the winner got %d ephemeral replies", n)
		}
		w.messageEnded(wa)
		gs, err := w.grants.List(t.Context(), "sess-1")
		if err != nil {
			t.Fatal(err)
		}
		if wantGrant := winner == approverA; (len(gs) == 1) != wantGrant || len(gs) > 1 {
			t.Fatalf("grants %v; a losing 'for session' click must leave none", gs)
		}
	})
}

func TestClickAfterExpiry(t *testing.T) {
	forEachStore(t, worldOptions{timeout: 300 * time.Millisecond}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-late", "sess-1", "make deploy"))
		got := wa.result(t)
		if got.Status != pending.Status(pending.Expired) {
			t.Fatalf("nobody clicked; got %s", got.Status)
		}
		if text := w.messageEnded(wa); !strings.Contains(strings.ToLower(text), "expired") {
			t.Fatalf("message after expiry:\n%s", text)
		}
		w.click(wa, approverA, ActionApprove)
		told := w.waitEphemeral(approverA)
		if !strings.Contains(told.Text, "expired") {
			t.Fatalf("late clicker was told %q", told.Text)
		}
		a, _ := w.asks.Get(t.Context(), wa.id)
		if a.Status != pending.Status(pending.Expired) {
			t.Fatalf("a late click changed the ask to %s", a.Status)
		}
		// The message is refreshed to its true state again after the click.
		if _, err := w.fake.WaitForMessage(t.Context(), wa.channel, wa.ts, func(m fakeslack.Message) bool {
			return m.Updates >= 2 && strings.Contains(strings.ToLower(m.Text+fakeslack.BlockText(m.Blocks)), "expired")
		}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUnknownAskClickIsTold(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-unknown", "sess-1", "ls"))
	// A well-formed id this store never saw (another deployment's, or
	// garbage-collected).
	elsewhere := pending.NewMemoryStore(pending.Options{})
	defer elsewhere.Close()
	other, err := elsewhere.Create(t.Context(), bashRequest("run-x", "sess-x", "ls"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ghost := &waiting{id: other.ID, channel: wa.channel, ts: wa.ts}
	w.click(ghost, approverA, ActionApprove)
	if told := w.waitEphemeral(approverA); !strings.Contains(told.Text, "no longer knows") {
		t.Fatalf("told %q", told.Text)
	}
	w.click(wa, approverA, ActionDeny)
	wa.result(t)
}

func TestPostRateLimitedIsRetriedAfterRetryAfter(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	wa := w.ask(bashRequest("run-429", "sess-1", "make deploy"))
	posts := w.fake.Calls("chat.postMessage")
	if len(posts) != 2 {
		t.Fatalf("fake saw %d posts, want 2 (429 then retry)", len(posts))
	}
	if posts[0].Status != http.StatusTooManyRequests || !posts[1].OK() {
		t.Fatalf("posts answered %d then %d %q", posts[0].Status, posts[1].Status, posts[1].Error)
	}
	if gap := posts[1].At.Sub(posts[0].At); gap < time.Second {
		t.Fatalf("retried %s after the 429, before its Retry-After of 1s", gap)
	}
	w.click(wa, approverA, ActionApprove)
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("got %s", got.Status)
	}
}

func TestSlackDownResolvesUnavailable(t *testing.T) {
	forEachStore(t, worldOptions{maxAttempts: 3}, func(t *testing.T, w *world) {
		w.fake.FailNext("chat.postMessage", 100, fakeslack.FailMode{Status: http.StatusInternalServerError})
		req := bashRequest("run-500", "sess-1", "make deploy")
		got := w.approver.Approve(t.Context(), req)
		if got.Status != pending.Status(pending.Unavailable) || got.DecidedBy != "askops" || got.DecisionReason == "" {
			t.Fatalf("got %s by %q (%q), want unavailable by askops with a reason", got.Status, got.DecidedBy, got.DecisionReason)
		}
		if n := len(w.fake.Calls("chat.postMessage")); n != 3 {
			t.Fatalf("fake saw %d posts, want the 3 attempts of the budget", n)
		}
		stored, err := w.asks.Get(t.Context(), got.ID)
		if err != nil || stored.Status != pending.Status(pending.Unavailable) {
			t.Fatalf("stored ask is %s (%v)", stored.Status, err)
		}
		audit, err := w.asks.Audit(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		decided := 0
		for _, e := range audit {
			if e.AskID == got.ID && e.Kind == pending.EventDecided {
				decided++
			}
		}
		if decided != 1 {
			t.Fatalf("audit has %d decided events for the ask, want 1", decided)
		}
	})
}

func TestNoChannelResolvesUnavailableAtOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.notifier.cfg.ApprovalChannel = ""
	got := w.approver.Approve(t.Context(), bashRequest("run-nochan", "sess-1", "ls"))
	if got.Status != pending.Status(pending.Unavailable) || !strings.Contains(got.DecisionReason, "channel") {
		t.Fatalf("got %s %q", got.Status, got.DecisionReason)
	}
	if n := len(w.fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("%d posts", n)
	}
}

// A run started from a Slack thread gets its Asks in that thread.
func TestAskGoesToTheRunsThread(t *testing.T) {
	w := newWorld(t, worldOptions{})
	req := bashRequest("run-thread", "sess-1", "ls")
	req.ReplyChannel, req.ReplyThreadTS = "CTEAM", "1700000000.000100"
	wa := w.ask(req)
	if wa.channel != "CTEAM" {
		t.Fatalf("posted to %s", wa.channel)
	}
	if m, _ := w.fake.Message(wa.channel, wa.ts); m.ThreadTS != req.ReplyThreadTS {
		t.Fatalf("posted in thread %q, want %q", m.ThreadTS, req.ReplyThreadTS)
	}
	w.click(wa, approverA, ActionApprove)
	wa.result(t)
}

// The run stopping while its Ask waits ends it cancelled and says so.
func TestRunStoppedWhileWaiting(t *testing.T) {
	w := newWorld(t, worldOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := bashRequest("run-stop", "sess-1", "ls")
	done := make(chan pending.Ask, 1)
	go func() { done <- w.approver.Approve(ctx, req) }()
	wa := &waiting{}
	testwait.For(t, "the ask to be posted", func() bool {
		asks, _ := w.asks.ListPending(t.Context(), pending.Filter{RunID: req.RunID})
		if len(asks) == 0 || asks[0].MessageTS == "" {
			return false
		}
		wa.channel, wa.ts = asks[0].Channel, asks[0].MessageTS
		return true
	})
	cancel()
	got := <-done
	if got.Status != pending.Status(pending.Cancelled) {
		t.Fatalf("got %s", got.Status)
	}
	w.messageEnded(wa)
}

// Two replicas share one Redis: the Ask created (and waited on) by A is
// decided through an interaction handler wired to B, and A's waiter wakes.
func TestCrossProcessDecisionWakesWaiter(t *testing.T) {
	w := newWorld(t, worldOptions{redis: true})
	if w.asks == w.clicks {
		t.Fatal("the test needs two store instances")
	}
	wa := w.ask(bashRequest("run-xproc", "sess-1", "make deploy"))
	w.click(wa, approverB, ActionApprove)
	got := wa.result(t)
	if got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverB {
		t.Fatalf("A's waiter got %s by %q", got.Status, got.DecidedBy)
	}
	w.messageEnded(wa)
}

func TestShowFullOpensModal(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-full", "sess-1", "echo "+strings.Repeat("x", 5000)))
	w.click(wa, stranger, ActionShowFull)
	open, err := w.fake.WaitForCall(t.Context(), "views.open", nil)
	if err != nil {
		t.Fatal(err)
	}
	if open.View == nil || open.View.CallbackID != CallbackShowFull {
		t.Fatalf("views.open got %+v", open.View)
	}
	w.click(wa, approverA, ActionApprove)
	wa.result(t)
}

// finishedUpdates counts message updates that have returned.
type finishedUpdates struct {
	next AskMessages
	done atomic.Int32
}

func (f *finishedUpdates) Offers(a pending.Ask, actionID string) bool {
	return f.next.Offers(a, actionID)
}

func (f *finishedUpdates) Update(ctx context.Context, a pending.Ask) error {
	defer f.done.Add(1)
	return f.next.Update(ctx, a)
}

// The acknowledgement does not wait for a slow chat.update, and Close does:
// shutdown drains the background Slack calls.
func TestCloseDrainsSlowMessageUpdates(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.fake.SetDelay("chat.update", time.Second)
	counted := &finishedUpdates{next: w.notifier}
	d := approval.NewDecider(approval.DeciderConfig{Asks: w.clicks, Messages: []approval.MessageUpdater{counted}})
	w.inter.cfg.Decider = d
	wa := w.ask(bashRequest("run-drain", "sess-1", "ls"))
	w.click(wa, approverA, ActionApprove)
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("got %s", got.Status)
	}
	if _, err := w.fake.WaitForCall(t.Context(), "chat.update", nil); err != nil {
		t.Fatal(err)
	}
	if counted.done.Load() != 0 {
		t.Fatal("the update finished before its 1s answer; the delay did not apply")
	}
	d.Close()
	if n := counted.done.Load(); n != 1 {
		t.Fatalf("Close returned with %d of 1 updates finished", n)
	}
}

// A "for session" click that loses to a denial leaves no grant behind.
func TestLosingSessionClickLeavesNoGrant(t *testing.T) {
	forEachStore(t, worldOptions{}, func(t *testing.T, w *world) {
		wa := w.ask(bashRequest("run-lose", "sess-1", "make deploy"))
		w.click(wa, approverB, ActionDeny)
		w.click(wa, approverA, ActionApproveSession)
		if got := wa.result(t); got.Status != pending.Status(pending.Denied) || got.DecidedBy != approverB {
			t.Fatalf("got %s by %q", got.Status, got.DecidedBy)
		}
		if told := w.waitEphemeral(approverA); !strings.Contains(told.Text, "denied by <@"+approverB+">") {
			t.Fatalf("loser told %q", told.Text)
		}
		if gs, err := w.grants.List(t.Context(), "sess-1"); err != nil || len(gs) != 0 {
			t.Fatalf("grants %v (%v), want none", gs, err)
		}
	})
}

func TestDenyReasonSubmissionEdgeCases(t *testing.T) {
	w := newWorld(t, worldOptions{})
	submit := func(wa *waiting, reason string) slack.ViewSubmissionResponse {
		t.Helper()
		resp, err := w.fake.PostInteraction(t.Context(), w.url, w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
			User: approverA, CallbackID: CallbackDenyReason, PrivateMetadata: wa.reasonForm(),
			Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: reason}},
		}))
		if err != nil {
			t.Fatal(err)
		}
		var got slack.ViewSubmissionResponse
		_ = json.NewDecoder(resp.Body).Decode(&got)
		return got
	}

	t.Run("after someone else decided", func(t *testing.T) {
		wa := w.ask(bashRequest("run-late-reason", "sess-1", "ls"))
		w.click(wa, approverB, ActionApprove)
		wa.result(t)
		got := submit(wa, "too risky")
		if msg := got.Errors[BlockDenyReason]; !strings.Contains(msg, "approved by "+approverB) || strings.Contains(msg, "<@") {
			t.Fatalf("modal error %q; want plain text naming who decided", msg)
		}
	})
	t.Run("a huge reason is capped", func(t *testing.T) {
		wa := w.ask(bashRequest("run-long-reason", "sess-1", "ls"))
		if got := submit(wa, strings.Repeat("x", 10*MaxDenyReason)); got.ResponseAction != "" {
			t.Fatalf("answer %+v", got)
		}
		a := wa.result(t)
		if n := len([]rune(a.DecisionReason)); a.Status != pending.Status(pending.Denied) || n > MaxDenyReason+1 {
			t.Fatalf("got %s with a %d-character reason", a.Status, n)
		}
	})
}

// When Slack cannot say who is in the approver group, the click is refused
// (fail closed) and the clicker is told it was the check that failed.
func TestApproverCheckFailureRefusesClick(t *testing.T) {
	w := newWorld(t, worldOptions{})
	grouped, err := NewApprovers(ApproversConfig{Groups: []string{"SOPS"}, API: w.api})
	if err != nil {
		t.Fatal(err)
	}
	w.fake.SetUserGroup("SOPS", approverA)
	w.fake.FailNext("usergroups.users.list", 1, fakeslack.FailMode{Status: http.StatusInternalServerError})
	w.inter.cfg.Approvers = grouped
	wa := w.ask(bashRequest("run-groupfail", "sess-1", "ls"))
	w.click(wa, approverA, ActionApprove)
	if told := w.waitEphemeral(approverA); !strings.Contains(told.Text, "could not check") {
		t.Fatalf("told %q", told.Text)
	}
	if a, _ := w.asks.Get(t.Context(), wa.id); a.Status != pending.StatusPending {
		t.Fatalf("ask is %s after a click whose approver check failed", a.Status)
	}
	// Slack is back (and the failure back-off has passed for a new set).
	w.inter.cfg.Approvers, _ = NewApprovers(ApproversConfig{Groups: []string{"SOPS"}, API: w.api})
	w.click(wa, approverA, ActionApprove)
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) {
		t.Fatalf("got %s", got.Status)
	}
}
