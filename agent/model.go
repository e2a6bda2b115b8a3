package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/internal/sleep"
)

// Model is the chat completions API the loop talks to. NewModel returns one
// over any OpenAI-compatible server; tests may supply their own.
type Model interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// RetryOptions bounds how a Model retries transient failures (429, 5xx,
// network errors). Zero fields take the defaults noted.
type RetryOptions struct {
	MaxAttempts    int           // total attempts including the first; default 5
	BaseDelay      time.Duration // first backoff; doubles each attempt, with jitter; default 1s
	MaxDelay       time.Duration // cap on one wait, also on a server's Retry-After; default 60s
	AttemptTimeout time.Duration // cap on one request; default 10m (local models can be slow)

	// Wait sleeps d or until ctx ends; nil means a real timer. Tests inject
	// one to see the waits without sleeping.
	Wait func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read an HTTP-date Retry-After; nil means time.Now.
	Now func() time.Time
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = time.Second
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 60 * time.Second
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 10 * time.Minute
	}
	if o.Wait == nil {
		o.Wait = sleepCtx
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// sleepCtx waits d, or returns why ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if !sleep.For(ctx, d) {
		return context.Cause(ctx)
	}
	return nil
}

// ModelError is returned when the model could not be reached within the
// retry budget, or answered with an error that retrying cannot fix.
type ModelError struct {
	Attempts int
	Status   int // last HTTP status, 0 for a network error
	Err      error
}

func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model request failed after %d attempt(s) (last HTTP status %d): %v", e.Attempts, e.Status, e.Err)
	}
	return fmt.Sprintf("model request failed after %d attempt(s): %v", e.Attempts, e.Err)
}

func (e *ModelError) Unwrap() error { return e.Err }

// NewModel returns a Model speaking the OpenAI chat completions API at baseURL
// (e.g. https://api.openai.com/v1, http://localhost:11434/v1 for Ollama, a
// vLLM or llama.cpp server). httpClient nil means a plain http.Client.
func NewModel(baseURL, apiKey string, httpClient *http.Client, opts RetryOptions) Model {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	// go-openai drops the response headers of an error reply, so a doer in
	// front of the client records Retry-After where this attempt can read it.
	cfg.HTTPClient = retryAfterDoer{httpClient}
	return &openaiModel{client: openai.NewClientWithConfig(cfg), opts: opts.withDefaults()}
}

// ModelTransport is the HTTP transport for a model server: the default
// one, with a write buffer that holds a whole request of up to 64 KB. The
// default 4 KB buffer sends a longer conversation as the headers with the
// first 4 KB, then the rest: two writes, and a server that wakes for each
// (a long run's request is tens of KB, sent again at every step, on the
// path from an approval to the model's next request).
func ModelTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.WriteBufferSize = 64 << 10
	return t
}

type openaiModel struct {
	client *openai.Client
	opts   RetryOptions
}

// retryHint carries one attempt's Retry-After from the doer to the retry loop.
type retryHint struct{ value string }

type retryHintKey struct{}

type retryAfterDoer struct{ c *http.Client }

func (d retryAfterDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err == nil {
		if h, ok := req.Context().Value(retryHintKey{}).(*retryHint); ok {
			h.value = resp.Header.Get("Retry-After")
		}
	}
	return resp, err
}

func (m *openaiModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	o := m.opts
	var lastErr error
	var lastStatus int
	for attempt := 1; ; attempt++ {
		hint := &retryHint{}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, retryHintKey{}, hint), o.AttemptTimeout)
		resp, err := m.client.CreateChatCompletion(actx, req)
		cancel()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return openai.ChatCompletionResponse{}, context.Cause(ctx)
		}
		status, retryable := classify(err)
		lastErr, lastStatus = err, status
		if !retryable {
			return openai.ChatCompletionResponse{}, &ModelError{Attempts: attempt, Status: status, Err: err}
		}
		if attempt >= o.MaxAttempts {
			return openai.ChatCompletionResponse{}, &ModelError{Attempts: attempt, Status: lastStatus,
				Err: fmt.Errorf("retry budget of %d attempts used up: %w", o.MaxAttempts, lastErr)}
		}
		wait := backoff(o, attempt)
		if ra, ok := parseRetryAfter(hint.value, o.Now()); ok {
			if ra > o.MaxDelay {
				// Waiting longer than we promised would look like a hang; fail
				// clearly instead of retrying early against the server's wish.
				return openai.ChatCompletionResponse{}, &ModelError{Attempts: attempt, Status: status,
					Err: fmt.Errorf("server asked to retry after %s, longer than the %s limit: %w", ra, o.MaxDelay, err)}
			}
			wait = ra
		}
		if err := o.Wait(ctx, wait); err != nil {
			return openai.ChatCompletionResponse{}, err
		}
	}
}

// classify returns the HTTP status of err (0 if none) and whether retrying
// may help: 408, 429, 5xx and network errors yes; other statuses no.
func classify(err error) (int, bool) {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode, retryableStatus(apiErr.HTTPStatusCode)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode, retryableStatus(reqErr.HTTPStatusCode)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return 0, true
	}
	return 0, false
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

func backoff(o RetryOptions, attempt int) time.Duration {
	d := o.BaseDelay << (attempt - 1)
	if d <= 0 || d > o.MaxDelay {
		d = o.MaxDelay
	}
	// Up to 20% jitter so many runs hitting one rate limit spread out.
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP-date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
