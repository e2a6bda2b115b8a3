package slackui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/internal/durationtext"

	"github.com/slack-go/slack"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/internal/tick"
	"github.com/askops/askops/pending"
)

// Follow-ups of an Ask nobody answers: one reminder in its thread, then the
// escalation levels (a mention in the thread and, with DM, the Ask with its
// buttons as a direct message to every target). The schedule lives in the
// store (pending.Steps), so any replica carries out a step, exactly one
// claims it, and a replica killed mid-step leaves it to another.

// EscalationLevel is one level of approvals.escalate.
type EscalationLevel struct {
	After  time.Duration // counted from the Ask's creation
	Users  []string
	Groups []string
	DM     bool // send the Ask, with its buttons, to each target user
}

// StepStore is what follow-ups need from the pending store; both stores
// satisfy it.
type StepStore interface {
	pending.Steps
	pending.DirectSteps // directs.go: an escalation's DMs exactly once
	// Get re-reads an Ask after a DM copy is recorded (copies.go).
	Get(ctx context.Context, id string) (pending.Ask, error)
}

// DirectMessageAPI opens direct message channels; *slack.Client satisfies
// it (conversations.open, scope im:write).
type DirectMessageAPI interface {
	OpenConversationContext(ctx context.Context, params *slack.OpenConversationParameters) (*slack.Channel, bool, bool, error)
}

// DirectHistory reads a DM channel's messages (conversations.history,
// scope im:history); *slack.Client satisfies it. A replica that takes over
// an escalation looks in it for a DM its predecessor may have posted.
type DirectHistory interface {
	GetConversationHistoryContext(ctx context.Context, params *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error)
}

// UserGroupNames lists the team's user groups (usergroups.list, scope
// usergroups:read); *slack.Client satisfies it.
type UserGroupNames interface {
	GetUserGroupsContext(ctx context.Context, options ...slack.GetUserGroupsOption) ([]slack.UserGroup, error)
}

// EscalationConfig configures an Escalation.
type EscalationConfig struct {
	// RemindAfter is when the one reminder is due, counted from the Ask's
	// creation; 0 means no reminder.
	RemindAfter time.Duration
	Levels      []EscalationLevel
	// ApproverUsers and ApproverGroups are mentioned by the reminder.
	ApproverUsers, ApproverGroups []string

	Steps StepStore
	// Groups lists user groups' members (escalation targets given as
	// groups): their DMs and their right to decide.
	Groups UserGroupAPI
	DM     DirectMessageAPI
	// History, needed with DM, tells a replica that takes an escalation
	// over whether its predecessor's DM went out; without it (or when
	// Slack does not answer) a DM that may have gone out is not sent
	// again.
	History DirectHistory
	// Names, if set, names user groups by their @handle in the reason an
	// expiry records ("escalated to @oncall at 10m"); without it, or when
	// Slack does not answer, by id.
	Names UserGroupNames

	// Lease is how long a claimed step is this replica's before another
	// may take it over; it bounds the step's Slack work too. Default 2m.
	Lease time.Duration
	// Every is how often due steps are looked for; default 500ms.
	Every  time.Duration
	Logger *slog.Logger
}

// Escalation schedules and carries out the follow-ups of Asks, and answers
// whether an escalation target may decide an Ask escalated to them.
type Escalation struct {
	cfg     EscalationConfig
	log     *slog.Logger
	members *Approvers // user group members, cached (nil: no groups)

	mu      sync.Mutex
	handles map[string]string // user group id → @handle
	namedAt time.Time         // last usergroups.list attempt
	// directs are the DM channels with users (user → D…), as opened; a
	// user's DM with the app never changes.
	directs map[string]string

	// at, if set, is called at each point of an escalation's DM (a test's
	// seam): an error abandons the step there, as a kill would.
	at func(ctx context.Context, p stepPoint, user string) error
}

// stepPoint is a point in an escalation step where a replica can die.
type stepPoint int

const (
	beforeReserve stepPoint = iota // targets known, nothing recorded or shown
	beforePost                     // the DM reserved, not posted
	beforeConfirm                  // the DM posted, its ts not recorded
	afterConfirm                   // the DM recorded as a copy
)

func (e *Escalation) reach(ctx context.Context, p stepPoint, user string) error {
	if e.at == nil {
		return nil
	}
	return e.at(ctx, p, user)
}

// NewEscalation returns the follow-ups of cfg; with neither a reminder nor
// a level it returns nil, which schedules nothing.
func NewEscalation(cfg EscalationConfig) (*Escalation, error) {
	if cfg.RemindAfter <= 0 && len(cfg.Levels) == 0 {
		return nil, nil
	}
	if cfg.Steps == nil {
		return nil, errors.New("slackui: escalation needs a step store")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Every <= 0 {
		cfg.Every = 500 * time.Millisecond
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	e := &Escalation{cfg: cfg, log: cfg.Logger}
	var groups []string
	for _, l := range cfg.Levels {
		groups = append(groups, l.Groups...)
		if l.DM && cfg.DM == nil {
			return nil, errors.New("slackui: escalation by direct message needs a Slack client")
		}
	}
	if len(groups) > 0 {
		if cfg.Groups == nil {
			return nil, errors.New("slackui: escalation to user groups needs a Slack client")
		}
		var err error
		if e.members, err = NewApprovers(ApproversConfig{Groups: groups, API: cfg.Groups, Logger: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Schedule records a's follow-ups in the store. Steps due at or after the
// deadline are left out: the Ask is over by then.
func (e *Escalation) Schedule(ctx context.Context, a pending.Ask) error {
	if e == nil {
		return nil
	}
	var steps []pending.DueStep
	add := func(name string, after time.Duration) {
		if due := a.CreatedAt.Add(after); due.Before(a.Deadline) {
			steps = append(steps, pending.DueStep{Name: name, Due: due})
		}
	}
	if e.cfg.RemindAfter > 0 {
		add(pending.StepRemind, e.cfg.RemindAfter)
	}
	for i, l := range e.cfg.Levels {
		add(pending.StepEscalatePrefix+strconv.Itoa(i+1), l.After)
	}
	return e.cfg.Steps.ScheduleSteps(ctx, a.ID, steps)
}

// Run carries out due steps through n until ctx ends, and then returns
// nil: a failed pass is logged and tried again next tick. Every replica
// runs it; the store hands each step to one of them. The wiring starts it
// and drains it (cmd/bot's loops); run and ask start it only over the
// in-memory store, where nobody else could.
func (e *Escalation) Run(ctx context.Context, n *Notifier) error {
	if e == nil {
		return nil
	}
	tick.Every(ctx, e.cfg.Every, func() {
		if _, err := e.RunDue(ctx, n); err != nil {
			e.log.Warn("follow-ups: could not claim due steps", "err", err)
		}
	})
	return nil
}

// RunDue claims the steps due now, carries them out concurrently, and
// returns how many it finished.
func (e *Escalation) RunDue(ctx context.Context, n *Notifier) (int, error) {
	claimed, err := e.cfg.Steps.ClaimSteps(ctx, e.cfg.Lease, 50)
	// One goroutine per Ask, its steps in due order (the reminder before
	// the escalation when both came due at once).
	var order []string
	byAsk := map[string][]pending.ClaimedStep{}
	for _, c := range claimed {
		if byAsk[c.Ask.ID] == nil {
			order = append(order, c.Ask.ID)
		}
		byAsk[c.Ask.ID] = append(byAsk[c.Ask.ID], c)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for _, id := range order {
		wg.Go(func() {
			// The work must end well inside the lease, or another replica
			// takes the step over and does it again.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.Lease/2)
			defer cancel()
			for _, c := range byAsk[id] {
				if e.carryOut(sctx, n, c) {
					mu.Lock()
					done++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return done, err
}

// carryOut does one claimed step's Slack work and finishes it. A step whose
// work failed is not finished: its lease lapses and it is tried again.
func (e *Escalation) carryOut(ctx context.Context, n *Notifier, c pending.ClaimedStep) bool {
	a, ok := e.shown(ctx, c.Ask)
	if !ok {
		e.log.Warn("follow-ups: the ask's message is not recorded; the step waits for it (it is tried again when its lease lapses)", "ask", a.ID, "step", c.Name)
		return false
	}
	c.Ask = a
	var d pending.StepDone
	var err error
	switch {
	case c.Name == pending.StepRemind:
		d, err = e.remind(ctx, n, a)
	case strings.HasPrefix(c.Name, pending.StepEscalatePrefix):
		i, perr := strconv.Atoi(strings.TrimPrefix(c.Name, pending.StepEscalatePrefix))
		if perr != nil || i < 1 || i > len(e.cfg.Levels) {
			// The configuration changed since the Ask was created: the
			// level is gone, so is its step.
			e.log.Warn("follow-ups: dropping a step of a level no longer configured", "ask", a.ID, "step", c.Name)
			_, _ = e.cfg.Steps.FinishStep(ctx, c, pending.StepDone{Kind: pending.EventEscalated, Text: "level no longer configured"})
			return false
		}
		d, err = e.escalate(ctx, n, c, e.cfg.Levels[i-1])
	default:
		e.log.Warn("follow-ups: unknown step", "ask", a.ID, "step", c.Name)
		return false
	}
	if err != nil {
		e.log.Warn("follow-ups: step failed; it is tried again when its lease lapses", "ask", a.ID, "step", c.Name, "err", err)
		return false
	}
	d.Tried, d.Unanswered = triedText(pending.Followup{Name: c.Name, After: d.After, To: d.To}, e.groupName(ctx)), unansweredText(a)
	ok, err = e.cfg.Steps.FinishStep(ctx, c, d)
	switch {
	case err != nil:
		e.log.Warn("follow-ups: step done but not recorded; another replica may do it again", "ask", a.ID, "step", c.Name, "err", err)
	case !ok:
		e.log.Warn("follow-ups: step done after its lease lapsed; another replica may have done it too", "ask", a.ID, "step", c.Name)
	default:
		e.log.Info("follow-up done", "ask", a.ID, "step", c.Name, "to", d.To)
	}
	return ok
}

// shown returns a once its message is recorded, re-reading it meanwhile:
// a follow-up points to its Ask and never goes before it is shown. The
// steps are scheduled as the Ask is shown, a moment before its message is
// recorded, so a step due by then (its Ask waited for a busy channel past
// the step's time) is claimed before the record has it. false: ctx ended
// or the Ask did before its message was recorded.
func (e *Escalation) shown(ctx context.Context, a pending.Ask) (pending.Ask, bool) {
	t := time.NewTicker(e.cfg.Every / 5)
	defer t.Stop()
	for a.Channel == "" || a.MessageTS == "" {
		if _, ended := a.Outcome(); ended {
			return a, false
		}
		select {
		case <-ctx.Done():
			return a, false
		case <-t.C:
		}
		got, err := e.cfg.Steps.Get(ctx, a.ID)
		if err != nil {
			e.log.Warn("follow-ups: could not re-read an ask waiting for its message", "ask", a.ID, "err", err)
			continue
		}
		a = got
	}
	return a, true
}

// thread is where an Ask's follow-ups are posted: the thread the Ask is in
// (a run's), or the thread under its own message.
func (e *Escalation) thread(n *Notifier, a pending.Ask) (channel, threadTS string) {
	channel = a.Channel
	if channel == "" {
		channel = a.ReplyChannel
	}
	if channel == "" {
		channel = n.cfg.ApprovalChannel
	}
	threadTS = a.MessageTS
	if a.ReplyThreadTS != "" && channel == a.ReplyChannel {
		threadTS = a.ReplyThreadTS
	}
	return channel, threadTS
}

func (e *Escalation) postInThread(ctx context.Context, n *Notifier, a pending.Ask, text string) error {
	channel, thread := e.thread(n, a)
	if channel == "" {
		return ErrNoChannel
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	_, _, err := n.Say(ctx, PriorityFollowup, channel, opts...)
	return err
}

func (e *Escalation) remind(ctx context.Context, n *Notifier, a pending.Ask) (pending.StepDone, error) {
	who := mentions(e.cfg.ApproverUsers, e.cfg.ApproverGroups)
	text := fmt.Sprintf(":bell: Reminder: this approval request (%s) still waits for a decision; it expires %s.",
		inlineCode(a.Tool, 40), slackDate(a.Deadline))
	if who != "" {
		text = who + " " + text
	}
	if err := e.postInThread(ctx, n, a, text); err != nil {
		return pending.StepDone{}, err
	}
	return pending.StepDone{
		Kind: pending.EventReminded, After: e.cfg.RemindAfter,
		To: strings.Join(slices.Concat(e.cfg.ApproverUsers, e.cfg.ApproverGroups), ","), Text: "reminded the approvers in the Ask's thread",
	}, nil
}

// errStepLost is an escalation that found its claim lost or its Ask ended
// before it showed anything.
var errStepLost = errors.New("slackui: the step's claim was lost or its ask ended")

// escalate carries out level l for the claimed step c. Who the level
// reaches is recorded, and each target's DM reserved, before any message
// goes out: whoever a message reaches may decide at once, and a replica
// that takes the step over finds which DMs were sent (pending.DirectSteps)
// and sends none twice.
func (e *Escalation) escalate(ctx context.Context, n *Notifier, c pending.ClaimedStep, l EscalationLevel) (pending.StepDone, error) {
	a, step := c.Ask, c.Name
	d := pending.StepDone{
		Kind: pending.EventEscalated, After: l.After,
		To: strings.Join(slices.Concat(l.Users, l.Groups), ","), Text: "escalated (" + step + ")",
	}
	// What can be done twice without anyone noticing comes first: learning
	// the targets and opening their DM channels.
	var dms []pending.DirectCopy
	if l.DM {
		users, err := e.targets(ctx, l)
		if err != nil {
			e.log.Warn("follow-ups: some escalation targets are unknown", "ask", a.ID, "step", step, "err", err)
		}
		for _, u := range users {
			ch, _, _, err := e.cfg.DM.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{u}})
			if err != nil {
				e.log.Warn("follow-ups: could not open a direct message", "ask", a.ID, "user", u, "err", err)
				continue
			}
			e.rememberDirect(u, ch.ID)
			dms = append(dms, pending.DirectCopy{User: u, Channel: ch.ID})
		}
		d.Text += fmt.Sprintf(", sent directly to %d of %d", len(dms), len(users))
	}
	if err := e.reach(ctx, beforeReserve, ""); err != nil {
		return pending.StepDone{}, err
	}
	begun, ok, err := e.cfg.Steps.BeginStep(ctx, c, d.To, dms)
	switch {
	case err != nil:
		return pending.StepDone{}, err
	case !ok:
		return pending.StepDone{}, errStepLost
	}
	text := fmt.Sprintf("%s :rotating_light: Escalated: nobody has decided this approval request (%s) in %s; it expires %s.",
		mentions(l.Users, l.Groups), inlineCode(a.Tool, 40), durationtext.Short(l.After), slackDate(a.Deadline))
	if len(dms) > 0 {
		text += " The request was sent to you directly too."
	}
	if err := e.postInThread(ctx, n, a, text); err != nil {
		return pending.StepDone{}, err
	}
	for _, dm := range dms {
		r, ok := begun.Ask.Directs.For(dm.User)
		if !ok || r.TS != "" {
			continue // sent and recorded by a predecessor (or its recipient's click)
		}
		if err := e.sendDirect(ctx, n, begun, r); err != nil {
			if errors.Is(err, errAbandoned) {
				return pending.StepDone{}, err
			}
			e.log.Warn("follow-ups: could not send the Ask directly", "ask", a.ID, "user", dm.User, "err", err)
		}
	}
	return d, nil
}

// errAbandoned wraps an error of the test's seam: the step ends there.
var errAbandoned = errors.New("slackui: escalation step abandoned")

// targets are a level's users and its groups' members, each once.
func (e *Escalation) targets(ctx context.Context, l EscalationLevel) ([]string, error) {
	users := slices.Clone(l.Users)
	var errs []error
	for _, g := range l.Groups {
		m, err := e.members.groupMembers(ctx, g)
		if err != nil {
			errs = append(errs, err)
		}
		users = append(users, m...)
	}
	slices.Sort(users)
	return slices.Compact(users), errors.Join(errs...)
}

// sendDirect sends the Ask with its buttons as the reserved DM r, unless
// a predecessor's reservation (not this claim's) already went out, and
// records it as a copy, so its decision updates it.
func (e *Escalation) sendDirect(ctx context.Context, n *Notifier, b pending.Begun, r pending.DirectCopy) error {
	a := b.Ask
	if !slices.Contains(b.Fresh, r.User) {
		// Reserved by a replica that did not finish: it may have died
		// before its post or after it. Only Slack knows.
		ts, found, err := e.findDirect(ctx, a, r.Channel)
		switch {
		case err != nil:
			e.log.Warn("follow-ups: cannot tell whether an earlier attempt sent the Ask directly; not sending it again", "ask", a.ID, "user", r.User, "err", err)
			return nil
		case found:
			e.log.Info("follow-ups: an earlier attempt sent the Ask directly; recording it", "ask", a.ID, "user", r.User, "ts", ts)
			return e.confirmDirect(ctx, n, a, r, ts)
		}
	}
	if err := e.reach(ctx, beforePost, r.User); err != nil {
		return fmt.Errorf("%w: %w", errAbandoned, err)
	}
	msg := RenderAsk(a, RenderOptions{GrantScope: n.cfg.ScopeText(a), GrantDurations: n.cfg.GrantDurations, Now: n.cfg.Now()}) // the buttons of its message
	posted, ts, err := n.Say(ctx, PriorityFollowup, r.Channel, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	if err != nil {
		return err
	}
	if posted != "" && posted != r.Channel {
		return fmt.Errorf("slackui: the DM to %s landed in %s, not its channel %s", r.User, posted, r.Channel)
	}
	if err := e.reach(ctx, beforeConfirm, r.User); err != nil {
		return fmt.Errorf("%w: %w", errAbandoned, err)
	}
	if err := e.confirmDirect(ctx, n, a, r, ts); err != nil {
		return err
	}
	if err := e.reach(ctx, afterConfirm, r.User); err != nil {
		return fmt.Errorf("%w: %w", errAbandoned, err)
	}
	return nil
}

// confirmDirect records r's message ts and brings it up to date.
func (e *Escalation) confirmDirect(ctx context.Context, n *Notifier, shown pending.Ask, r pending.DirectCopy, ts string) error {
	if err := e.cfg.Steps.ConfirmDirect(ctx, shown.ID, r.User, r.Channel, ts); err != nil {
		return err
	}
	return e.catchUp(ctx, n, shown, r.Channel, ts) // copies.go
}

// findDirect looks in a DM channel, since a was created, for the bot's
// message carrying a's buttons.
func (e *Escalation) findDirect(ctx context.Context, a pending.Ask, channel string) (ts string, found bool, err error) {
	if e.cfg.History == nil {
		return "", false, errors.New("slackui: no Slack client to read the direct message's history")
	}
	params := &slack.GetConversationHistoryParameters{
		ChannelID: channel, Limit: 200, Inclusive: true,
		Oldest: fmt.Sprintf("%d.%06d", a.CreatedAt.Unix(), a.CreatedAt.Nanosecond()/1000),
	}
	for range 10 { // pages; a DM with the app holds few messages
		resp, err := e.cfg.History.GetConversationHistoryContext(ctx, params)
		if err != nil {
			return "", false, fmt.Errorf("slackui: read the history of %s: %w", channel, err)
		}
		for _, m := range resp.Messages {
			if m.BotID != "" && carriesAsk(m.Blocks.BlockSet, a.ID) {
				return m.Timestamp, true, nil
			}
		}
		if !resp.HasMore || resp.ResponseMetaData.NextCursor == "" {
			return "", false, nil
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
	return "", false, fmt.Errorf("slackui: the history of %s is too long to search", channel)
}

// carriesAsk reports whether blocks hold the buttons of the Ask id (those
// every open Ask's message carries).
func carriesAsk(blocks []slack.Block, id string) bool {
	return buttonFor(blocks, ActionApprove, id) || buttonFor(blocks, ActionDeny, id)
}

// ConfirmDirect records the DM ts in channel as user's reserved DM of the
// Ask askID: a click on it, by its recipient, came before its sender
// recorded it, or its sender died before it could.
func (e *Escalation) ConfirmDirect(ctx context.Context, askID, user, channel, ts string) error {
	if e == nil {
		return errors.New("slackui: no escalation is configured to record a direct message")
	}
	return e.cfg.Steps.ConfirmDirect(ctx, askID, user, channel, ts)
}

// DirectWith reports whether channel is user's direct message with the
// app, whoever opened it: Slack's answer to conversations.open for user,
// which opens nothing new for a DM that exists (and is remembered).
func (e *Escalation) DirectWith(ctx context.Context, user, channel string) (bool, error) {
	switch {
	case user == "" || channel == "":
		return false, nil
	case e == nil || e.cfg.DM == nil:
		return false, errors.New("slackui: no escalation by direct message is configured to say who a DM is to")
	}
	e.mu.Lock()
	known, ok := e.directs[user]
	e.mu.Unlock()
	if ok {
		return known == channel, nil
	}
	ch, _, _, err := e.cfg.DM.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil {
		return false, fmt.Errorf("slackui: open the direct message with %s: %w", user, err)
	}
	e.rememberDirect(user, ch.ID)
	return ch.ID == channel, nil
}

func (e *Escalation) rememberDirect(user, channel string) {
	if channel == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.directs == nil {
		e.directs = map[string]string{}
	}
	e.directs[user] = channel
}

// MayDecideEscalated reports whether user is a target of an escalation
// level that has begun for a (as recorded on the Ask before the level's
// first message went out).
func (e *Escalation) MayDecideEscalated(ctx context.Context, user string, a pending.Ask) (bool, error) {
	if e == nil || user == "" {
		return false, nil
	}
	// Who the levels begun reach (recorded before their first message)
	// and, for a record of an earlier release, who the fired ones did
	// (Remove in v0.2.0: no such Ask is still open by then).
	targets := strings.Split(a.Reached, ",")
	for _, f := range a.Followups.Entries() {
		if f.Kind() == pending.EventEscalated {
			targets = append(targets, strings.Split(f.To, ",")...)
		}
	}
	slices.Sort(targets)
	var errs []error
	for _, t := range slices.Compact(targets) {
		switch {
		case t == user:
			return true, nil
		case strings.HasPrefix(t, "S") && e.members != nil:
			ok, err := e.members.inNamedGroup(ctx, t, user)
			if ok {
				return true, nil
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return false, errors.Join(errs...)
}

// groupMembers returns the members of a configured group, from the cache.
func (ap *Approvers) groupMembers(ctx context.Context, id string) ([]string, error) {
	g := ap.groups[id]
	if g == nil {
		return nil, fmt.Errorf("slackui: user group %s is not configured", id)
	}
	if _, err := ap.inGroup(ctx, id, g, ""); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for m := range g.members {
		out = append(out, m)
	}
	slices.Sort(out)
	return out, nil
}

// inNamedGroup reports whether user is in the configured group id.
func (ap *Approvers) inNamedGroup(ctx context.Context, id, user string) (bool, error) {
	g := ap.groups[id]
	if g == nil {
		return false, nil
	}
	return ap.inGroup(ctx, id, g, user)
}

// mentions are Slack mentions of users and groups, space-separated.
func mentions(users, groups []string) string {
	var out []string
	for _, u := range users {
		out = append(out, "<@"+u+">")
	}
	for _, g := range groups {
		out = append(out, "<!subteam^"+g+">")
	}
	return strings.Join(out, " ")
}

// triedText is what a follow-up did, for the reason an expiry of its Ask
// records: the store makes "nobody answered in 15m (reminded at 5m,
// escalated to S_ONCALL at 10m)" of unansweredText and these. The model,
// bot ask and the hooks read it, so it names ids, not Slack mentions.
func triedText(f pending.Followup, groupName func(id string) string) string {
	switch {
	case f.Kind() == pending.EventReminded:
		return "reminded at " + durationtext.Short(f.After)
	case f.Kind() == pending.EventEscalated && f.To != "":
		var to []string
		for t := range strings.SplitSeq(f.To, ",") {
			if strings.HasPrefix(t, "S") {
				t = groupName(t)
			}
			to = append(to, t)
		}
		return "escalated to " + strings.Join(to, ", ") + " at " + durationtext.Short(f.After)
	}
	return ""
}

// groupName returns a function naming a user group by its @handle, from a
// list fetched at most every five minutes; by id when it is not known.
func (e *Escalation) groupName(ctx context.Context) func(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cfg.Names != nil && time.Since(e.namedAt) > 5*time.Minute {
		e.namedAt = time.Now()
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		groups, err := e.cfg.Names.GetUserGroupsContext(lctx)
		cancel()
		if err != nil {
			e.log.Warn("follow-ups: could not list user groups; naming them by id", "err", err)
		} else {
			e.handles = map[string]string{}
			for _, g := range groups {
				if g.Handle != "" {
					e.handles[g.ID] = "@" + g.Handle
				}
			}
		}
	}
	handles := e.handles
	return func(id string) string {
		if h, ok := handles[id]; ok {
			return h
		}
		return id
	}
}

func unansweredText(a pending.Ask) string {
	if n := a.Needed(); n > 1 {
		// Some may have approved (the tally beside it says who): "nobody
		// answered" would be untrue.
		return fmt.Sprintf("the %d approvals needed did not come in %s", n, durationtext.Short(a.Deadline.Sub(a.CreatedAt)))
	}
	return "nobody answered in " + durationtext.Short(a.Deadline.Sub(a.CreatedAt))
}

// followupsText says what was tried on an Ask nobody answered, for its
// message ("reminded at 5m, escalated to <!subteam^S1> at 10m"), from its
// view (askview.Followup); empty if nothing was.
func followupsText(fs []askview.Followup) string {
	var tried []string
	for _, f := range fs {
		switch f.Did {
		case pending.EventReminded:
			tried = append(tried, "reminded at "+durationtext.Short(f.After))
		case pending.EventEscalated:
			tried = append(tried, "escalated to "+mentions(f.Users, f.Groups)+" at "+durationtext.Short(f.After))
		}
	}
	return strings.Join(tried, ", ")
}
