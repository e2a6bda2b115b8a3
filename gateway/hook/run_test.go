package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const codexEvent = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`

// hookRunResult is what one Run wrote and returned.
type hookRunResult struct {
	code        int
	out, errOut string
}

// runHookWithin runs h on a goroutine and returns its result, failing if
// it never returns (liveness only: the bound is not measured here).
func runHookWithin(t *testing.T, h Run) hookRunResult {
	t.Helper()
	var out, errOut bytes.Buffer
	h.Out, h.Err = &out, &errOut
	got := make(chan int, 1)
	go func() { got <- h.Answer(t.Context()) }()
	select {
	case code := <-got:
		return hookRunResult{code, out.String(), errOut.String()}
	case <-time.After(60 * time.Second): // liveness only
		t.Fatal("the hook never answered")
		return hookRunResult{}
	}
}

// A hook answers by its bound whatever hangs under it: askops that never
// opens (a store that will not connect, ignoring its context) is a deny,
// exit 0; an agent that never writes the event is exit 2 (a block).
func TestHookRunAnswersWhateverHangs(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	r := runHookWithin(t, Run{Agent: AgentCodex, In: strings.NewReader(codexEvent), Start: time.Now(), Timeout: time.Second,
		Open: func(context.Context) (Settler, func(), error) { <-hang; return Unavailable{}, func() {}, nil }})
	if r.code != ExitAnswered || !strings.Contains(r.out, `"behavior":"deny"`) || !strings.Contains(r.out, "askops did not answer within") {
		t.Errorf("askops never opening: exit %d\nstdout %s\nstderr %s", r.code, r.out, r.errOut)
	}

	silent, agent := io.Pipe() // never written to until the test ends
	defer agent.Close()
	r = runHookWithin(t, Run{Agent: AgentCodex, In: silent, Start: time.Now(), Timeout: time.Second, Open: Open(stuck{release: hang})})
	if r.code != ExitUnreadable || r.out != "" || !strings.Contains(r.errOut, "no event on stdin") {
		t.Errorf("no event: exit %d\nstdout %s\nstderr %s", r.code, r.out, r.errOut)
	}
}

// recording is a Settler that records the Call it was given and denies it.
type recording struct {
	mu sync.Mutex
	c  Call
}

func (r *recording) Settle(_ context.Context, c Call) Ask {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c = c
	return Ask{Status: denied, DecidedBy: "test"}
}

// The hook's timeout runs from its start: the Ask is opened for what is
// left of it, and not at all when less than a second is left (opening
// askops took it all).
func TestHookRunCountsItsTimeoutFromItsStart(t *testing.T) {
	rec := &recording{}
	r := runHookWithin(t, Run{Agent: AgentCodex, In: strings.NewReader(codexEvent), Start: time.Now(), Timeout: time.Minute, Open: Open(rec)})
	if r.code != ExitAnswered || rec.c.Timeout <= 0 || rec.c.Timeout > time.Minute {
		t.Errorf("exit %d, the Ask's timeout %s, want at most the minute left of the hook's", r.code, rec.c.Timeout)
	}

	rec = &recording{}
	r = runHookWithin(t, Run{Agent: AgentCodex, In: strings.NewReader(codexEvent), Start: time.Now().Add(-time.Minute), Timeout: time.Minute, Open: Open(rec)})
	if r.code != ExitAnswered || !strings.Contains(r.out, "askops took too long to start") || rec.c.Tool != "" {
		t.Errorf("no time left: exit %d, stdout %s, the Settler got %+v", r.code, r.out, rec.c)
	}
}

// A Client that gives up at its deadline and finds the Ask decided by the
// time its DELETE arrives (409) answers with that decision: an approval
// that got there first runs, as the record says it was approved.
func TestClientLateDecisionIsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := time.Now().Add(time.Second)
		switch r.Method {
		case http.MethodPost:
			writeJSON(w, http.StatusCreated, Ask{ID: "ask_late", Status: "pending", Deadline: &d})
		case http.MethodGet: // the serve is late with the expiry: the poll hangs
			<-r.Context().Done()
		case http.MethodDelete:
			writeJSON(w, http.StatusConflict, map[string]any{"error": "the ask has already ended",
				"ask": Ask{ID: "ask_late", Status: approved, DecidedBy: "ana"}})
		}
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "t"}
	a := c.Settle(t.Context(), Call{SessionID: "s", Tool: "Bash", Input: []byte(`{"command":"make deploy"}`), Timeout: time.Second})
	if a.Status != approved || a.DecidedBy != "ana" {
		t.Errorf("got %s by %q (%q), want the approval that got there first", a.Status, a.DecidedBy, a.Reason)
	}
}

// writeJSON answers as the serve's API does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
