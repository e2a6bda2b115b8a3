// Package aapexample is the adapter side of the Agent Approval Protocol
// in standard-library Go: what an agent's hook or middleware does to ask
// askops (or any AAP provider) whether one tool call may run. It is an
// example to copy, kept working by askops' tests against the real serve.
//
//	c := aapexample.Client{BaseURL: "http://127.0.0.1:8080/aap", Credential: os.Getenv("AAP_CREDENTIAL")}
//	ok, err := c.Approve(ctx, "Bash", map[string]any{"command": "rm -rf build"}, 10*time.Minute, func() error {
//		return exec.Command("rm", "-rf", "build").Run() // runs only on a valid approval
//	})
//
// It keeps the adapter's side of the contract (the specification's
// 8_security.md): one idempotency key per execution attempt, reused on
// every retry; long polls until the request is terminal; every answer
// held to the protocol's schema before it is believed (check.go: only
// the schema's members, none null, the submission returned as sent, UTC
// times in order, the id and times unchanged between reads, a decision
// exactly when terminal, expires_at exactly on an approval); the call started only on "approved" and
// before decision.expires_at, with the arguments that were approved; a
// denial told apart from expiry, cancellation and failure; and the
// request cancelled when the wait is abandoned.
package aapexample

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client asks one provider as one instance.
type Client struct {
	BaseURL    string       // the provider's AAP base URL, e.g. http://127.0.0.1:8080/aap
	Credential string       // the instance credential (keep it out of the agent's reach)
	HTTP       *http.Client // nil: a client with a 40 s timeout (long polls last 30 s)
	// Now is the clock the approval's expires_at is checked against (nil: time.Now).
	Now func() time.Time
}

// Request is the provider's ApprovalRequest, as far as an adapter reads it.
type Request struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Status     string          `json:"status"`
	DeadlineAt time.Time       `json:"deadline_at"`
	Decision   *struct {
		Status    string    `json:"status"`
		Note      string    `json:"note"`
		DecidedAt time.Time `json:"decided_at"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"decision"`
	createdAt time.Time // as first read: later reads must not change it
}

// Outcome is why a call did or did not run.
type Outcome struct {
	Ran    bool   // run was called (and returned)
	Status string // approved, denied, expired, cancelled; "" when no decision was obtained
	Note   string // the provider's note, if any
	ID     string // the approval request's id
}

// ErrNoDecision: the provider gave no valid decision (network failure,
// invalid response, the wait ran out): the call did not run, and nobody
// denied it.
var ErrNoDecision = errors.New("aap: no valid decision was obtained; the call did not run")

// Approve asks whether tool may run with args and calls run only on a
// valid approval, before it expires. ctx bounds the whole wait: when it
// ends first the request is cancelled and the call does not run.
func (c Client) Approve(ctx context.Context, tool string, args map[string]any, timeout time.Duration, run func() error) (Outcome, error) {
	arguments, err := json.Marshal(args)
	if err != nil {
		return Outcome{}, err
	}
	s := sent{Tool: tool, Arguments: arguments, Timeout: strconv.Itoa(int(timeout.Seconds())) + "s"}
	body, err := json.Marshal(map[string]any{"tool": s.Tool, "arguments": s.Arguments, "timeout": s.Timeout})
	if err != nil {
		return Outcome{}, err
	}
	key := newKey() // one execution attempt: reused on every retry of the create
	var rq Request
	for attempt := 0; ; attempt++ {
		rq, err = c.read(ctx, http.MethodPost, "/v1/requests", body, key, s, nil)
		if err == nil || attempt == 2 || ctx.Err() != nil || !retryable(err) {
			break
		}
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %v", ErrNoDecision, err)
	}
	id := rq.ID
	for rq.Status == "pending" {
		next, err := c.read(ctx, http.MethodGet, "/v1/requests/"+id+"?wait=30s", nil, "", s, &rq)
		switch {
		case ctx.Err() != nil:
			c.cancel(id) // abandoned: nobody should review a call nobody waits for
			return Outcome{ID: id}, fmt.Errorf("%w: %v", ErrNoDecision, ctx.Err())
		case err != nil && retryable(err):
			continue // a lost response is no expiry: read again
		case err != nil:
			return Outcome{ID: id}, fmt.Errorf("%w: %v", ErrNoDecision, err)
		}
		rq = next
	}
	if rq.ID != id || rq.Decision == nil || rq.Decision.Status != rq.Status {
		return Outcome{ID: id}, fmt.Errorf("%w: the answer is not this request's decision", ErrNoDecision)
	}
	out := Outcome{Status: rq.Status, Note: rq.Decision.Note, ID: id}
	if rq.Status != "approved" {
		return out, nil
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if !now().Before(rq.Decision.ExpiresAt) { // checked immediately before the call starts
		out.Status = "expired"
		return out, nil
	}
	out.Ran = true
	return out, run()
}

// cancel withdraws request id, best effort, on its own short deadline.
func (c Client) cancel(id string) {
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	_, _ = c.call(ctx, http.MethodDelete, "/v1/requests/"+id, nil, "")
}

// httpError is a provider's error answer.
type httpError struct {
	Status int
	Code   string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("the provider answered %d %s", e.Status, e.Code)
}

// retryable: a transport failure, a rate limit or an unavailable provider.
func retryable(err error) bool {
	var bad *invalidAnswer
	if errors.As(err, &bad) {
		return false
	}
	var he *httpError
	if errors.As(err, &he) {
		return he.Status == http.StatusTooManyRequests || he.Status == http.StatusServiceUnavailable
	}
	return true
}

// read makes one exchange whose answer is the ApprovalRequest of s
// (checkRequest); prev is the same request read before, if any.
func (c Client) read(ctx context.Context, method, path string, body []byte, key string, s sent, prev *Request) (Request, error) {
	raw, err := c.call(ctx, method, path, body, key)
	if err != nil {
		return Request{}, err
	}
	rq, err := checkRequest(raw, s, prev)
	if err != nil {
		return Request{}, &invalidAnswer{err}
	}
	return rq, nil
}

// invalidAnswer is a provider's answer that is not a valid
// ApprovalRequest of what was sent: never retried, never believed.
type invalidAnswer struct{ err error }

func (e *invalidAnswer) Error() string { return "the provider's answer is invalid: " + e.err.Error() }

// call makes one exchange and returns the body of a 2xx answer.
func (c Client) call(ctx context.Context, method, path string, body []byte, key string) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Credential) // never in the URL
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 40 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 2<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return nil, &httpError{Status: resp.StatusCode, Code: e.Error.Code}
	}
	return raw, nil
}

// newKey is a fresh random idempotency key (a UUID's shape).
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
