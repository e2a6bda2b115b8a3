package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askops/askops/pending"
)

// Client is a Settler that talks to a serve's Ask API: `bot hook` and
// `bot mcp` with -url. Every failure becomes an unavailable Ask, never an
// error, so its callers always have a deny to give.
type Client struct {
	BaseURL string       // e.g. http://askops.internal:8080
	Token   string       // a token with scope ask
	HTTP    *http.Client // nil: a client without an overall timeout (long polls bound themselves)
	// Grace is how long past an Ask's deadline the client keeps polling
	// for the expiry to be recorded; default 15s.
	Grace time.Duration
	// Created, when set, is told the pending Ask once a human must decide
	// (its id and deadline), before the long polls begin.
	Created func(pending.Ask)
}

var _ Settler = (*Client)(nil)

// Settle implements Settler: POST /v1/asks, then long polls until the Ask
// ends. If ctx ends first the Ask is cancelled (DELETE), so no approval can
// arrive for a call that is no longer waiting.
func (c *Client) Settle(ctx context.Context, call Call) pending.Ask {
	body := AskBody{SessionID: call.SessionID, Agent: call.Agent, Tool: call.Tool, Input: call.Input, Cwd: call.Cwd, Reason: call.Reason, Resolved: call.Resolved}
	if call.Timeout > 0 {
		body.Timeout = call.Timeout.String()
	}
	b, _ := json.Marshal(body)
	status, a, err := c.do(ctx, http.MethodPost, "/v1/asks", b)
	switch {
	case err != nil:
		return refused("askops could not be reached: " + err.Error())
	case status == http.StatusOK:
		return a
	case status != http.StatusCreated:
		return refused(fmt.Sprintf("askops refused the request (HTTP %d): %s", status, a.DecisionReason))
	}
	if c.Created != nil {
		c.Created(a)
	}
	id := a.ID
	giveUp := a.Deadline.Add(c.grace())
	backoff := 200 * time.Millisecond
	for {
		wait := min(MaxWait, max(time.Until(a.Deadline)+time.Second, time.Second))
		status, got, err := c.do(ctx, http.MethodGet, "/v1/asks/"+url.PathEscape(id)+"?wait="+wait.Round(time.Second).String(), nil)
		if ctx.Err() != nil {
			return c.cancel(ctx, id)
		}
		if err == nil && status == http.StatusOK {
			if _, done := got.Outcome(); done {
				return got
			}
			backoff = 200 * time.Millisecond
			if !time.Now().Before(giveUp) {
				return c.cancel(ctx, id)
			}
			continue
		}
		if err == nil && status == http.StatusNotFound {
			return refused("askops lost the approval request")
		}
		if !time.Now().Before(giveUp) {
			return refused("askops could not be reached while waiting for the decision")
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return c.cancel(ctx, id)
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// cancel ends the Ask after the caller gave up; a decision that got there
// first still counts as not run, so the answer is always a cancellation.
func (c *Client) cancel(ctx context.Context, id string) pending.Ask {
	dctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_, a, err := c.do(dctx, http.MethodDelete, "/v1/asks/"+url.PathEscape(id), nil)
	reason := "the agent stopped waiting for the decision"
	if err != nil {
		reason += " (and askops could not be told: " + err.Error() + ")"
	}
	a.ID, a.Status, a.DecidedBy, a.DecisionReason = id, pending.Status(pending.Cancelled), "askops", reason
	return a
}

func (c *Client) grace() time.Duration {
	if c.Grace > 0 {
		return c.Grace
	}
	return 15 * time.Second
}

// do sends one request and decodes an Ask (or an error text into
// DecisionReason) from the answer.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (int, pending.Ask, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return 0, pending.Ask{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, pending.Ask{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return 0, pending.Ask{}, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string  `json:"error"`
			Ask   AskJSON `json:"ask"`
		}
		_ = json.Unmarshal(b, &e)
		a := e.Ask.ask()
		a.DecisionReason = e.Error
		return resp.StatusCode, a, nil
	}
	var j AskJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return 0, pending.Ask{}, fmt.Errorf("askops answered HTTP %d with something other than an ask", resp.StatusCode)
	}
	return resp.StatusCode, j.ask(), nil
}

// ClientFromEnv is the Client bot hook and bot mcp use with -url: url, else
// $ASKOPS_URL, and the token in the environment variable tokenEnv.
func ClientFromEnv(url, tokenEnv string, getenv func(string) string) (*Client, error) {
	if url == "" {
		url = getenv("ASKOPS_URL")
	}
	if url == "" {
		// The serve on this machine, as `bot ask` finds it: its agents'
		// token, not $ASKOPS_TOKEN (which belongs to some other serve).
		if _, err := LocalEndpointPath(getenv); err != nil {
			return nil, fmt.Errorf("no askops to ask: set -url or ASKOPS_URL (or -config)")
		}
		ep, err := ReadLocalEndpoint(getenv)
		if err != nil {
			return nil, fmt.Errorf("no askops to ask: set -url or ASKOPS_URL (or -config), or start `bot serve` on this machine (%w)", err)
		}
		if ep.AgentToken == "" {
			return nil, errors.New("the local askops is older than this bot (its endpoint file has no agent_token): restart `bot serve`")
		}
		return &Client{BaseURL: ep.URL, Token: ep.AgentToken}, nil
	}
	token := getenv(tokenEnv)
	if token == "" {
		return nil, fmt.Errorf("no API token: %s is not set", tokenEnv)
	}
	return &Client{BaseURL: url, Token: token}, nil
}
