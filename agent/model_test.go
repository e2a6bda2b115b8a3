package agent_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/fakeopenai"
)

func TestModelRetries(t *testing.T) {
	now := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		replies   []fakeopenai.Reply
		wantErr   []string // empty: success
		wantCalls int
		wantWaits []time.Duration // nil: do not check (jittered backoff)
	}{
		{name: "429 then success", replies: []fakeopenai.Reply{fakeopenai.RateLimited("3"), fakeopenai.Text("ok")},
			wantCalls: 2, wantWaits: []time.Duration{3 * time.Second}},
		{name: "429 with an HTTP date", replies: []fakeopenai.Reply{
			fakeopenai.RateLimited(now.Add(5 * time.Second).Format(http.TimeFormat)), fakeopenai.Text("ok")},
			wantCalls: 2, wantWaits: []time.Duration{5 * time.Second}},
		{name: "500 then 502 then success", replies: []fakeopenai.Reply{
			fakeopenai.Error(500, "boom"), fakeopenai.Error(502, "bad gateway"), fakeopenai.Text("ok")}, wantCalls: 3},
		{name: "5xx with a non-JSON body", replies: []fakeopenai.Reply{
			{Status: 503, Body: "<html>busy</html>"}, fakeopenai.Text("ok")}, wantCalls: 2},
		{name: "budget used up", replies: []fakeopenai.Reply{
			fakeopenai.RateLimited("1"), fakeopenai.RateLimited("1"), fakeopenai.RateLimited("1"), fakeopenai.Text("too late")},
			wantErr: []string{"after 3 attempt(s)", "429", "retry budget of 3 attempts used up"}, wantCalls: 3},
		{name: "400 is not retried", replies: []fakeopenai.Reply{fakeopenai.Error(400, "bad tools schema"), fakeopenai.Text("no")},
			wantErr: []string{"after 1 attempt(s)", "400", "bad tools schema"}, wantCalls: 1},
		{name: "401 is not retried", replies: []fakeopenai.Reply{fakeopenai.Error(401, "invalid api key")},
			wantErr: []string{"401", "invalid api key"}, wantCalls: 1},
		{name: "Retry-After beyond the limit fails at once", replies: []fakeopenai.Reply{fakeopenai.RateLimited("3600")},
			wantErr: []string{"server asked to retry after 1h0m0s, longer than the 1m0s limit"}, wantCalls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.Start(t, tc.replies...)
			var waits []time.Duration
			m := agent.NewModel(srv.BaseURL(), "k", srv.Client(), agent.RetryOptions{
				MaxAttempts: 3,
				BaseDelay:   time.Millisecond,
				Now:         func() time.Time { return now },
				Wait: func(ctx context.Context, d time.Duration) error {
					waits = append(waits, d)
					return nil
				},
			})
			resp, err := m.Complete(t.Context(), openai.ChatCompletionRequest{Model: "m",
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
			if len(tc.wantErr) == 0 {
				if err != nil || resp.Choices[0].Message.Content != "ok" {
					t.Fatalf("resp = %+v, err = %v", resp, err)
				}
			} else {
				if err == nil {
					t.Fatalf("want an error, got %+v", resp)
				}
				var me *agent.ModelError
				if !errors.As(err, &me) {
					t.Errorf("err %T is not a *ModelError", err)
				}
				mustContain(t, err.Error(), tc.wantErr...)
			}
			if n := len(srv.Requests()); n != tc.wantCalls {
				t.Errorf("requests = %d, want %d", n, tc.wantCalls)
			}
			if tc.wantWaits != nil && !slices.Equal(waits, tc.wantWaits) {
				t.Errorf("waits = %v, want %v", waits, tc.wantWaits)
			}
			if len(waits) != max(0, tc.wantCalls-1) && !strings.Contains(tc.name, "beyond") && !strings.Contains(tc.name, "not retried") {
				t.Errorf("waited %d times for %d calls", len(waits), tc.wantCalls)
			}
		})
	}
}

func TestModelNetworkErrorIsRetriedThenReported(t *testing.T) {
	srv := fakeopenai.New()
	url := srv.BaseURL()
	srv.Close() // nothing listens there any more
	attempts := 0
	m := agent.NewModel(url, "k", nil, agent.RetryOptions{
		MaxAttempts: 4,
		Wait:        func(context.Context, time.Duration) error { attempts++; return nil },
	})
	_, err := m.Complete(t.Context(), openai.ChatCompletionRequest{Model: "m"})
	if err == nil {
		t.Fatal("want an error")
	}
	mustContain(t, err.Error(), "after 4 attempt(s)", "connect")
	if attempts != 3 {
		t.Errorf("waited %d times, want 3", attempts)
	}
}

func TestModelWaitHonoursContext(t *testing.T) {
	srv := fakeopenai.Start(t, fakeopenai.RateLimited("30"), fakeopenai.Text("never"))
	m := agent.NewModel(srv.BaseURL(), "k", srv.Client(), agent.RetryOptions{}) // real timer
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("stop now")
	go func() {
		// Cancel once the first attempt was answered, while the model waits out Retry-After.
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel(stop)
	}()
	_, err := m.Complete(ctx, openai.ChatCompletionRequest{Model: "m"})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the context's cause", err)
	}
}

func TestModelAttemptTimeoutIsRetried(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := fakeopenai.Start(t, fakeopenai.Reply{Hold: hold}, fakeopenai.Text("ok"))
	m := agent.NewModel(srv.BaseURL(), "k", srv.Client(), agent.RetryOptions{
		AttemptTimeout: 50 * time.Millisecond,
		Wait:           func(context.Context, time.Duration) error { return nil },
	})
	resp, err := m.Complete(t.Context(), openai.ChatCompletionRequest{Model: "m"})
	if err != nil || resp.Choices[0].Message.Content != "ok" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

// writeCounter counts the writes made on the connections it dials.
type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A model request of tens of KB (a long run's conversation) leaves in one
// write with ModelTransport; with the default transport's 4 KB buffer it
// takes more, and the server wakes for each.
func TestModelTransportSendsARequestInOneWrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport *http.Transport
		oneWrite  bool
	}{
		{"ModelTransport", agent.ModelTransport(), true},
		{"default transport", http.DefaultTransport.(*http.Transport).Clone(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.Start(t, fakeopenai.Text("ok"))
			var writes atomic.Int64
			dial := (&net.Dialer{}).DialContext
			tc.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				return writeCounter{Conn: c, writes: &writes}, err
			}
			defer tc.transport.CloseIdleConnections()
			m := agent.NewModel(srv.BaseURL(), "key", &http.Client{Transport: tc.transport}, agent.RetryOptions{MaxAttempts: 1})
			long := strings.Repeat("a step of a long conversation; ", 1000) // ~31 KB
			if _, err := m.Complete(t.Context(), openai.ChatCompletionRequest{Model: "fake-model",
				Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: long}}}); err != nil {
				t.Fatal(err)
			}
			if got := writes.Load(); (got == 1) != tc.oneWrite {
				t.Errorf("%d writes for a %d-byte conversation; one write: want %v", got, len(long), tc.oneWrite)
			}
		})
	}
}
