package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// A serve shutting down (SIGTERM) answers every long poll at once with the
// Ask cancelled — its real status, never pending — so each waiting hook
// denies now instead of polling a serve that is going away until its
// deadline; the Ask's record and message say it was cancelled.
func TestLongPollAnswersCancelledAtShutdown(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			o := stackOptions{timeout: 10 * time.Minute}
			if store == "redis" {
				o.redis = testRedis(t)
			}
			longPollAtShutdown(t, newStack(t, o))
		})
	}
}

// testRedis is a client of a fresh redis-server.
func testRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	r := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	return client
}

func longPollAtShutdown(t *testing.T, s *stack) {
	srv := apiServer(t, s)
	// The stop must find the hook in its long poll: one caught between
	// the POST and its first poll meets a closed port and retries until
	// its deadline (docs/gateway.md says so), which is not this test's case.
	polling := make(chan struct{})
	var once sync.Once
	api := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("wait") != "" {
			once.Do(func() { close(polling) })
		}
		api.ServeHTTP(w, r)
	})
	got := make(chan pending.Ask, 1)
	go func() {
		c := &hook.Client{BaseURL: srv.URL, Token: askToken}
		got <- AskOf(c.Settle(t.Context(), hook.Call{SessionID: "s", Agent: hook.AgentCodex, Tool: "Bash", Input: json.RawMessage(`{"command":"make deploy"}`)}))
	}()
	posted := s.posted(t, t.Context())
	select {
	case <-polling:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook never long polled")
	}
	s.svc.Stop()
	srv.Close() // as serve does: the waits answer, then the HTTP server drains and closes
	var a pending.Ask
	select {
	case a = <-got:
	case <-time.After(30 * time.Second): // liveness only
		t.Fatal("the hook kept waiting after its serve stopped")
	}
	if o, _ := a.Outcome(); o != pending.Cancelled || !strings.Contains(a.DecisionReason, "shutting down") {
		t.Errorf("the hook got %s (%q), want cancelled: shutting down", a.Status, a.DecisionReason)
	}
	rec, err := s.asks.Get(t.Context(), posted.ID)
	if err != nil || rec.Status != pending.Status(pending.Cancelled) {
		t.Errorf("record: %s %v", rec.Status, err)
	}
	testwait.For(t, "the decided Ask's message to lose its buttons", func() bool {
		m, ok := s.slack.Message(posted.Channel, posted.MessageTS)
		return ok && m.Updates > 0 && !strings.Contains(string(m.RawBlocks), `"actions"`)
	})
}

// An Ask lives only while its asker waits. An API client that dies while
// it long polls (kill -9: no DELETE, its connection just drops), or
// Claude Code's HTTP hook whose connection drops, leaves an Ask that ends
// cancelled, "the agent stopped waiting"; its message loses its buttons
// and a decision after that is refused with the reason.
func TestAskEndsWhenItsAskerIsGone(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		for _, door := range []string{"long poll", "http hook"} {
			t.Run(store+"/"+door, func(t *testing.T) {
				o := stackOptions{timeout: 10 * time.Minute, leaseTTL: 300 * time.Millisecond}
				if store == "redis" {
					o.redis = testRedis(t)
				}
				s := newStack(t, o)
				askerGone(t, s, apiServer(t, s), door)
			})
		}
	}
}

func askerGone(t *testing.T, s *stack, srv *httptest.Server, door string) {
	ctx, kill := context.WithCancel(t.Context())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	asker := &http.Client{Transport: tr}
	polling := make(chan struct{}) // the long poll is on the wire
	send := func(method, path, body string) {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
			if method == "GET" {
				close(polling)
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+askToken)
		if resp, err := asker.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		if door == "http hook" {
			send("POST", "/v1/hooks/claude", `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`)
			return
		}
		r := call(t, "POST", srv.URL+"/v1/asks", askToken, bashAsk("make deploy"))
		if r.Status != http.StatusCreated {
			t.Errorf("create: %d %s", r.Status, r.Raw)
			return
		}
		send("GET", "/v1/asks/"+r.Body["id"].(string)+"?wait=60s", "")
	}()
	posted := s.posted(t, t.Context())
	if door == "long poll" {
		<-polling
	}
	kill() // the asker dies: its connection drops, nothing is sent
	<-asked
	var rec pending.Ask
	testwait.For(t, "the lease sweep to end the gone asker's Ask", func() bool {
		if _, err := s.asks.SweepLeases(t.Context()); err != nil {
			t.Fatal(err)
		}
		rec, _ = s.asks.Get(t.Context(), posted.ID)
		return rec.Status != pending.StatusPending
	})
	endedAskerGone(t, srv.URL, rec)
	testwait.For(t, "the message to say the asker is gone", func() bool {
		m, ok := s.slack.Message(posted.Channel, posted.MessageTS)
		return ok && !strings.Contains(string(m.RawBlocks), `"actions"`) && strings.Contains(string(m.RawBlocks), pending.ReasonAskerGone)
	})
}

// A hook stopped while it waits (the agent's SIGTERM at its timeout) tells
// the serve before it answers: the Ask ends cancelled, "the agent stopped
// waiting". Stopped while its POST is still on the wire, it waits for the
// answer that names the Ask, then cancels that Ask the same way.
func TestClientStoppedTellsTheServe(t *testing.T) {
	for _, when := range []string{"while it polls", "while it posts"} {
		t.Run(when, func(t *testing.T) {
			s := newStack(t, stackOptions{timeout: 10 * time.Minute})
			srv := apiServer(t, s)
			ctx, stop := context.WithCancel(t.Context())
			created := make(chan struct{})
			got := make(chan pending.Ask, 1)
			go func() {
				c := &hook.Client{BaseURL: srv.URL, Token: askToken, Created: func(hook.Ask) { close(created) }}
				got <- AskOf(c.Settle(ctx, hook.Call{SessionID: "s", Agent: hook.AgentCodex, Tool: "Bash", Input: json.RawMessage(`{"command":"make deploy"}`)}))
			}()
			posted := s.posted(t, t.Context()) // the Ask exists; its POST may not have answered yet
			if when == "while it polls" {
				<-created
			}
			stop()
			if a := <-got; a.Status != pending.Status(pending.Cancelled) || !strings.HasPrefix(a.DecisionReason, pending.ReasonAskerGone) {
				t.Errorf("the stopped hook got %s %q", a.Status, a.DecisionReason)
			}
			rec, err := s.asks.Get(t.Context(), posted.ID)
			if err != nil || rec.Status != pending.Status(pending.Cancelled) || rec.DecisionReason != pending.ReasonAskerGone {
				t.Errorf("record: %s %q %v", rec.Status, rec.DecisionReason, err)
			}
		})
	}
}
