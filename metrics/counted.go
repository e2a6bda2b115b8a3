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

// Launcher is the round trip: it records an Ask for req and returns it,
// with run, which starts the rest and returns at once; done then gets the
// terminal Ask once, on a goroutine of its own (*approval.Core's Launch).
type Launcher interface {
	Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(ctx context.Context, done func(pending.Ask)))
}

// Approver counts and logs every Ask of a run this process waits on: one
// log line per outcome with the ids and the decision latency.
// *approval.Core is its Next.
type Approver struct {
	Next    Launcher
	Metrics *Set
	Log     *slog.Logger
}

// Approve is Launch for a caller that waits (bot ask).
func (m *Approver) Approve(ctx context.Context, req pending.Request) pending.Ask {
	_, run := m.Launch(ctx, req, 0)
	ended := make(chan pending.Ask, 1)
	run(ctx, func(a pending.Ask) { ended <- a })
	return <-ended
}

// Launch starts req, a run's call, through Next's Launch; the wait it runs
// is counted. The Ask waits parked, holding no goroutine: a chat-ops run
// waiting for its human is its state, not a blocked goroutine.
func (m *Approver) Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return m.launch(ctx, req, ttl, runNames(req))
}

// launch is Next's Launch of req, its wait counted and logged by names.
// The log line needs three of req's strings: the closures keep those, not
// the whole request, for as long as the Ask waits.
func (m *Approver) launch(ctx context.Context, req pending.Request, ttl time.Duration, names askNames) (pending.Ask, func(context.Context, func(pending.Ask))) {
	a, run := m.Next.Launch(ctx, req, ttl)
	return a, func(ctx context.Context, done func(pending.Ask)) {
		end := m.waiting(names)
		run(ctx, func(final pending.Ask) {
			end(final)
			done(final)
		})
	}
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

// Starter counts and logs the gateway's Asks as Approver does a run's,
// named as an agent knows them: Counted's Next is the round trip.
type Starter struct {
	Counted *Approver
}

// Launch starts req through the round trip; the wait it runs is counted.
func (m Starter) Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return m.Counted.launch(ctx, req, ttl, agentNames(req))
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
