package hook

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// frozenListener accepts connections and never reads or answers: a serve
// stopped with SIGSTOP, or a proxy that swallows requests. With accept
// false it never even accepts (the kernel completes the handshake into
// the backlog): a serve whose accept loop is stuck.
func frozenListener(t *testing.T, accept bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var loop sync.WaitGroup
	if accept {
		loop.Go(func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		ln.Close()
		loop.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// frozenAfterCreate takes the Ask (201, deadline in one second) and then
// never answers again: a serve frozen, or a network black-holed, after the
// POST. With headersOnly its long polls get a status line and headers but
// never a body (a proxy that stalls mid-answer).
func frozenAfterCreate(t *testing.T, headersOnly bool) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			d := time.Now().Add(time.Second).UTC()
			writeJSON(w, http.StatusCreated, Ask{ID: "ask_frozen", Status: "pending", Deadline: &d})
			return
		}
		if headersOnly {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL
}

// Whatever the serve or the network does, Settle answers — a refusal —
// instead of hanging past the agent's hook timeout (which lets the call go
// ahead): each request has its own deadline and the whole call ends within
// the Ask's deadline plus the grace.
func TestClientAnswersWhateverTheServeDoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		want string
		why  string
	}{
		{"accepts and never answers", func(t *testing.T) string { return frozenListener(t, true) }, unavailable, "no answer in time"},
		{"never accepts", func(t *testing.T) string { return frozenListener(t, false) }, unavailable, "no answer in time"},
		{"frozen after the POST", func(t *testing.T) string { return frozenAfterCreate(t, false) }, cancelled, ReasonAskerGone},
		{"headers and no body", func(t *testing.T) string { return frozenAfterCreate(t, true) }, cancelled, ReasonAskerGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			c := &Client{BaseURL: tc.url(t), Token: "tok", HTTP: &http.Client{Transport: tr},
				Grace: 2500 * time.Millisecond, RequestTimeout: 500 * time.Millisecond}
			got := make(chan Ask, 1)
			go func() {
				got <- c.Settle(t.Context(), Call{SessionID: "s", Tool: "Bash", Input: json.RawMessage(`{"command":"make deploy"}`), Timeout: time.Second})
			}()
			select {
			case a := <-got:
				if a.Status != tc.want || !strings.Contains(a.Reason, tc.why) {
					t.Errorf("got %s (%q), want %s with %q", a.Status, a.Reason, tc.want, tc.why)
				}
			case <-time.After(30 * time.Second): // liveness only: the bound is seconds
				t.Fatal("Settle did not answer: the hook would hang until the agent kills it")
			}
		})
	}
}

// stuck is a Settler that never returns, whatever its context says: a
// store call that ignores its deadline.
type stuck struct{ release chan struct{} }

func (s stuck) Settle(context.Context, Call) Ask {
	<-s.release
	return Ask{Status: approved}
}

// Bounded refuses a call its Settler does not answer in time, so a hook
// answers before the agent's timeout even when everything under it hangs.
func TestBoundedAnswersAStuckSettler(t *testing.T) {
	s := stuck{release: make(chan struct{})}
	defer close(s.release)
	got := make(chan Ask, 1)
	go func() {
		got <- (Bounded{Next: s, Bound: 100 * time.Millisecond}).Settle(t.Context(), Call{})
	}()
	select {
	case a := <-got:
		if a.Status != unavailable || !strings.Contains(a.Reason, "did not answer within 100ms") {
			t.Errorf("got %s %q", a.Status, a.Reason)
		}
	case <-time.After(30 * time.Second): // liveness only
		t.Fatal("Bounded waited for a Settler that never answers")
	}
}
