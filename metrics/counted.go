package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askops/askops/pending"
)

// Approver counts and logs every Ask this process waits on: one log line
// per outcome with the ids and the decision latency. *approval.Core is its
// Next.
type Approver struct {
	Next interface {
		Approve(ctx context.Context, req pending.Request) pending.Ask
	}
	Metrics *Set
	Log     *slog.Logger
}

// Approve takes req through Next and counts the outcome.
func (m *Approver) Approve(ctx context.Context, req pending.Request) pending.Ask {
	end := m.waiting(runNames(req))
	a := m.Next.Approve(ctx, req)
	end(a)
	return a
}

// askNames is what an "ask ended" line names its request by: three keys
// and their values. The strings, not the request nor a list of attributes,
// are what a waiting Ask keeps for its line.
type askNames struct {
	agent            bool // session, tool, agent; else run, session, tool
	first, mid, last string
}

// runNames names an Ask by its run (an agent run's, a chat-ops run's).
func runNames(req pending.Request) askNames {
	return askNames{first: req.RunID, mid: req.SessionID, last: req.Tool}
}

// agentNames names an Ask by the agent that asked (a hook's, the API's).
func agentNames(req pending.Request) askNames {
	return askNames{agent: true, first: req.SessionID, mid: req.Tool, last: req.Label}
}

func (n askNames) attrs() []any {
	if n.agent {
		return []any{"session", n.first, "tool", n.mid, "agent", n.last}
	}
	return []any{"run", n.first, "session", n.mid, "tool", n.last}
}

// waiting counts an Ask as waited on from now; end counts its outcome and
// writes its log line.
func (m *Approver) waiting(n askNames) (end func(pending.Ask)) {
	m.Metrics.AskWaiting(1)
	start := time.Now()
	return func(a pending.Ask) {
		m.Metrics.AskWaiting(-1)
		outcome, latency := m.ended(a, start)
		m.Log.Info("ask ended", append(append([]any{"ask", a.ID}, n.attrs()...),
			"outcome", outcome, "by", a.DecidedBy, "latency", latency.Round(time.Millisecond), "reason", a.DecisionReason)...)
	}
}

// ApproveThen is Approve without the wait: done gets the final Ask once,
// on a goroutine of its own. With a Next that launches (*approval.Core)
// the Ask waits parked, holding no goroutine: a chat-ops run waiting for
// its human is then its state, not a blocked goroutine.
func (m *Approver) ApproveThen(ctx context.Context, req pending.Request, done func(pending.Ask)) {
	l, ok := m.Next.(launcher)
	if !ok {
		go func() { done(m.Approve(ctx, req)) }()
		return
	}
	_, wait := l.Launch(ctx, req, 0)
	end := m.waiting(runNames(req))
	wait(ctx, func(a pending.Ask) {
		end(a)
		done(a)
	})
}

// ended counts a final Ask; the latency is the store's creation to
// decision when it has both, else the wait measured from start.
func (m *Approver) ended(a pending.Ask, start time.Time) (pending.Outcome, time.Duration) {
	outcome, ok := a.Outcome()
	if !ok {
		outcome = pending.Unavailable // the round trip always returns a terminal Ask; be sure anyway
	}
	latency := time.Since(start)
	if !a.CreatedAt.IsZero() && !a.DecidedAt.IsZero() {
		latency = a.DecidedAt.Sub(a.CreatedAt)
	}
	m.Metrics.AskEnded(outcome, latency)
	return outcome, latency
}

// Starter counts and logs the gateway's Asks as Approver does the
// agent's: Next is the round trip's Start (*approval.Core's).
type Starter struct {
	Next interface {
		Start(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context) pending.Ask)
	}
	Counted *Approver
}

// Start starts req through Next; the wait it returns is counted.
func (m Starter) Start(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context) pending.Ask) {
	a, rest := m.Next.Start(ctx, req, ttl)
	return a, func(ctx context.Context) pending.Ask {
		end := m.Counted.waiting(agentNames(req))
		final := rest(ctx)
		end(final)
		return final
	}
}

// launcher is a round trip that waits without a goroutine per Ask
// (*approval.Core's Launch).
type launcher interface {
	Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context, func(pending.Ask)))
}

// Launch starts req through Next's Launch (or, without one, its Start's
// rest on a goroutine); the wait it runs is counted.
func (m Starter) Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	var a pending.Ask
	var run func(context.Context, func(pending.Ask))
	if l, ok := m.Next.(launcher); ok {
		a, run = l.Launch(ctx, req, ttl)
	} else {
		var rest func(context.Context) pending.Ask
		a, rest = m.Next.Start(ctx, req, ttl)
		run = func(ctx context.Context, done func(pending.Ask)) { go func() { done(rest(ctx)) }() }
	}
	// The log line needs three of req's strings: the closures keep those,
	// not the whole request, for as long as the Ask waits.
	names := agentNames(req)
	return a, func(ctx context.Context, done func(pending.Ask)) {
		end := m.Counted.waiting(names)
		run(ctx, func(final pending.Ask) {
			end(final)
			done(final)
		})
	}
}

// ExpiredUpdater brings a channel in step with Asks a sweep expired;
// approval.ExpiredUpdater is the same.
type ExpiredUpdater interface {
	UpdateExpired(ctx context.Context, asks []pending.Ask)
}

// Swept counts and logs the Asks a sweep expired before Next updates their
// messages: their waiters are gone, so nobody else does.
type Swept struct {
	Next    ExpiredUpdater
	Metrics *Set
	Log     *slog.Logger
}

// UpdateExpired counts asks, then hands them on.
func (s *Swept) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	for _, a := range asks {
		latency := a.DecidedAt.Sub(a.CreatedAt)
		o, _ := a.Outcome() // expired, or cancelled: its asker stopped waiting
		reason := "expired by the sweep: its waiter is gone"
		if o == pending.Cancelled {
			reason = "cancelled by the sweep: " + a.DecisionReason
		}
		s.Metrics.AskEnded(o, latency)
		s.Log.Info("ask ended", "ask", a.ID, "run", a.RunID, "session", a.SessionID, "tool", a.Tool,
			"outcome", o, "by", a.DecidedBy, "latency", latency.Round(time.Millisecond), "reason", reason)
	}
	s.Next.UpdateExpired(ctx, asks)
}

// SlackErrors is an HTTP transport that counts failed Slack Web API calls
// by method: HTTP errors, non-200 answers and {"ok": false} bodies alike.
type SlackErrors struct {
	Next    http.RoundTripper
	Metrics *Set
}

// RoundTrip implements http.RoundTripper.
func (c *SlackErrors) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	resp, err := c.Next.RoundTrip(req)
	if err != nil {
		c.Metrics.SlackAPIError(method)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		c.Metrics.SlackAPIError(method)
		return resp, nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, nil
	}
	// Web API answers are small; read one to see "ok" and hand it back whole.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var ok struct {
		OK *bool `json:"ok"`
	}
	if rerr != nil || (json.Unmarshal(body, &ok) == nil && ok.OK != nil && !*ok.OK) {
		c.Metrics.SlackAPIError(method)
	}
	if rerr != nil {
		return nil, rerr
	}
	return resp, nil
}
