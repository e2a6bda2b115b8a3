package slackui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/internal/batchmsg"
	"github.com/askops/askops/internal/channelpace"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/internal/sleep"
	"github.com/askops/askops/pending"
)

// ErrNoChannel means an Ask has nowhere to go: the run did not come from a
// Slack thread and no approval channel is configured.
var ErrNoChannel = errors.New("slackui: no channel to post the ask to (set slack.approval_channel)")

// MessageAPI is the part of the Slack Web API that posts and updates
// messages (Asks, and chat-ops' through the same pacing); *slack.Client
// satisfies it.
type MessageAPI interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slack.MsgOption) (string, error)
}

// NotifierConfig configures a Notifier.
type NotifierConfig struct {
	// ApprovalChannel takes Asks whose run did not come from a Slack thread.
	ApprovalChannel string
	// Mention (e.g. "<!subteam^S0123>" or "<@U0123>") goes into the text of
	// an open Ask so approvers' phones notify.
	Mention string
	// ScopeText states what "Approve for session" would grant for an Ask; an
	// empty result means no session button. It must be the same scope the
	// approval round trip records (see approval.ScopeText).
	ScopeText func(pending.Ask) string
	// GrantDurations are the time-boxed session choices
	// (approvals.grant_durations), offered before "Approve for session".
	GrantDurations []time.Duration
	// Followups, if set, schedules each posted Ask's reminder and
	// escalations (*Escalation; escalate.go).
	Followups interface {
		Schedule(ctx context.Context, a pending.Ask) error
	}
	Logger *slog.Logger
	Now    func() time.Time

	// PerChannelInterval paces posts to one channel (Slack allows about one
	// message per second per channel); default 1s.
	PerChannelInterval time.Duration
	// PerChannelBurst is how many posts to one channel may go at once
	// before the pace applies (Slack allows short bursts): a run's status
	// message and its first Ask need not wait a second apart; default 3.
	PerChannelBurst int
	// EditInterval and EditBurst pace the app's chat.update calls, all
	// channels together (Slack's Tier 3: 50+ a minute); default 1.25s and
	// 20. Edits wait their turn by priority like posts (priority.go).
	EditInterval time.Duration
	EditBurst    int
	// Pace hands out each channel's posting slots and the app's editing
	// slots, by priority; nil paces this process alone. With several
	// replicas it must be shared (channelpace.Redis): Slack's limit is
	// the channel's, whoever posts.
	Pace channelpace.Pace
	// Asks reads the Asks a batch message shows, to render it again when
	// one of them changes; nil turns batching off (a backed-up channel's
	// Asks then wait their turn one post at a time).
	Asks interface {
		Get(ctx context.Context, id string) (pending.Ask, error)
	}
	// Batches records which Asks each batch message shows, for every
	// replica alike (batchmsg.Redis with several); nil: this process's.
	Batches batchmsg.Store
	// BatchWindow is how long after it was posted a batch message takes
	// more Asks by being edited in place (chat.update is not held to the
	// channel's posting pace); later ones wait for a new message, so a
	// batch long scrolled away is not where a new Ask appears; default 20s.
	BatchWindow time.Duration

	// MaxAttempts bounds tries of one Web API call; default 4.
	MaxAttempts int
	// RetryBackoff is the first wait after a transient error, doubled each
	// time; default 500ms.
	RetryBackoff time.Duration
	// MaxRetryWait caps one wait, including a 429's Retry-After: a longer
	// Retry-After fails the call rather than leaving the Ask unposted for
	// that long; default 30s.
	MaxRetryWait time.Duration
}

// Notifier posts Asks to Slack and keeps their messages in step with the
// store: it is Slack's approval.Notifier. Posts are paced per channel and
// retried within a budget; when the budget is spent the caller gets the
// error and must fail closed. When a channel's posts back up, the Asks
// waiting are shown together in batch messages (burst.go).
type Notifier struct {
	api   MessageAPI
	cfg   NotifierConfig
	log   *slog.Logger
	slots channelpace.Pace
	local *channelpace.Memory // the pace while the shared one fails
	// holder names this process's claims on the shared pace.
	holder string

	mu       sync.Mutex
	queues   map[string]*channelQueue // per channel: Asks and posts waiting to be shown
	seq      uint64                   // the order posts were queued in
	edits    editLane                 // the app's chat.update calls waiting for a slot
	draining sync.WaitGroup
	batching map[[2]string]*batchRender // batch messages being rendered by this process
}

var _ approval.Notifier = (*Notifier)(nil)

// NewNotifier returns a Notifier posting through api.
func NewNotifier(api MessageAPI, cfg NotifierConfig) *Notifier {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ScopeText == nil {
		cfg.ScopeText = func(pending.Ask) string { return "" }
	}
	if cfg.PerChannelInterval <= 0 {
		cfg.PerChannelInterval = time.Second
	}
	if cfg.PerChannelBurst <= 0 {
		cfg.PerChannelBurst = 3
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = 1250 * time.Millisecond
	}
	if cfg.EditBurst <= 0 {
		cfg.EditBurst = 20
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 500 * time.Millisecond
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = 30 * time.Second
	}
	if cfg.BatchWindow <= 0 {
		cfg.BatchWindow = 20 * time.Second
	}
	if cfg.Batches == nil {
		cfg.Batches = batchmsg.NewMemory(0, cfg.Now)
	}
	local := channelpace.NewMemory(cfg.Now)
	pace := cfg.Pace
	if pace == nil {
		pace = local
	}
	return &Notifier{
		api: api, cfg: cfg, log: cfg.Logger, slots: pace, local: local, holder: recordid.New(),
		queues: map[string]*channelQueue{}, batching: map[[2]string]*batchRender{},
	}
}

// Post posts a's message: into the run's thread when the run came from Slack,
// else into the approval channel. It returns where the message went. Its
// errors are *approval.NotPosted, saying in plain words why nobody saw a.
//
// When the channel has no posting slot free, a waits in the channel's queue
// and is shown, with the others waiting, in a batch message (burst.go);
// Post then returns that message. An Ask still waiting as its deadline
// nears gives up shortly before it, so it ends unavailable ("never shown")
// rather than expired.
func (n *Notifier) Post(ctx context.Context, a pending.Ask) (channel, ts string, err error) {
	channel, thread := a.ReplyChannel, a.ReplyThreadTS
	if channel == "" {
		channel, thread = n.cfg.ApprovalChannel, ""
	}
	if channel == "" {
		return "", "", &approval.NotPosted{Reason: "no Slack channel is configured for approval requests", Err: ErrNoChannel}
	}
	q := &queuedAsk{ask: &a, thread: thread, done: make(chan struct{})}
	n.enqueue(ctx, channel, q)
	wctx, cancel := giveUpBefore(ctx, a)
	defer cancel()
	select {
	case <-q.done:
	case <-wctx.Done():
		if n.withdraw(channel, q) {
			return "", "", neverReached(a, channel, context.Cause(wctx))
		}
		<-q.done // on its way to Slack: that call's result stands
	}
	return n.shown(ctx, a, channel, q)
}

// PostThen is Post without waiting for the channel's queue: done gets
// Post's results once, on a goroutine of its own. 10,000 Asks queued for a
// backed-up channel so cost their place in the queue, not a goroutine each
// (approval.Core.Launch uses it). The queue reads *a, and keeps no copy of
// its own, until done is called: the caller must not change it before.
func (n *Notifier) PostThen(ctx context.Context, a *pending.Ask, done func(channel, ts string, err error)) {
	channel, thread := a.ReplyChannel, a.ReplyThreadTS
	if channel == "" {
		channel, thread = n.cfg.ApprovalChannel, ""
	}
	if channel == "" {
		go done("", "", &approval.NotPosted{Reason: "no Slack channel is configured for approval requests", Err: ErrNoChannel})
		return
	}
	q := &queuedAsk{ask: a, thread: thread, done: make(chan struct{}), ctx: ctx}
	q.giveUpAt, _ = giveUpAt(*a)
	// Exactly one of the closures runs: then once the drain took q to
	// Slack, abandon if the drain gave q up before (burst.go).
	q.then = func() { go func() { done(n.shown(ctx, *q.ask, channel, q)) }() }
	q.abandon = func(cause error) { go done("", "", neverReached(*q.ask, channel, cause)) }
	n.enqueue(ctx, channel, q)
}

// neverReached is the Post error of an Ask the channel's queue did not
// reach before it gave up, for cause.
func neverReached(a pending.Ask, channel string, cause error) error {
	return &approval.NotPosted{
		Reason: "the approval request was never shown: Slack's posting queue for the channel did not reach it in time",
		Err:    fmt.Errorf("slackui: ask %s still queued for %s: %w", a.ID, channel, cause),
	}
}

// shown is Post's answer once q's post is over: its error, or where it
// was shown (after scheduling the Ask's reminder and escalations).
func (n *Notifier) shown(ctx context.Context, a pending.Ask, channel string, q *queuedAsk) (string, string, error) {
	if q.err != nil {
		return "", "", &approval.NotPosted{
			Reason: "the approval request could not be posted to Slack",
			Err:    fmt.Errorf("slackui: post ask %s to %s: %w", a.ID, channel, q.err),
		}
	}
	if n.cfg.Followups != nil {
		if err := n.cfg.Followups.Schedule(ctx, a); err != nil {
			n.log.Warn("could not schedule the ask's reminder and escalations", "ask", a.ID, "err", err)
		}
	}
	return q.channel, q.ts, nil
}

// giveUpAt is when an Ask the channel's queue has not reached gives up: a
// little before its deadline, so it ends as never shown before the expiry
// sweep could call it expired (nobody having answered what nobody saw).
// An Ask with no deadline (!ok) never gives up.
func giveUpAt(a pending.Ask) (at time.Time, ok bool) {
	if a.Deadline.IsZero() {
		return time.Time{}, false
	}
	margin := time.Second
	if life := a.Deadline.Sub(a.CreatedAt); !a.CreatedAt.IsZero() && life/10 < margin {
		margin = life / 10
	}
	return a.Deadline.Add(-margin), true
}

// giveUpBefore is ctx, ended at giveUpAt(a).
func giveUpBefore(ctx context.Context, a pending.Ask) (context.Context, context.CancelFunc) {
	at, ok := giveUpAt(a)
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadlineCause(ctx, at, context.DeadlineExceeded)
}

// Update rewrites a's message to its current state (buttons gone once it is
// decided). An Ask that was never posted has nothing to update.
func (n *Notifier) Update(ctx context.Context, a pending.Ask) error {
	if a.Channel == "" || a.MessageTS == "" {
		return nil
	}
	if batched, err := n.updateBatch(ctx, a, PriorityDecision, false); batched || err != nil {
		return errors.Join(err, n.updateCopies(ctx, a, n.render(a)))
	}
	msg := n.render(a)
	err := n.edit(ctx, PriorityDecision, false, a.Channel, a.MessageTS, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	if err != nil {
		err = fmt.Errorf("slackui: update ask %s message: %w", a.ID, err)
	}
	return errors.Join(err, n.updateCopies(ctx, a, msg)) // direct messages (escalate.go)
}

// UpdateExpired updates the messages of Asks the expiry sweep ended. Failures
// are logged: the Asks are already expired, only their messages lag.
func (n *Notifier) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	for _, a := range asks {
		if err := n.Update(ctx, a); err != nil {
			n.log.Warn("could not update expired ask message", "ask", a.ID, "err", err)
		}
	}
}

func (n *Notifier) render(a pending.Ask) Message {
	o := RenderOptions{GrantScope: n.cfg.ScopeText(a), GrantDurations: n.cfg.GrantDurations, Now: n.cfg.Now()}
	if a.Status == pending.StatusPending || a.Status == "" {
		o.Mention = n.cfg.Mention
	}
	return RenderAsk(a, o)
}

// retry runs call until it succeeds, fails permanently, runs out of attempts
// or ctx ends. A 429 waits the Retry-After Slack asked for; other transient
// errors back off exponentially with jitter.
func (n *Notifier) retry(ctx context.Context, method string, call func(context.Context) error) error {
	backoff := n.cfg.RetryBackoff
	var err error
	for attempt := 1; ; attempt++ {
		err = call(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		wait, retryable := n.retryWait(err, backoff)
		if !retryable {
			return err
		}
		if attempt >= n.cfg.MaxAttempts {
			return fmt.Errorf("%s: gave up after %d attempts: %w", method, attempt, err)
		}
		if wait > n.cfg.MaxRetryWait {
			return fmt.Errorf("%s: Slack asked to wait %s, longer than %s: %w", method, wait, n.cfg.MaxRetryWait, err)
		}
		n.log.Debug("retrying Slack call", "method", method, "attempt", attempt, "wait", wait, "err", err)
		if serr := pause(ctx, wait); serr != nil {
			return err
		}
		backoff = min(backoff*2, n.cfg.MaxRetryWait)
	}
}

// retryWait classifies err: how long to wait before the next try, and
// whether another try may help at all.
func (n *Notifier) retryWait(err error, backoff time.Duration) (time.Duration, bool) {
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); ok {
		return rl.RetryAfter, true
	}
	jittered := backoff/2 + rand.N(backoff/2+1)
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok {
		return jittered, sc.Retryable()
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		switch se.Err {
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited":
			return jittered, true
		}
		return 0, false // channel_not_found, not_in_channel, invalid_auth, ...: retrying cannot help
	}
	if _, ok := errors.AsType[*url.Error](err); ok {
		return jittered, true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return jittered, true
	}
	return 0, false
}

// pause waits d, or returns ctx's error when it ends first.
func pause(ctx context.Context, d time.Duration) error {
	if !sleep.For(ctx, d) {
		return ctx.Err()
	}
	return nil
}
