package chatops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/drain"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

// Runner starts and stops agent runs (*agent.Runner).
type Runner interface {
	Start(ctx context.Context, spec agent.RunSpec, onEvent func(agent.Event)) *agent.Run
	Stop(runID string) bool
}

// People says whether a Slack user is one of a configured set
// (*slackui.Approvers: the approvers, or the run starters).
type People interface {
	MayDecide(ctx context.Context, userID string) (bool, error)
}

// SessionState is the chat-ops state every process shares: a channel's
// sessions, its /askops mode, and stop requests for runs wherever they run
// (package sessions).
type SessionState interface {
	Track(ctx context.Context, channel, session string) error
	Sessions(ctx context.Context, channel string) ([]string, error)
	SetMode(ctx context.Context, channel string, mode policy.Mode, by string) error
	Mode(ctx context.Context, channel string) (sessions.ModeSetting, bool, error)
	HandleStops(ctx context.Context, fn sessions.Stopper) (release func(), err error)
	Stop(ctx context.Context, runID, by string) (sessions.StopResult, error)
	// FirstEvent lets each Events API event (and each slash command
	// invocation) through once: Slack redelivers an event it thinks
	// failed (X-Slack-Retry-Num), possibly to another replica, and a
	// redelivered app_mention must not start a second run.
	FirstEvent(ctx context.Context, id string) bool
}

// PendingAsks lists the open Asks (pending.Store).
type PendingAsks interface {
	ListPending(ctx context.Context, f pending.Filter) ([]pending.Ask, error)
}

// Grants lists and revokes grants (grants.Store).
type Grants interface {
	List(ctx context.Context, sessionID string) ([]grants.Grant, error)
	Revoke(ctx context.Context, sessionID, id string) error
}

// Poster is how chat-ops talks to Slack: slackui.Notifier's paced,
// retrying calls, so chat-ops' messages share the Asks' per-channel budget,
// behind them (slackui's priorities), and ride out 429s and 5xx like them.
type Poster interface {
	// Status queues a run's status message, kept to its latest state.
	Status(ctx context.Context, channel, thread string, text func() string) *slackui.StatusMessage
	// Enqueue queues a post (a run's answer) and reports it to done.
	Enqueue(ctx context.Context, p slackui.Post, done func(channel, ts string, err error))
	// Respond answers a slash command through its response_url.
	Respond(ctx context.Context, channel, responseURL string, opts ...slack.MsgOption) error
	PostEphemeral(ctx context.Context, channel, user string, opts ...slack.MsgOption) error
}

// AskClicks handles the clicks chat-ops does not own: the Ask buttons and
// modals (*slackui.Interactions).
type AskClicks interface {
	Handle(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error)
}

// Workspace places a Slack user in askops' own workspace
// (*slackui.Workspace): people of another organisation in a Slack Connect
// channel are nobody to chat-ops, whatever the approver or run-starter
// sets would say of their user id (anyone_in_channel says yes to all).
type Workspace interface {
	// Admits returns nil for user whose home team Slack reports as
	// userTeam if that is askops' own workspace, else why not.
	Admits(ctx context.Context, user, userTeam string) error
	// AdmitsCommand is Admits for a slash command, which names only the
	// workspace it was typed in.
	AdmitsCommand(ctx context.Context, cmd slack.SlashCommand) error
}

// RunCounter counts runs by how they ended (the bot's metrics).
type RunCounter interface {
	RunEnded(state string)
}

// Config is everything Ops needs; every field but Redis and Logger is
// required.
type Config struct {
	// Command is the slash command's name as users type it (slack.command).
	Command string
	// Mode is the configured policy mode (policy.mode), shown when a
	// channel has none of its own.
	Mode policy.Mode
	// SessionTTL is how long a session lives without a run (approvals.session_ttl).
	SessionTTL time.Duration

	// Runner starts the runs; nil when runs are off, and RunsOff says why
	// (no model configured): /askops run and mentions answer with it.
	Runner    Runner
	RunsOff   string
	Approvers People
	// Starters may start runs; the approvers when run_starters is empty.
	Starters People
	Sessions SessionState
	Asks     PendingAsks
	Grants   Grants
	Slack    Poster
	Clicks   AskClicks
	// Workspace, if set, refuses commands, mentions and Revoke clicks of
	// users of another team (slackui.Workspace; the wiring always sets
	// it). The Ask buttons Clicks handles are refused there.
	Workspace Workspace
	Runs      RunCounter
	// RunsChanged, if set, is told when a run started here is recorded or
	// ends (the App Home refreshes at once; runrecord.go).
	RunsChanged func()
	// Shared says the stores are shared with other processes (Redis), so
	// a run may live on another replica; false: this process's memory.
	Shared bool
	Logger *slog.Logger
	Now    func() time.Time
}

// Ops is chat-ops for one serve process. Its handlers are safe for
// concurrent use; Shutdown ends it.
type Ops struct {
	cfg Config
	log *slog.Logger

	runsCtx  context.Context
	stopRuns context.CancelFunc
	// releaseStops ends this process's answers to /askops stop requests.
	releaseStops func()

	mu     sync.Mutex
	closed bool
	work   sync.WaitGroup // runs and background replies
}

// New builds Ops and starts answering stop requests for its runs (an
// /askops stop on any replica reaches them).
func New(ctx context.Context, cfg Config) (*Ops, error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	o := &Ops{cfg: cfg, log: cfg.Logger}
	// Runs outlive the request that started them but not the process: they
	// get their own context, cancelled by Shutdown after intake stops.
	o.runsCtx, o.stopRuns = context.WithCancel(context.WithoutCancel(ctx))
	var err error
	if cfg.Runner == nil {
		if cfg.RunsOff == "" {
			return nil, fmt.Errorf("chatops: no runner and no reason why runs are off")
		}
		cfg.Runner = runsOff{}
		o.cfg.Runner = cfg.Runner
	}
	release, err := cfg.Sessions.HandleStops(o.runsCtx, StopperFor(cfg.Runner, o.log))
	if err != nil {
		o.stopRuns()
		return nil, fmt.Errorf("redis.url: %w", err)
	}
	o.releaseStops = sync.OnceFunc(release) // Shutdown may be called again
	return o, nil
}

// runsOff is the Runner when runs are off: nothing is started here (the
// run commands answer Config.RunsOff first), so there is nothing to stop.
type runsOff struct{}

func (runsOff) Start(context.Context, agent.RunSpec, func(agent.Event)) *agent.Run {
	panic("chatops: a run was started while runs are off")
}
func (runsOff) Stop(string) bool { return false }

// StopperFor answers stop requests for runner's runs.
func StopperFor(runner interface{ Stop(runID string) bool }, log *slog.Logger) func(runID, by string) bool {
	return func(runID, by string) bool {
		if !runner.Stop(runID) {
			return false
		}
		log.Info("run stop requested", "run", runID, "by", by)
		return true
	}
}

// ErrDrainCut means Shutdown's context ended before every run and reply did.
var ErrDrainCut = errors.New("chatops: runs still winding down at shutdown")

// Shutdown refuses new runs, stops the running ones (their Asks end
// cancelled and their messages say so) and waits until every goroutine Ops
// started has ended or ctx ends, whichever is first; then it stops
// answering stop requests. Call it after the transports stopped taking
// Slack's traffic.
func (o *Ops) Shutdown(ctx context.Context) error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.stopRuns()
	defer o.releaseStops()
	if drain.Wait(ctx, &o.work) != nil {
		return ErrDrainCut
	}
	return nil
}

// goTracked starts fn as owned work unless Shutdown has begun. The check
// and the Add happen under the lock Shutdown takes, so its Wait never races
// an Add.
func (o *Ops) goTracked(fn func()) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.work.Go(fn)
	return true
}
