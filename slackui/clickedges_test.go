package slackui

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/storeerr"
	"github.com/askops/askops/pending"
)

// The signature check's edges, each against the real handler.
func TestSignatureEdges(t *testing.T) {
	const secret = "s3cret"
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	good := Sign(secret, ts, body)
	at := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }

	type hdr = [][2]string
	tests := []struct {
		name    string
		body    []byte
		headers hdr
		want    int
		reached []byte // the body the handler must see, when 200
	}{
		{"inside window 4m59s old", body, hdr{{"ts", at(-299 * time.Second)}, {"sig", Sign(secret, at(-299*time.Second), body)}}, 200, body},
		{"edge 5m0s old", body, hdr{{"ts", at(-300 * time.Second)}, {"sig", Sign(secret, at(-300*time.Second), body)}}, 200, body},
		{"just outside 5m1s old", body, hdr{{"ts", at(-301 * time.Second)}, {"sig", Sign(secret, at(-301*time.Second), body)}}, 401, nil},
		{"4m59s in the future", body, hdr{{"ts", at(299 * time.Second)}, {"sig", Sign(secret, at(299*time.Second), body)}}, 200, body},
		{"5m1s in the future", body, hdr{{"ts", at(301 * time.Second)}, {"sig", Sign(secret, at(301*time.Second), body)}}, 401, nil},
		{"negative", body, hdr{{"ts", "-" + ts}, {"sig", Sign(secret, "-"+ts, body)}}, 401, nil},
		{"zero", body, hdr{{"ts", "0"}, {"sig", Sign(secret, "0", body)}}, 401, nil},
		{"non-numeric", body, hdr{{"ts", "abc"}, {"sig", Sign(secret, "abc", body)}}, 401, nil},
		{"float", body, hdr{{"ts", ts + ".5"}, {"sig", Sign(secret, ts+".5", body)}}, 401, nil},
		{"huge", body, hdr{{"ts", "99999999999999999999"}, {"sig", Sign(secret, "99999999999999999999", body)}}, 401, nil},
		// A leading zero or plus is signed as sent: only the secret's holder
		// can make one, and it names the same second.
		{"leading zero, signed so", body, hdr{{"ts", "0" + ts}, {"sig", Sign(secret, "0"+ts, body)}}, 200, body},
		{"leading zero, signature of the plain ts", body, hdr{{"ts", "0" + ts}, {"sig", good}}, 401, nil},
		{"plus sign, signature of the plain ts", body, hdr{{"ts", "+" + ts}, {"sig", good}}, 401, nil},
		{"whitespace, signature of the plain ts", body, hdr{{"ts", " " + ts + " "}, {"sig", good}}, 200, body}, // net/http trims header values
		{"upper-case hex", body, hdr{{"ts", ts}, {"sig", "v0=" + strings.ToUpper(good[3:])}}, 200, body},
		{"V0= prefix", body, hdr{{"ts", ts}, {"sig", "V0=" + good[3:]}}, 401, nil},
		{"v0 plus a v1 entry", body, hdr{{"ts", ts}, {"sig", good + ",v1=00"}}, 401, nil},
		{"truncated signature", body, hdr{{"ts", ts}, {"sig", good[:40]}}, 401, nil},
		{"empty v0", body, hdr{{"ts", ts}, {"sig", "v0="}}, 401, nil},
		{"bad signature header first, good second", body, hdr{{"ts", ts}, {"sig", "v0=00"}, {"sig", good}}, 401, nil},
		{"good signature header first, bad second", body, hdr{{"ts", ts}, {"sig", good}, {"sig", "v0=00"}}, 200, body},
		{"stale ts first, fresh second (signed over fresh)", body, hdr{{"ts", at(-time.Hour)}, {"ts", ts}, {"sig", good}}, 401, nil},
		{"fresh ts first, stale second (signed over stale)", body, hdr{{"ts", ts}, {"ts", at(-time.Hour)}, {"sig", Sign(secret, at(-time.Hour), body)}}, 401, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reached []byte
			h := Verified(secret, func() time.Time { return now }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached, _ = io.ReadAll(r.Body)
			}))
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/slack/interactions", bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, kv := range tt.headers {
				name := map[string]string{"ts": "X-Slack-Request-Timestamp", "sig": "X-Slack-Signature"}[kv[0]]
				req.Header.Add(name, kv[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want != 200 && reached != nil {
				t.Fatal("handler reached")
			}
			if tt.want == 200 && !bytes.Equal(reached, tt.reached) {
				t.Fatalf("handler got %q", reached)
			}
		})
	}
}

// Bodies that a signature covers but a parser might read
// differently, through the whole interactions endpoint.
func TestSignedBodyTricksDecideNothing(t *testing.T) {
	w := newWorld(t, worldOptions{})
	a := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	b := w.ask(bashRequest("run-b", "sess-b", "make release"))
	payloadA := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: stranger, Channel: a.channel, MessageTS: a.ts, ActionID: ActionApprove, Value: a.id})
	payloadB := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: approverA, Channel: b.channel, MessageTS: b.ts, ActionID: ActionApprove, Value: b.id})

	post := func(body []byte, header http.Header) int {
		t.Helper()
		resp, err := w.fake.PostSigned(t.Context(), w.url, "application/x-www-form-urlencoded", body, fakeslack.SignOptions{Header: header})
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	// Two payload fields: the first is the one parsed (a stranger's); the
	// approver's second must not decide B.
	two := []byte(url.Values{"payload": {string(payloadA)}}.Encode() + "&" + url.Values{"payload": {string(payloadB)}}.Encode())
	post(two, nil)
	// A payload in the query string is never read.
	if _, err := w.fake.PostSigned(t.Context(), w.url+"?"+url.Values{"payload": {string(payloadB)}}.Encode(), "application/x-www-form-urlencoded",
		[]byte(url.Values{"payload": {string(payloadA)}}.Encode()), fakeslack.SignOptions{}); err != nil {
		t.Fatal(err)
	}
	// gzip: signed over the compressed bytes, never inflated, so no
	// payload is found.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(url.Values{"payload": {string(payloadB)}}.Encode()))
	zw.Close()
	if code := post(gz.Bytes(), http.Header{"Content-Encoding": {"gzip"}}); code != http.StatusBadRequest {
		t.Errorf("gzip body answered %d, want 400", code)
	}
	// Percent-encoding: a key spelled %70ayload is "payload" once decoded
	// (Slack never sends it, but it is signed): the stranger's click.
	post([]byte("%70ayload="+url.QueryEscape(string(payloadA))), nil)
	// Every one of them was a stranger's click at most: each told so.
	if _, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 3, func(c fakeslack.Call) bool { return c.User == stranger }); err != nil {
		t.Fatal(err)
	}
	w.stillPending("sess-a", a, b)
	w.stillPending("sess-b")
}

// The same signed click, delivered twice (Slack's retry or a
// replay inside the window), decides once and says so.
func TestReplayedClickDecidesOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	payload := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: approverA, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id})
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	// One signature over one timestamp, as a replay carries: signing at
	// one time.Now and sending another failed whenever a second ticked
	// over between them (a loaded machine).
	at := time.Now()
	sig := w.fake.Sign(body, at)
	for range 3 {
		resp, err := w.fake.PostSigned(t.Context(), w.url, "application/x-www-form-urlencoded", body, fakeslack.SignOptions{Signature: sig, Timestamp: at})
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || len(rb) != 0 {
			t.Fatalf("replay answered %d %q", resp.StatusCode, rb)
		}
	}
	got := wa.result(t)
	if got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverA {
		t.Fatalf("%s by %s", got.Status, got.DecidedBy)
	}
	eph, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eph {
		if !strings.Contains(e.Text, "pproved") || !strings.Contains(e.Text, approverA) {
			t.Errorf("replay told %q", e.Text)
		}
	}
	events, _ := w.clicks.Audit(t.Context(), 0)
	n := 0
	for _, e := range events {
		if e.AskID == wa.id && e.Kind == pending.EventDecided {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d decided events", n)
	}
}

// Approve and Deny by two approvers at the same instant:
// exactly one wins, the other is told who.
func TestApproveDenyRaceOneWins(t *testing.T) {
	// A subtest per round: each world is gone before the next starts, so
	// one round's leak check does not see another's live connections.
	for round := range 5 {
		t.Run("round "+strconv.Itoa(round), func(t *testing.T) {
			w := newWorld(t, worldOptions{})
			wa := w.ask(bashRequest("run-"+strconv.Itoa(round), "sess-a", "make deploy"))
			pa := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: approverA, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id})
			pb := w.fake.BlockActionsPayload(fakeslack.BlockActions{User: approverB, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionDeny, Value: wa.id})
			var wg sync.WaitGroup
			for _, p := range [][]byte{pa, pb} {
				wg.Go(func() {
					resp, err := w.fake.PostInteraction(context.Background(), w.url, p)
					if err != nil || resp.StatusCode != 200 {
						t.Errorf("click: %v %v", resp, err)
					}
				})
			}
			wg.Wait()
			got := wa.result(t)
			loser := approverA
			if got.DecidedBy == approverA {
				loser = approverB
			}
			told := w.waitEphemeral(loser)
			if !strings.Contains(told.Text, got.DecidedBy) {
				t.Fatalf("loser %s told %q; winner %s (%s)", loser, told.Text, got.DecidedBy, got.Status)
			}
			if len(w.ephemeralsTo(got.DecidedBy)) != 0 {
				t.Fatalf("winner told %v", w.ephemeralsTo(got.DecidedBy))
			}
		})
	}
}

// The run's starter (self-approval off, another approver there), a
// stranger and a click naming nobody approve nothing; the starter may deny.
func TestStarterAndStrangersCannotApprove(t *testing.T) {
	w := newWorld(t, worldOptions{})
	// The run's starter, an approver, approving their own run's Ask.
	req := bashRequest("run-self", "sess-self", "make deploy")
	req.StartedBy = approverA
	self := w.ask(req)
	clickOK(t, w.click(self, approverA, ActionApprove))
	if told := w.waitEphemeral(approverA); !strings.Contains(told.Text, "You started this run") {
		t.Fatalf("self-approver told %q", told.Text)
	}
	clickOK(t, w.click(self, approverA, ActionApproveSession))
	clickOK(t, w.click(self, stranger, ActionApprove))
	clickOK(t, w.click(self, stranger, ActionDeny))
	clickOK(t, w.click(self, "", ActionApprove))
	if _, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 4, nil); err != nil {
		t.Fatal(err)
	}
	w.stillPending("sess-self", self)
	// Self-deny is allowed.
	clickOK(t, w.click(self, approverA, ActionDeny))
	if got := self.result(t); got.Status != pending.Status(pending.Denied) {
		t.Fatalf("self deny: %s", got.Status)
	}
}

// A quorum Ask offers no session approval; its buttons are
// refused whoever clicks.
func TestQuorumRefusesSessionButtons(t *testing.T) {
	w := newWorld(t, worldOptions{grantDurations: []time.Duration{15 * time.Minute}})
	wa := w.ask(quorumRequest())
	for _, act := range []string{ActionApproveSession, ApproveForAction(15 * time.Minute), ApproveForAction(time.Hour), "askops_approve_for_0", "askops_approve_for_-60"} {
		clickOK(t, w.click(wa, approverA, act))
	}
	told, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 3, func(c fakeslack.Call) bool { return c.User == approverA })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range told {
		if !strings.Contains(c.Text, "was not offered") {
			t.Errorf("told %q", c.Text)
		}
	}
	w.stillPending("", wa)
	a, _ := w.asks.Get(t.Context(), wa.id)
	if a.Votes != "" {
		t.Fatalf("votes %q", a.Votes)
	}
}

// downStore fails every read and write, as a store whose Redis is gone.
type downStore struct {
	pending.Store
	down bool
	mu   sync.Mutex
}

var errDown = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}

func (d *downStore) isDown() bool { d.mu.Lock(); defer d.mu.Unlock(); return d.down }

func (d *downStore) Get(ctx context.Context, id string) (pending.Ask, error) {
	if d.isDown() {
		return pending.Ask{}, errDown
	}
	return d.Store.Get(ctx, id)
}

func (d *downStore) Cast(ctx context.Context, id string, b pending.Ballot) (pending.Ask, error) {
	if d.isDown() {
		return pending.Ask{}, errDown
	}
	return d.Store.Cast(ctx, id, b)
}

func (d *downStore) Decide(ctx context.Context, id string, o pending.Outcome, by, reason string) (pending.Ask, error) {
	if d.isDown() {
		return pending.Ask{}, errDown
	}
	return d.Store.Decide(ctx, id, o, by, reason)
}

// A click while the store is down approves nothing and says so.
func TestClickWhileStoreDown(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	ds := &downStore{Store: w.clicks, down: true}
	approvers := testApprovers(t)
	inter := NewInteractions(InteractionsConfig{
		Asks: ds, Notifier: w.notifier, Approvers: approvers, API: w.api, Logger: testLog(t),
		Decider: testDecider(t, ds, w.notifier, approvers, approval.SelfApproval{}),
	})
	w.url = serveInteractions(t, w.fake.SigningSecret(), inter) + "/slack/interactions"
	for _, act := range []string{ActionApprove, ActionApproveSession, ActionDeny, ActionDenyReason} {
		clickOK(t, w.click(wa, approverA, act))
	}
	eph, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eph {
		t.Logf("told %q", e.Text)
		if !strings.Contains(e.Text, "could not") {
			t.Errorf("told %q", e.Text)
		}
	}
	w.stillPending("sess-a", wa)
}

// slowReplies is a TCP proxy to a Redis that forwards every command at
// once but, while slow is set, holds each reply for delay: a Redis that
// does the work and answers late (a busy server, a congested link).
type slowReplies struct {
	ln    net.Listener
	to    string
	delay time.Duration
	slow  atomic.Bool
}

func startSlowReplies(t *testing.T, to string, delay time.Duration) *slowReplies {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowReplies{ln: ln, to: to, delay: delay}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			conns.Add(2)
			go func() { defer conns.Done(); io.Copy(s, c); s.Close() }()
			go func() {
				defer conns.Done()
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						if p.slow.Load() {
							time.Sleep(p.delay)
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							s.Close()
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *slowReplies) url() string { return "redis://" + p.ln.Addr().String() + "/0" }

// A click whose vote Redis records but answers too late for the
// click's deadline: the clicker must not be told that nothing changed
// while the Ask stands approved.
func TestClickStoreAnswersLate(t *testing.T) {
	w := newWorld(t, worldOptions{redis: true})
	// The world's click store is replaced by one reaching the same Redis
	// through the slow proxy.
	wa := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	srvURL := w.redisURL
	proxy := startSlowReplies(t, strings.TrimSuffix(strings.TrimPrefix(srvURL, "redis://"), "/0"), 2500*time.Millisecond)
	clicks, _ := redisAsks(t, proxy.url(), pending.Options{Logger: testLog(t)})
	approvers := testApprovers(t)
	inter := NewInteractions(InteractionsConfig{
		Asks: clicks, Notifier: w.notifier, Approvers: approvers, API: w.api, Logger: testLog(t),
		Decider: testDecider(t, clicks, w.notifier, approvers, approval.SelfApproval{}),
	})
	w.url = serveInteractions(t, w.fake.SigningSecret(), inter) + "/slack/interactions"
	// Warm the pool: a fresh connection's handshake would wait on the
	// slow reply before the vote is even sent.
	// A vote on another Ask loads the vote script, as any earlier click
	// of a running replica has.
	if _, err := clicks.Get(t.Context(), wa.id); err != nil {
		t.Fatal(err)
	}
	other := w.ask(bashRequest("run-b", "sess-b", "make other"))
	if _, err := clicks.Cast(t.Context(), other.id, pending.Ballot{Outcome: pending.Denied, By: approverB, Person: approverB}); err != nil {
		t.Fatal(err)
	}
	proxy.slow.Store(true)
	clickOK(t, w.click(wa, approverA, ActionApprove))
	told := w.waitEphemeral(approverA)
	got := wa.result(t) // the vote landed: the agent goes on
	proxy.slow.Store(false)
	if got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverA {
		t.Fatalf("Ask %s by %q; the vote was expected to land", got.Status, got.DecidedBy)
	}
	if strings.Contains(told.Text, "nothing changed") || !strings.Contains(told.Text, "may or may not have been recorded") {
		t.Fatalf("the Ask was approved by %s, but the clicker was told %q", got.DecidedBy, told.Text)
	}
	// Once the store answers again, the clicker learns that it stood.
	after, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 2, func(c fakeslack.Call) bool { return c.User == approverA })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after[1].Text, "your decision was recorded after all") || !strings.Contains(after[1].Text, "approved by you") {
		t.Fatalf("told afterwards %q", after[1].Text)
	}
}

// castTimesOut is a store whose votes time out without being recorded.
type castTimesOut struct{ pending.Store }

func (castTimesOut) Cast(context.Context, string, pending.Ballot) (pending.Ask, error) {
	return pending.Ask{}, &storeerr.Error{Store: "pending", Code: pending.CodeUnavailable, Op: "cast", Msg: "store unreachable", Err: context.DeadlineExceeded}
}

// A vote whose answer timed out and which did not land: the clicker is
// told it is unknown, then that it was not recorded (a refused
// connection is told plainly that nothing changed: TestClickWhileStoreDown).
func TestUnconfirmedVoteRechecked(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	approvers := testApprovers(t)
	st := castTimesOut{w.clicks}
	inter := NewInteractions(InteractionsConfig{
		Asks: st, Notifier: w.notifier, Approvers: approvers, API: w.api, Logger: testLog(t),
		Decider: testDecider(t, st, w.notifier, approvers, approval.SelfApproval{}),
	})
	w.url = serveInteractions(t, w.fake.SigningSecret(), inter) + "/slack/interactions"
	clickOK(t, w.click(wa, approverA, ActionApprove))
	told, err := w.fake.WaitForCalls(t.Context(), "chat.postEphemeral", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(told[0].Text, "may or may not have been recorded") || !strings.Contains(told[1].Text, "your click was not recorded, and the request is still open") {
		t.Fatalf("told %q then %q", told[0].Text, told[1].Text)
	}
	w.stillPending("sess-a", wa)

	// The deny-reason form, likewise, is not told it changed nothing.
	resp, err := w.fake.PostInteraction(t.Context(), w.url, w.fake.ViewSubmissionPayload(fakeslack.ViewSubmission{
		User: approverA, CallbackID: CallbackDenyReason, PrivateMetadata: wa.reasonForm(),
		Values: map[string]map[string]string{BlockDenyReason: {ActionDenyReasonInput: "no"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var form slack.ViewSubmissionResponse
	if err := json.NewDecoder(resp.Body).Decode(&form); err != nil {
		t.Fatal(err)
	}
	if form.ResponseAction != slack.RAErrors || !strings.Contains(form.Errors[BlockDenyReason], "may or may not have been recorded") {
		t.Fatalf("form answered %+v", form)
	}
}

// A click after the Ask's deadline (before anything swept it) or after
// its run stopped decides nothing and says how it ended.
func TestClickAfterDeadlineOrCancel(t *testing.T) {
	verifyNoLeaks(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	never := make(chan time.Time)
	st := pending.NewMemoryStore(pending.Options{Now: clock, After: func(time.Duration) <-chan time.Time { return never }})
	t.Cleanup(func() { st.Close() })
	fake := fakeslack.New(t, fakeslack.Options{SigningSecret: "test-secret"})
	api := fakeAPI(fake)
	notifier := NewNotifier(api, NotifierConfig{ApprovalChannel: approvals, Logger: testLog(t)})
	approvers := testApprovers(t)
	inter := NewInteractions(InteractionsConfig{
		Asks: st, Notifier: notifier, Approvers: approvers, API: api, Logger: testLog(t),
		Decider: testDecider(t, st, notifier, approvers, approval.SelfApproval{}),
	})
	target := serveInteractions(t, fake.SigningSecret(), inter) + "/slack/interactions"
	click := func(id, ts, user, action string) {
		t.Helper()
		resp, err := fake.PostInteraction(t.Context(), target, fake.BlockActionsPayload(fakeslack.BlockActions{
			User: user, Channel: approvals, MessageTS: ts, ActionID: action, Value: id}))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("click: %v %v", resp, err)
		}
	}

	late, err := st.Create(t.Context(), bashRequest("run-late", "sess-late", "make deploy"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetMessage(t.Context(), late.ID, approvals, "100.000001"); err != nil {
		t.Fatal(err)
	}
	stopped, err := st.Create(t.Context(), bashRequest("run-stop", "sess-stop", "make release"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetMessage(t.Context(), stopped.ID, approvals, "100.000002"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(t.Context())
	cancel()
	if a, _ := st.Wait(cctx, stopped.ID); a.Status != pending.Status(pending.Cancelled) {
		t.Fatalf("stopped: %s", a.Status)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()

	click(late.ID, "100.000001", approverA, ActionApprove)
	click(late.ID, "100.000001", approverB, ActionDeny)
	click(stopped.ID, "100.000002", approverA, ActionApprove)
	told, err := fake.WaitForCalls(t.Context(), "chat.postEphemeral", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range told {
		t.Logf("%s told %q", c.User, c.Text)
		if !strings.Contains(c.Text, "did not run") {
			t.Errorf("%s told %q", c.User, c.Text)
		}
	}
	for _, id := range []string{late.ID, stopped.ID} {
		a, _ := st.Get(t.Context(), id)
		if o, _ := a.Outcome(); o.Approves() || a.DecidedBy != "" {
			t.Fatalf("ask %s: %s by %q", id, a.Status, a.DecidedBy)
		}
	}
}

// A click signed for this app but from another workspace (a Slack Connect
// member of a shared channel, or a payload retagged so) is refused by the
// team Slack names for the clicker (user.team_id), whatever its user id:
// an approver's id with another home team decides nothing either. The
// payload's team object (where the click happened) is not what counts.
func TestClickFromAnotherWorkspace(t *testing.T) {
	w := newWorld(t, worldOptions{})
	wa := w.ask(bashRequest("run-a", "sess-a", "make deploy"))
	retag := func(user, userTeam, team string) []byte {
		var p map[string]any
		if err := json.Unmarshal(w.fake.BlockActionsPayload(fakeslack.BlockActions{User: user, Channel: wa.channel, MessageTS: wa.ts, ActionID: ActionApprove, Value: wa.id}), &p); err != nil {
			t.Fatal(err)
		}
		p["team"] = map[string]any{"id": team, "domain": "elsewhere"}
		p["user"].(map[string]any)["team_id"] = userTeam
		js, _ := json.Marshal(p)
		return js
	}
	post := func(payload []byte) {
		t.Helper()
		resp, err := w.fake.PostInteraction(t.Context(), w.url, payload)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		resp.Body.Close()
	}
	post(retag("UEXTERNAL1", "TOTHERORG", "TOTHERORG"))
	if told := w.waitEphemeral("UEXTERNAL1"); told.Text != OutsiderText {
		t.Fatalf("external user told %q", told.Text)
	}
	post(retag(approverA, "TOTHERORG", w.fake.TeamID())) // clicked in askops' workspace, from another team
	if told := w.waitEphemeral(approverA); told.Text != OutsiderText {
		t.Fatalf("an approver's id of another team told %q", told.Text)
	}
	w.stillPending("sess-a", wa)
	post(retag(approverA, w.fake.TeamID(), "TOTHERORG")) // the team object does not decide it
	if got := wa.result(t); got.Status != pending.Status(pending.Approved) || got.DecidedBy != approverA {
		t.Fatalf("the approver of askops' own team: %s by %s", got.Status, got.DecidedBy)
	}
}

// A member removed from an approver group keeps deciding until the
// cached member list is refreshed (approvals' group cache, 5 min; longer
// while Slack fails to answer usergroups.users.list).
func TestRemovedGroupMemberWithinRefresh(t *testing.T) {
	w := newWorld(t, worldOptions{})
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	w.fake.SetUserGroup("SAPPROVERS", "UMEMBER01")
	approvers, err := NewApprovers(ApproversConfig{Groups: []string{"SAPPROVERS"}, API: w.api, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	w.serveClicks(approvers, testLog(t))
	first := w.ask(bashRequest("run-1", "sess-1", "make one"))
	clickOK(t, w.click(first, "UMEMBER01", ActionApprove))
	if got := first.result(t); got.DecidedBy != "UMEMBER01" {
		t.Fatalf("member: %s by %s", got.Status, got.DecidedBy)
	}
	w.fake.SetUserGroup("SAPPROVERS") // removed
	advance(4 * time.Minute)
	second := w.ask(bashRequest("run-2", "sess-2", "make two"))
	clickOK(t, w.click(second, "UMEMBER01", ActionApprove))
	select {
	case got := <-second.done:
		second.done <- got
		t.Logf("removed member 4 min later: %s by %s", got.Status, got.DecidedBy)
	case <-time.After(2 * time.Second):
		t.Logf("removed member 4 min later: refused")
	}
	advance(2 * time.Minute)
	third := w.ask(bashRequest("run-3", "sess-3", "make three"))
	clickOK(t, w.click(third, "UMEMBER01", ActionApprove))
	if told := w.waitEphemeral("UMEMBER01"); !strings.Contains(told.Text, "not one of the approvers") {
		t.Fatalf("removed member after the refresh told %q", told.Text)
	}
	w.stillPending("sess-3", third)
}
