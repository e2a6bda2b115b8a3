package fakeopenai_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/internal/fakeopenai"
)

func client(s *fakeopenai.Server) *openai.Client {
	cfg := openai.DefaultConfig("sk-test")
	cfg.BaseURL = s.BaseURL()
	cfg.HTTPClient = s.Client()
	return openai.NewClientWithConfig(cfg)
}

func TestScriptOverTheRealClient(t *testing.T) {
	s := fakeopenai.Start(t,
		fakeopenai.Call(fakeopenai.ToolCall{ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`}),
		fakeopenai.RateLimited("7"),
		fakeopenai.Text("done"),
	)
	c := client(s)
	req := openai.ChatCompletionRequest{
		Model:    "m1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "list files"}},
	}

	resp, err := c.CreateChatCompletion(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].Message.ToolCalls
	if len(tc) != 1 || tc[0].ID != "call_1" || tc[0].Function.Name != "bash" || tc[0].Function.Arguments != `{"command":"ls"}` {
		t.Fatalf("tool calls = %+v", tc)
	}
	if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish reason = %q", resp.Choices[0].FinishReason)
	}

	_, err = c.CreateChatCompletion(t.Context(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusTooManyRequests {
		t.Fatalf("err = %v, want a 429 APIError", err)
	}

	resp, err = c.CreateChatCompletion(t.Context(), req)
	if err != nil || resp.Choices[0].Message.Content != "done" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}

	// The script is used up: the server says so instead of inventing answers.
	if _, err := c.CreateChatCompletion(t.Context(), req); err == nil {
		t.Fatal("want an error once the script is exhausted")
	}

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("recorded %d requests, want 4", len(reqs))
	}
	if reqs[0].Body.Model != "m1" || reqs[0].Body.Messages[0].Content != "list files" {
		t.Errorf("recorded body = %+v", reqs[0].Body)
	}
	if reqs[0].Authorization != "Bearer sk-test" {
		t.Errorf("authorization = %q", reqs[0].Authorization)
	}
}

func TestRetryAfterHeaderAndModels(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.RateLimited("3"))
	resp, err := s.Client().Post(s.BaseURL()+"/chat/completions", "application/json", stringsReader(`{"model":"x","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	models, err := client(s).ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(models.Models) != 1 || models.Models[0].ID != "fake-model" {
		t.Fatalf("models = %+v", models.Models)
	}
}

func TestThenAnswersDynamically(t *testing.T) {
	s := fakeopenai.Start(t)
	s.Then(func(n int, req openai.ChatCompletionRequest) fakeopenai.Reply {
		return fakeopenai.Text(req.Messages[len(req.Messages)-1].Content + "!")
	})
	resp, err := client(s).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
		Model:    "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	if err != nil || resp.Choices[0].Message.Content != "hi!" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
