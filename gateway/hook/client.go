package hook

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
)

// Client is a Settler that talks to a serve's Ask API: `bot hook` and
// `bot mcp` with -url, and `bot ask` without -config. Every failure becomes
// an unavailable Ask, never an error, so its callers always have a deny to
// give — and they have it in time: every request has its own deadline, and
// the whole call ends at the latest Grace after the Ask's deadline (after
// the Call's Timeout when it sets one, before the serve has answered), or
// by ctx's deadline if that is sooner, so a serve that froze, a network
// that drops packets or a proxy that never answers cannot keep an agent's
// hook past the agent's own timeout (which lets the call go ahead).
type Client struct {
	BaseURL string       // e.g. http://askops.internal:8080
	Token   string       // a token with scope ask
	HTTP    *http.Client // nil: http.DefaultClient (the Client bounds every request itself)
	// Grace is how long past an Ask's deadline Settle may take at most: it
	// stops polling for the serve's verdict GraceStop before that and tells
	// the serve it stopped waiting in what is left; default DefaultGrace.
	Grace time.Duration
	// RequestTimeout bounds each request (a long poll: its wait plus this);
	// default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Created, when set, is told the pending Ask once a human must decide
	// (its id and deadline), before the long polls begin.
	Created func(Ask)
	// MaxTimeout is the serve's approvals.timeout when it is known here
	// (the local endpoint file names it), else 0.
	MaxTimeout time.Duration
}

// MaxBody is the largest body the API takes, and a hook reads: 1 MiB.
const MaxBody = 1 << 20

// AskBody is POST /v1/asks's body.
type AskBody struct {
	SessionID string          `json:"session_id"`
	Agent     string          `json:"agent,omitempty"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input"`
	Cwd       string          `json:"cwd,omitempty"`
	// Workspace is the session's root as the agent's process gives it
	// (Call.Workspace). A token with a workspace of its own
	// (api.tokens[].workspace) overrides it.
	Workspace string `json:"workspace,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Timeout   string `json:"timeout,omitempty"`
	// Resolved is what older clients sent to say they resolved cwd and
	// every path in input where the files are. It is read and never
	// believed: a caller's word cannot make a path it names safe. Only
	// the local serve resolves its callers' paths, itself (see
	// the gateway's Token.local); every other call's paths are judged as
	// text.
	Resolved bool `json:"resolved,omitempty"`
	// OneOff says session_id is this Ask's own (bot ask without
	// -session): "Approve for session" is not offered.
	OneOff bool `json:"one_off,omitempty"`
}

// CancelBody is DELETE /v1/asks/{id}'s optional body.
type CancelBody struct {
	// StoppedWaiting says the asker gave up waiting (its agent's timeout,
	// a signal): the Ask's reason is then ReasonAskerGone.
	StoppedWaiting bool `json:"stopped_waiting,omitempty"`
}

// Client bounds. A call ends at the latest DefaultGrace after the Ask's
// deadline; the agent's hook timeout must leave room for it.
const (
	DefaultGrace          = Grace
	DefaultRequestTimeout = 10 * time.Second
	// cancelTimeout bounds the DELETE that tells the serve the client
	// stopped waiting; it comes out of the grace (and is what is left of
	// it for a serve late with the Ask's expiry).
	cancelTimeout = time.Second
	// maxBackoff is the longest pause between failed polls: below the
	// serve's lease (6 s, pending.DefaultLeaseTTL), so a brief outage does not
	// look like an asker that went away.
	maxBackoff = 2 * time.Second
	// pollWait is the longest long poll: below the read timeouts proxies
	// commonly keep (60 s), since a poll the proxy cuts is the asker
	// leaving, which ends the Ask (API.get).
	pollWait = 25 * time.Second
)

var _ Settler = (*Client)(nil)

// Settle implements Settler: POST /v1/asks, then long polls until the Ask
// ends (each poll renews the Ask's lease on the serve: an Ask nobody polls
// ends cancelled). If ctx ends first, or the serve has not answered by the
// deadline plus Grace, the Ask is cancelled (DELETE), so no approval can
// arrive for a call that is no longer waiting.
func (c *Client) Settle(ctx context.Context, call Call) Ask {
	body := AskBody{SessionID: call.SessionID, Agent: call.Agent, Tool: call.Tool, Input: call.Input, Cwd: call.Cwd, Workspace: call.Workspace, Reason: call.Reason, Resolved: call.Resolved, OneOff: call.OneOff}
	start := time.Now()
	if call.Timeout > 0 {
		body.Timeout = call.Timeout.String()
		// The Ask cannot end later than this, whatever the serve says.
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, start.Add(call.Timeout+c.grace()))
		defer stop()
	}
	b, _ := json.Marshal(body)
	pctx, posted := c.outlast(ctx)
	status, a, err := c.do(pctx, c.requestTimeout(), http.MethodPost, "/v1/asks", b)
	posted()
	switch {
	case err != nil:
		return refused("askops could not be reached: " + reachError(err))
	case status == http.StatusOK:
		return a
	case status != http.StatusCreated:
		return refused(fmt.Sprintf("askops refused the request (HTTP %d): %s", status, a.Reason))
	}
	if c.Created != nil {
		c.Created(a)
	}
	id := a.ID
	if ctx.Err() != nil {
		return c.cancel(ctx, id) // stopped while the POST was on the wire
	}
	deadline := a.Due()
	if deadline.IsZero() || (call.Timeout > 0 && deadline.After(start.Add(call.Timeout))) {
		deadline = start.Add(call.Timeout) // a serve's clock ahead of ours does not stretch the wait
	}
	// Polling stops early enough for the DELETE to fit in the grace, and
	// before ctx's deadline.
	giveUp := deadline.Add(c.grace() - cancelTimeout)
	if d, ok := ctx.Deadline(); ok && d.Add(-cancelTimeout).Before(giveUp) {
		giveUp = d.Add(-cancelTimeout)
	}
	wctx, stopWaiting := context.WithDeadline(ctx, giveUp)
	defer stopWaiting()
	backoff := 200 * time.Millisecond
	for {
		wait := min(pollWait, max(time.Until(deadline)+time.Second, time.Second)).Round(time.Second)
		status, got, err := c.do(wctx, wait+c.requestTimeout(), http.MethodGet, "/v1/asks/"+url.PathEscape(id)+"?wait="+wait.String(), nil)
		if err == nil && status == http.StatusOK && got.Ended() {
			return got
		}
		if ctx.Err() != nil || wctx.Err() != nil {
			return c.cancel(ctx, id)
		}
		if err == nil && status == http.StatusOK {
			backoff = 200 * time.Millisecond
			continue
		}
		if err == nil && status == http.StatusNotFound {
			return refused("askops lost the approval request")
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			return c.cancel(ctx, id)
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// outlast is the POST's context: a caller stopped while its POST is on
// the wire (the agent's SIGTERM) still waits up to cancelTimeout for the
// answer, because only the answer names the Ask it opened, and an Ask it
// cannot name it cannot cancel. ctx's deadline still ends the POST on time.
func (c *Client) outlast(ctx context.Context) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	pctx, stop := context.WithCancel(base)
	if d, ok := ctx.Deadline(); ok {
		stop()
		pctx, stop = context.WithDeadline(base, d)
	}
	unhook := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			time.AfterFunc(cancelTimeout, stop)
		}
	})
	return pctx, func() { unhook(); stop() }
}

// cancel ends the Ask after the client gave up. It takes at most
// cancelTimeout, even when ctx has ended. When the client gave up because
// its time was up, a decision that got there first is the answer (the
// call runs as it was approved, or is refused as the serve said: the
// answer and the record agree); when ctx ended (the asker is stopping)
// nothing will run the call, and the answer is a cancellation.
func (c *Client) cancel(ctx context.Context, id string) Ask {
	dctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	body, _ := json.Marshal(CancelBody{StoppedWaiting: true})
	status, a, err := c.do(dctx, cancelTimeout, http.MethodDelete, "/v1/asks/"+url.PathEscape(id), body)
	if err == nil && status == http.StatusConflict && a.Ended() && a.ID == id && !errors.Is(ctx.Err(), context.Canceled) {
		return a
	}
	reason := ReasonAskerGone
	if err != nil {
		reason += " (and askops could not be told: " + reachError(err) + ")"
	}
	a.ID, a.Status, a.DecidedBy, a.Reason = id, cancelled, "askops", reason
	return a
}

// reachError words a failed request: a deadline is "no answer in time",
// which is what a frozen serve or a black-holed network looks like.
func reachError(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer in time (" + err.Error() + ")"
	}
	return err.Error()
}

func (c *Client) grace() time.Duration {
	if c.Grace > cancelTimeout {
		return c.Grace
	}
	return DefaultGrace
}

func (c *Client) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return DefaultRequestTimeout
}

// do sends one request and decodes an Ask (or an error text into
// Reason) from the answer.
func (c *Client) do(ctx context.Context, timeout time.Duration, method, path string, body []byte) (int, Ask, error) {
	ctx, stop := context.WithTimeout(ctx, timeout)
	defer stop()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return 0, Ask{}, err
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
		return 0, Ask{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return 0, Ask{}, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
			Ask   Ask    `json:"ask"`
		}
		_ = json.Unmarshal(b, &e)
		a := e.Ask
		a.Reason = e.Error
		return resp.StatusCode, a, nil
	}
	var a Ask
	if err := json.Unmarshal(b, &a); err != nil {
		return 0, Ask{}, fmt.Errorf("askops answered HTTP %d with something other than an ask", resp.StatusCode)
	}
	return resp.StatusCode, a, nil
}

// ClientFromEnv is the Client bot hook and bot mcp use with -url: url, else
// $ASKOPS_URL, and the token in the environment variable tokenEnv. With
// $ASKOPS_CERT_SHA256 (the serve logs it when http.listen serves HTTPS)
// the client accepts that certificate alone, whatever name it carries.
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
		return &Client{BaseURL: ep.URL, Token: ep.AgentToken, MaxTimeout: time.Duration(ep.TimeoutSeconds) * time.Second, HTTP: ep.HTTPClient()}, nil
	}
	token := getenv(tokenEnv)
	if token == "" {
		return nil, fmt.Errorf("no API token: %s is not set", tokenEnv)
	}
	return &Client{BaseURL: url, Token: token,
		HTTP: PinnedClient(getenv(CertPinEnv), "askops' certificate is not the one "+CertPinEnv+" names")}, nil
}

// CertPinEnv is the variable that pins a serve's certificate (CertPin)
// for clients given its URL.
const CertPinEnv = "ASKOPS_CERT_SHA256"
