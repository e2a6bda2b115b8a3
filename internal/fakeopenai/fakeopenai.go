// Package fakeopenai is a scripted OpenAI-compatible chat completions server
// for tests. It speaks the real wire format over loopback HTTP (POST
// /v1/chat/completions, GET /v1/models), so the real go-openai client talks to
// it through its BaseURL, and it records every request it was sent so a test
// can assert what the model saw (for example that a denial reason reached it).
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ToolCall is one function call a scripted reply asks for.
type ToolCall struct {
	ID        string // empty: the server leaves it empty (some local servers do)
	Name      string
	Arguments string // raw JSON text, sent as is (so a test can send invalid JSON)
}

// Reply is one scripted answer to a chat completions request.
type Reply struct {
	// A successful answer: assistant text and/or tool calls.
	Content      string
	ToolCalls    []ToolCall
	FinishReason string // default "tool_calls" when there are tool calls, else "stop"

	// An error answer: Status != 0 sends that status with Body (default: an
	// OpenAI-style error object) and, if set, a Retry-After header.
	Status     int
	Body       string
	RetryAfter string

	// Hold, if non-nil, is waited on (or the request's end) before answering,
	// so a test can hold a model call in flight.
	Hold <-chan struct{}
}

// Text returns a Reply with a final assistant answer.
func Text(s string) Reply { return Reply{Content: s} }

// Call returns a Reply asking for the given tool calls.
func Call(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error returns a Reply with an error status and an OpenAI-style error body.
func Error(status int, msg string) Reply {
	return Reply{Status: status, Body: errorBody(msg)}
}

// RateLimited returns a 429 Reply carrying Retry-After.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, RetryAfter: retryAfter, Body: errorBody("rate limit reached")}
}

// ReplyFunc answers request number n (0-based) dynamically; it is used once the
// scripted replies are used up.
type ReplyFunc func(n int, req openai.ChatCompletionRequest) Reply

// Request is one recorded chat completions request.
type Request struct {
	Body          openai.ChatCompletionRequest
	Raw           []byte
	Authorization string
	// Received is when the whole request had arrived, before the fake
	// decoded it: the end of a client's sending, which benchmarks time
	// (decoding a long conversation is the model's work, not the client's).
	Received time.Time
}

// Server is a running fake. Close it when done (Start does it for you).
type Server struct {
	srv    *httptest.Server
	models []string

	mu       sync.Mutex
	script   []Reply
	fallback ReplyFunc
	requests []Request
}

// New starts a server answering with replies in order. When they are used
// up, it answers 500 "script exhausted" so a test that over-calls fails loudly.
func New(replies ...Reply) *Server {
	s := &Server{script: replies, models: []string{"fake-model"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = httptest.NewServer(mux)
	return s
}

// Start is New with t.Cleanup(Close).
func Start(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := New(replies...)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// BaseURL is the value for openai.ClientConfig.BaseURL (ends in /v1).
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Client returns an HTTP client for the server (loopback, no proxy).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Then answers every request after the script with f.
func (s *Server) Then(f ReplyFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// Requests returns the chat completions requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Request returns request number n (0-based, as a ReplyFunc is told), and
// false if there is none.
func (s *Server) Request(n int) (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n >= len(s.requests) {
		return Request{}, false
	}
	return s.requests[n], true
}

// Last returns the most recent request, and false if there was none.
func (s *Server) Last() (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1], true
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	received := time.Now()
	var body openai.ChatCompletionRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		writeStatus(w, http.StatusBadRequest, errorBody("fakeopenai: bad request body: "+err.Error()))
		return
	}

	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Body: body, Raw: raw, Authorization: r.Header.Get("Authorization"), Received: received})
	var reply Reply
	switch {
	case len(s.script) > 0:
		reply, s.script = s.script[0], s.script[1:]
	case s.fallback != nil:
		f := s.fallback
		s.mu.Unlock()
		reply = f(n, body)
		s.mu.Lock()
	default:
		reply = Error(http.StatusInternalServerError, fmt.Sprintf("fakeopenai: script exhausted at request %d", n+1))
	}
	s.mu.Unlock()

	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if reply.Status != 0 {
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		b := reply.Body
		if b == "" {
			b = errorBody(http.StatusText(reply.Status))
		}
		writeStatus(w, reply.Status, b)
		return
	}

	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply.Content}
	for _, c := range reply.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       c.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
	}
	finish := openai.FinishReason(reply.FinishReason)
	if finish == "" {
		finish = openai.FinishReasonStop
		if len(reply.ToolCalls) > 0 {
			finish = openai.FinishReasonToolCalls
		}
	}
	resp := openai.ChatCompletionResponse{
		ID:      "chatcmpl-fake-" + strconv.Itoa(n+1),
		Object:  "chat.completion",
		Created: 1700000000,
		Model:   body.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: finish}},
	}
	out, err := json.Marshal(resp)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, errorBody("fakeopenai: "+err.Error()))
		return
	}
	writeStatus(w, http.StatusOK, string(out))
}

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	list := openai.ModelsList{}
	for _, m := range s.models {
		list.Models = append(list.Models, openai.Model{ID: m, Object: "model", OwnedBy: "fakeopenai"})
	}
	out, _ := json.Marshal(struct {
		Object string         `json:"object"`
		Data   []openai.Model `json:"data"`
	}{"list", list.Models})
	writeStatus(w, http.StatusOK, string(out))
}

func writeStatus(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func errorBody(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "fakeopenai_error"}})
	return string(b)
}
