// Package gateway is askops' front door for agents it does not run itself:
// Claude Code and Codex (through their permission hooks), any MCP client
// (through a permission-prompt tool) and any program (through the HTTP Ask
// API). Each turns its input into a Call, the policy and session grants
// judge it first, and only a call the policy asks about becomes an Ask on
// the one approval round trip (package approval), shown in a Slack thread
// per agent session. The answer goes back in each agent's own words.
//
// Every failure is a denial: a hook that exits non-zero, times out or
// answers non-2xx lets Claude Code go ahead, so the hooks always answer,
// and answer "deny" when anything went wrong.
//
// This is the serve's side. What runs beside the agent (`bot hook`, `bot
// mcp`, the API's client) is package gateway/hook, which links none of
// this; hookside.go is where the two meet.
package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/gateway/toolcall"
	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/redact"
	"github.com/askops/askops/sessions"
)

// Asks is what the gateway reads and decides in the pending store;
// pending.RedisStore and pending.MemoryStore satisfy it.
type Asks interface {
	Get(ctx context.Context, id string) (pending.Ask, error)
	Decide(ctx context.Context, id string, outcome pending.Outcome, by, reason string) (pending.Ask, error)
	ListPending(ctx context.Context, f pending.Filter) ([]pending.Ask, error)
	// Watch blocks until the Ask ends or ctx ends and records nothing: a
	// long poll's push wake-up.
	Watch(ctx context.Context, id string) (pending.Ask, error)
	// Hold keeps an Ask's lease while an API client waits for it (a long
	// poll): an Ask nobody polls ends cancelled (see pending.Store).
	Hold(ctx context.Context, id string) (release func())
}

// Approver runs the approval round trip (*approval.Core and
// metrics.Starter are): Launch records the Ask, and run starts the rest
// and returns; done gets the terminal Ask once, on a goroutine of its own.
// Nothing runs for the Ask while it waits, so 10,000 Asks the API answered
// cost no goroutine each.
type Approver interface {
	Launch(ctx context.Context, req pending.Request, ttl time.Duration) (pending.Ask, func(ctx context.Context, done func(pending.Ask)))
}

// Policy judges a call before any human is asked; *policy.Engine satisfies it.
type Policy interface {
	Evaluate(ctx context.Context, c policy.Call) policy.Verdict
}

// Decider judges a token's vote by the deciding rules; the process's one
// *approval.Decider, which Slack and the console share, satisfies it (and
// brings the Ask's messages in step after a decision).
type Decider interface {
	Decide(ctx context.Context, v approval.Vote) (approval.Result, error)
}

// Sessions is what the gateway remembers of each agent session, for every
// replica alike: its workspace root, when it was first seen, and its Slack
// thread, each the first recorded and kept while calls come (ttl: the
// session's life). sessions.MemoryStore and sessions.RedisStore satisfy it.
type Sessions interface {
	PinRoot(ctx context.Context, session, root string, ttl time.Duration) (string, error)
	PinStart(ctx context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error)
	Thread(ctx context.Context, session string, ttl time.Duration) (channel, ts string, ok bool, err error)
	ClaimThread(ctx context.Context, session, channel, ts string, ttl time.Duration) (string, string, error)
}

// Call is one tool call an agent asks about, in the agent's own terms: the
// hook client's Call (what any door knows of it) and what only a serve sets.
type Call struct {
	hook.Call
	// Root, when set, is the workspace configured for the caller; else
	// the session's is pinned to the first workspace (or, without one,
	// cwd) it is seen with (judge.go).
	Root string
	// AskID, Unleased and Keep shape the Ask's record for a door with
	// rules of its own (AAP: its request's UUID as the Ask id, alive to
	// its deadline whoever polls, kept 168 h): see pending.Request.
	AskID    string
	Unleased bool
	Keep     time.Duration
}

// Config wires a Service.
type Config struct {
	Asks     Asks
	Approver Approver
	Policy   Policy
	// Decider judges POST /v1/asks/{id}/decision (decide.go); nil: the
	// API decides no Ask (the local API, whose tokens may only ask).
	Decider Decider
	// Opener opens each agent session's Slack thread, remembered in
	// Sessions (threads.go); nil: Asks go to the approval channel
	// unthreaded.
	Opener ThreadOpener
	// MaxTimeout is approvals.timeout: no Ask waits longer.
	MaxTimeout time.Duration
	// TeamURL is the workspace's URL (auth.test's url), for message_url
	// (see MessageLink); nil or failing: Asks show no message_url.
	TeamURL func(context.Context) (string, error)
	// Sessions pins each session's workspace and records when it was
	// first seen, the start its Asks name it by (nil: in this process
	// only); SessionTTL is how long a pin lives without use (0: 24h).
	Sessions   Sessions
	SessionTTL time.Duration
	// Held holds the connections of hooks and long polls that wait for a
	// human, so each waits without a goroutine (held.go); nil, or its Run
	// not running: each waits on its handler's goroutine.
	Held *heldhttp.Held
	// Now is the clock (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// BoundBash, when set (gateway.bound_bash), runs the Bash calls of
	// Claude Code the policy allowed under the OS bound (boundbash.go).
	BoundBash BoundBash
}

// Service judges Calls and takes those the policy asks about to a human.
type Service struct {
	cfg Config
	log *slog.Logger

	// background holds the round trips of Asks the API answered before the
	// human did; Close cancels them (their Asks end cancelled) and waits.
	background context.Context
	stop       context.CancelFunc
	running    sync.WaitGroup

	// intake admits the held hooks being judged and recorded at once;
	// queued are those held waiting for a turn (held.go).
	intake  chan struct{}
	queueMu sync.Mutex
	queued  []*queuedHook

	team     teamURL // links.go
	sessions Sessions
	threads  *threads // nil: unthreaded
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Asks == nil || cfg.Approver == nil || cfg.Policy == nil {
		return nil, errors.New("gateway: needs an ask store, an approver and a policy")
	}
	if cfg.MaxTimeout <= 0 {
		return nil, errors.New("gateway: the maximum timeout must be positive")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ss := cfg.Sessions
	if ss == nil {
		ss = sessions.NewMemoryStore(sessions.Options{Now: cfg.Now})
	}
	var th *threads
	if cfg.Opener != nil {
		th = newThreads(cfg.Opener, ss, cfg.SessionTTL, cfg.Logger.With("component", "threads"))
	}
	bg, stop := context.WithCancelCause(context.Background())
	return &Service{cfg: cfg, log: cfg.Logger, background: bg, stop: func() { stop(errShutdown) }, sessions: ss, threads: th,
		intake: make(chan struct{}, intakeLimit)}, nil
}

// Stop begins shutdown without waiting: the round trips running in the
// background end cancelled, and so do the waits of Claude Code's HTTP hook
// and of long polls, so each still answers (a hook with a deny) before the
// HTTP server closes its connections — a hook whose connection just drops
// lets Claude Code go ahead.
func (s *Service) Stop() { s.stop() }

// errShutdown is why a wait ended when the Service stopped.
var errShutdown = errors.New("askops is shutting down")

// within is ctx, also ended when the Service stops; the cause it ends
// with says which (pending.ErrAskerGone when ctx ended: the asker's
// connection dropped), so the Ask's cancellation says it too.
func (s *Service) within(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	gone := context.AfterFunc(ctx, func() { cancel(pending.ErrAskerGone) })
	stop := context.AfterFunc(s.background, func() { cancel(errShutdown) })
	return wctx, func() { gone(); stop(); cancel(context.Canceled) }
}

// stopping reports whether Stop was called.
func (s *Service) stopping() bool { return s.background.Err() != nil }

// endAtShutdown cancels Ask id because this serve is stopping and returns
// how it ended: cancelled, or the decision that got there first.
func (s *Service) endAtShutdown(ctx context.Context, id string) (pending.Ask, error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	// Its messages are the round trip's to update: it waits on this
	// serve (and Stop has just ended it), or on another, which wakes.
	a, err := s.cfg.Asks.Decide(dctx, id, pending.Cancelled, "askops", errShutdown.Error())
	if first, ok := pending.ConflictAsk(err); ok {
		return first, nil
	}
	return a, err
}

// Close ends every round trip still running in the background (their Asks
// end cancelled and their messages say so) and waits for them.
func (s *Service) Close() {
	s.stop()
	s.running.Wait()
}

// Begin judges c and, when a human must decide, records the Ask and returns
// it pending while its round trip (post, wait, grant) goes on in the
// background; decided reports whether the returned Ask is already final
// (the policy decided, or the Ask could not even be recorded).
func (s *Service) Begin(ctx context.Context, c Call) (a pending.Ask, decided bool) {
	req, final, ok := s.judge(ctx, c)
	if ok {
		return final, true
	}
	return s.launch(ctx, s.background, req, c.Timeout, func(end pending.Ask) {
		s.log.Debug("api ask ended", "ask", end.ID, "session", end.SessionID, "tool", end.Tool, "status", end.Status, "by", end.DecidedBy)
	})
}

// launch records the Ask for req and starts its round trip, which run's
// ending ends cancelled; done then gets the terminal Ask once, on a
// goroutine of its own, and Close waits for it to return. decided: the Ask
// could not even be recorded, a is final, and done is not called. Nothing
// runs for the Ask while it waits.
func (s *Service) launch(ctx, run context.Context, req pending.Request, ttl time.Duration, done func(pending.Ask)) (a pending.Ask, decided bool) {
	a, start := s.cfg.Approver.Launch(ctx, req, ttl)
	if _, end := a.Outcome(); end {
		return a, true
	}
	s.running.Add(1)
	start(run, func(end pending.Ask) {
		defer s.running.Done()
		done(end)
	})
	return a, false
}

// Settle judges c and, when a human must decide, waits for the decision;
// it always returns a terminal Ask. ctx ending cancels the Ask.
func (s *Service) Settle(ctx context.Context, c Call) pending.Ask {
	req, final, ok := s.judge(ctx, c)
	if ok {
		return final
	}
	return s.settle(ctx, req, c.Timeout)
}

// settle is Settle once the policy has asked for a human: the round
// trip's Launch, waited for.
func (s *Service) settle(ctx context.Context, req pending.Request, ttl time.Duration) pending.Ask {
	_, run := s.cfg.Approver.Launch(ctx, req, ttl)
	ended := make(chan pending.Ask, 1)
	run(ctx, func(a pending.Ask) { ended <- a })
	return <-ended
}

// judge runs the policy on c. ok means the policy decided and final says
// how; otherwise req is the Ask to record.
func (s *Service) judge(ctx context.Context, c Call) (req pending.Request, final pending.Ask, ok bool) {
	m := toolcall.Map(c.Tool, c.Input, c.Cwd)
	key := sessions.Key(c.By, c.SessionID)
	ws := s.workspace(ctx, key, c)
	started := s.started(ctx, key, c)
	pc := m.Call
	pc.SessionID, pc.Cwd, pc.Workspace, pc.Resolved, pc.Unread = key, c.Cwd, ws, c.Resolved, m.Unjudged
	v := verdict(ctx, s.cfg.Policy, m.Refuse, pc)
	var hidden []string
	if m.Shown.Kind == pending.CallCommand {
		hidden = toolcall.AsItCame(c.Input, m.Shown.Command)
	}
	agentSays := c.Reason
	if agentSays == "" {
		agentSays = m.AgentSays
	}
	req = pending.Request{
		RunID:     key,
		SessionID: key,
		Label:     c.Agent,
		StartedBy: c.By,
		Tool:      m.Call.Tool,
		Args:      m.Args,
		Call:      m.Shown,
		Summary:   m.Summary,
		Path:      m.Call.Path,
		Reason:    askReason(agentSays, v.Reason),
		Rule:      v.Rule,
		Approvals: v.Approvals,
		Workspace: ws,
		Cwd:       c.Cwd,

		SessionStarted: started,
		OneOff:         c.OneOff,
		Hidden:         strings.Join(hidden, "\n"),

		AskID:    c.AskID,
		Unleased: c.Unleased,
		Keep:     c.Keep,
	}
	if !c.OneOff { // a one-off's session is the Ask's own: nothing to tell
		req.SessionName = sessionName(c.Agent, c.SessionID, ws, !started.IsZero())
	}
	if v.Decision != policy.Allow { // shown from the reading that was judged
		shown := askview.Prepare(req, v.Reading)
		req.Shown = &shown
	}
	switch v.Decision {
	case policy.Allow, policy.Deny:
		status := pending.Approved
		if v.Decision == policy.Deny {
			status = pending.Denied
		}
		// The reason may quote the command ("denied by rule: … matches
		// …"); it is logged and answered, never stored, so it is redacted
		// here as the store redacts an Ask's.
		reason := v.Reason
		if v.Rule != "" {
			reason += " (" + v.Rule + ")"
		}
		reason = redact.Reason(reason, hidden, m.Shown.Command, m.Shown.Content, m.Shown.New)
		s.log.Info("policy decided", "session", c.SessionID, "tool", c.Tool, "decision", v.Decision, "reason", reason)
		return req, pending.Ask{Request: req, Status: pending.Status(status), DecidedBy: hook.PolicyDecider, DecisionReason: reason}, true
	}
	if s.threads != nil {
		req.ReplyChannel, req.ReplyThreadTS = s.threads.For(ctx, key, c)
	}
	return req, pending.Ask{}, false
}

// verdict is the gateway's one question to the policy, once per call: a
// shell call askops cannot read (refuse) is denied; everything else is
// the engine's, which judges a network approval as its command too, a file
// call by every reading of its path, a Grep by the files it reads, and a
// write nobody resolved as never allowed by a rule or a grant
// (policy/filecall.go). The verdict is used as it comes: never edited,
// never read by its Reason.
func verdict(ctx context.Context, p Policy, refuse string, pc policy.Call) policy.Verdict {
	if refuse != "" {
		return policy.Verdict{Decision: policy.Deny, Reason: refuse}
	}
	return p.Evaluate(ctx, pc)
}

// askReason is what approvers read under "why": the policy's reason, and
// the agent's own when it gave one.
func askReason(agent, verdict string) string {
	if agent == "" {
		return verdict
	}
	return fmt.Sprintf("%s (the agent says: %s)", verdict, agent)
}
