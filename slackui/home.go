package slackui

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// The App Home tab: each user who opens it sees the Asks they may decide,
// with the same buttons as the Ask's message (a click there is the same
// click, bound to that Ask: see homeBound), and their own runs: with
// HomeConfig.Runs every run in progress on any replica, each marked when it
// waits for a decision (home_runs.go); without it, the runs that wait.
//
// Keeping it current across replicas: the app_home_opened event reaches
// one replica, which remembers the viewer; that replica re-reads the
// pending Asks every Poll while it has viewers (one ZRANGE and one
// pipelined read, wherever the Ask was created or decided), and at once
// when an Ask changes on it (HomeNotifier). A Home is republished only
// when what it shows changed, at most once per Debounce per user, and all
// publishes share one pace (views.publish is Tier 4, about 100 a minute
// for the workspace); a 429 waits its Retry-After (Notifier.retry).

// HomeAPI publishes Home views; *slack.Client satisfies it.
type HomeAPI interface {
	PublishViewContext(ctx context.Context, req slack.PublishViewContextRequest) (*slack.ViewResponse, error)
}

// HomeAsks lists the pending Asks; pending.Store satisfies it.
type HomeAsks interface {
	ListPending(ctx context.Context, f pending.Filter) ([]pending.Ask, error)
}

// HomeConfig wires a Home.
type HomeConfig struct {
	Asks HomeAsks
	API  HomeAPI
	// Notifier renders each Ask's buttons exactly as its message has them
	// (so Offers agrees with the Home) and retries rate-limited calls.
	Notifier  *Notifier
	Approvers DecisionAuthority

	// Poll is how often the pending Asks are re-read while anyone has
	// the Home open; default 2s.
	Poll time.Duration
	// Debounce is the least time between two publishes of one user's
	// Home; changes meanwhile are shown together; default 3s.
	Debounce time.Duration
	// PublishEvery paces views.publish for the whole workspace; default
	// 700ms (Tier 4: 100+ a minute).
	PublishEvery time.Duration
	// ViewerTTL is how long after opening the Home a user is kept current;
	// default 24h.
	ViewerTTL time.Duration
	// Viewers, if set, keeps the viewers where every replica sees them
	// (home_viewers.go); without it each replica keeps its own.
	Viewers HomeViewerStore
	// Runs, if set, lists the viewers' runs in progress on every replica
	// (home_runs.go); without it a Home lists only runs waiting on an Ask.
	Runs HomeRuns

	Logger *slog.Logger
	Now    func() time.Time
}

// AskAuthority says whether a user may decide one particular Ask (rules
// beyond the approver list: no self-approval, escalation targets). When
// HomeConfig.Approvers also implements it, the Home lists only the Asks it
// allows; otherwise every pending Ask goes to every approver.
type AskAuthority interface {
	MayDecideAsk(ctx context.Context, userID string, a pending.Ask) (bool, error)
}

// maxHomeAsks bounds the Asks listed with buttons: at most six blocks
// each (divider, effects, gist, who, quorum, actions) and five around
// them, and a Home holds at most 100 blocks.
const maxHomeAsks = 15

// maxHomeRuns bounds the runs listed.
const maxHomeRuns = 10

// noticeFor is how long a Home shows what a click on it did.
const noticeFor = time.Minute

// HomeNotices shows a user, on their Home, what their click there did;
// *Home satisfies it.
type HomeNotices interface {
	Notice(user, text string)
}

// Home keeps the App Home tabs of this replica's viewers current.
type Home struct {
	cfg HomeConfig
	log *slog.Logger

	wake chan struct{} // capacity 1: "look now"

	mu      sync.Mutex
	viewers map[string]*homeViewer
	lastSet string // fingerprint of the pending set last read
	runs    homeRuns
	nextAt  time.Time
}

type homeViewer struct {
	openedAt  time.Time
	dirty     bool
	notBefore time.Time // Debounce after the last publish
	shown     string    // digest of the view last published

	notice      string // what their last click on the Home did, shown on top
	noticeUntil time.Time
}

// NewHome builds a Home; its refresher is Run, which the wiring starts
// and stops (without it no Home is published).
func NewHome(cfg HomeConfig) *Home {
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = 3 * time.Second
	}
	if cfg.PublishEvery <= 0 {
		cfg.PublishEvery = 700 * time.Millisecond
	}
	if cfg.ViewerTTL <= 0 {
		cfg.ViewerTTL = 24 * time.Hour
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Home{cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), viewers: map[string]*homeViewer{}}
}

// Opened records that user opened the Home tab and publishes it soon.
func (h *Home) Opened(user string) {
	if !isSlackUserID(user) {
		return
	}
	h.mu.Lock()
	v := h.viewers[user]
	if v == nil {
		v = &homeViewer{}
		h.viewers[user] = v
	}
	v.openedAt, v.dirty = h.cfg.Now(), true
	h.mu.Unlock()
	h.rememberViewer(user)
	h.nudge()
}

// Notice shows text on top of user's Home for a minute, at once (it
// answers a click the user just made there, as an ephemeral answers one
// on a message).
func (h *Home) Notice(user, text string) {
	h.mu.Lock()
	v := h.viewers[user]
	if v == nil {
		v = &homeViewer{openedAt: h.cfg.Now()}
		h.viewers[user] = v
	}
	v.notice, v.noticeUntil = text, h.cfg.Now().Add(noticeFor)
	v.dirty, v.notBefore = true, time.Time{}
	h.mu.Unlock()
	h.nudge()
}

// Changed says an Ask changed on this replica: look at once instead of at
// the next poll.
func (h *Home) Changed() { h.nudge() }

func (h *Home) nudge() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Events wraps an Events API handler: app_home_opened (the Home tab) is
// handled here, everything else goes to next.
func (h *Home) Events(next func(context.Context, slackevents.EventsAPIEvent)) func(context.Context, slackevents.EventsAPIEvent) {
	return func(ctx context.Context, ev slackevents.EventsAPIEvent) {
		if e, ok := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent); ok {
			if e.Tab == "" || e.Tab == "home" {
				h.Opened(e.User)
			}
			return
		}
		if next != nil {
			next(ctx, ev)
		}
	}
}

// Run is the refresher: it re-reads and publishes every Poll, at once when
// nudged (Opened, Notice, Changed), and when a debounced Home falls due,
// until ctx ends; it returns nil then (a failed read or publish is logged
// and tried again). One Run per Home.
func (h *Home) Run(ctx context.Context) error {
	poll := time.NewTicker(h.cfg.Poll)
	defer poll.Stop()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.wake:
		case <-poll.C:
		case <-due.C:
		}
		next := h.refresh(ctx)
		due.Reset(next)
	}
}

// refresh re-reads the pending Asks (if anyone is watching), marks every
// viewer dirty when they changed, and publishes the dirty Homes that are
// due. It returns how long until the next one is due.
func (h *Home) refresh(ctx context.Context) time.Duration {
	h.syncViewers(ctx)
	now := h.cfg.Now()
	h.mu.Lock()
	for u, v := range h.viewers {
		if now.Sub(v.openedAt) > h.cfg.ViewerTTL {
			delete(h.viewers, u)
		}
	}
	n := len(h.viewers)
	h.mu.Unlock()
	if n == 0 {
		return time.Hour
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	asks, err := h.cfg.Asks.ListPending(lctx, pending.Filter{})
	cancel()
	if err != nil {
		h.log.Warn("home: could not list pending asks", "err", err)
		return h.cfg.Poll
	}
	h.readRuns(ctx)
	set := pendingFingerprint(asks)
	h.mu.Lock()
	if set != h.lastSet {
		h.lastSet = set
		for _, v := range h.viewers {
			v.dirty = true
		}
	}
	var due []string
	wait := time.Hour
	for u, v := range h.viewers {
		if v.notice != "" {
			if !now.Before(v.noticeUntil) {
				v.notice, v.dirty = "", true
			} else {
				wait = min(wait, v.noticeUntil.Sub(now))
			}
		}
		switch {
		case !v.dirty:
		case !now.Before(v.notBefore):
			due = append(due, u)
		default:
			wait = min(wait, v.notBefore.Sub(now))
		}
	}
	h.mu.Unlock()
	slices.Sort(due)
	for _, u := range due {
		if ctx.Err() != nil {
			break
		}
		h.publish(ctx, u, asks)
	}
	return wait
}

// pendingFingerprint changes whenever an Ask is created or ends, gains a
// vote or has a follow-up carried out.
func pendingFingerprint(asks []pending.Ask) string {
	ids := make([]string, len(asks))
	for i, a := range asks {
		// Votes and fired follow-ups too: a tally on every copy, and an
		// escalation target's buttons once their level fired.
		ids[i] = a.ID + "/" + a.MessageTS + "/" + string(a.Votes) + "/" + string(a.Followups)
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// publish renders user's Home and publishes it unless it shows what the
// last one did.
func (h *Home) publish(ctx context.Context, user string, asks []pending.Ask) {
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	mayDecide, err := h.cfg.Approvers.MayDecide(pctx, user)
	if err != nil {
		h.log.Warn("home: approver check failed; showing no buttons", "user", user, "err", err)
	}
	var decidable, mine []pending.Ask
	aa, perAsk := h.cfg.Approvers.(AskAuthority)
	for _, a := range asks {
		if a.Status != pending.StatusPending {
			continue
		}
		if a.StartedBy == user {
			mine = append(mine, a)
		}
		if (mayDecide || beyondApprovers(aa)) && (!perAsk || h.mayDecideAsk(pctx, aa, user, a)) {
			decidable = append(decidable, a)
		}
	}
	view := h.Render(mayDecide, decidable, mine)
	if running, ok := h.runsOf(user); ok {
		setRunsText(&view, h.runsRecordText(running, mine))
	}
	// Clean from here on: a Notice or change arriving while this one is
	// published marks the viewer dirty again, for the next pass (clearing
	// it after publishing would lose what came in between).
	h.mu.Lock()
	if v := h.viewers[user]; v != nil {
		v.dirty = false
		if v.notice != "" {
			view.Blocks.BlockSet = slices.Insert(view.Blocks.BlockSet, 1, slack.Block(contextBlock("askops_home_notice", ":information_source: "+v.notice)))
		}
	}
	h.mu.Unlock()
	b, _ := json.Marshal(view.Blocks)
	digest := fmt.Sprintf("%x", sha256.Sum256(b))
	// When, last: it changes every time, so it is not part of the digest.
	view.Blocks.BlockSet = append(view.Blocks.BlockSet, contextBlock("askops_home_updated", "Updated "+slackDate(h.cfg.Now())))
	h.mu.Lock()
	v := h.viewers[user]
	if v == nil {
		h.mu.Unlock()
		return
	}
	same := v.shown == digest
	h.mu.Unlock()
	if same || !h.claimView(pctx, user, digest) {
		h.mu.Lock()
		if v := h.viewers[user]; v != nil {
			v.shown = digest // another replica published it
		}
		h.mu.Unlock()
		return
	}
	err = h.cfg.Notifier.retry(pctx, "views.publish", func(ctx context.Context) error {
		if err := h.pace(ctx); err != nil {
			return err
		}
		_, err := h.cfg.API.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
	if err != nil {
		h.releaseView(pctx, user, digest) // so any replica tries again
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.viewers[user]; v != nil {
		v.notBefore = h.cfg.Now().Add(h.cfg.Debounce)
		if err != nil {
			v.dirty = true // try again after the debounce
			h.log.Warn("home: views.publish failed", "user", user, "err", err)
			return
		}
		v.shown = digest
	}
}

// mayDecideAsk asks aa; any doubt leaves the Ask off the Home.
func (h *Home) mayDecideAsk(ctx context.Context, aa AskAuthority, user string, a pending.Ask) bool {
	ok, err := aa.MayDecideAsk(ctx, user, a)
	if err != nil {
		h.log.Warn("home: per-ask approver check failed; not listing the ask", "user", user, "ask", a.ID, "err", err)
	}
	return ok && err == nil
}

// pace waits for the next views.publish slot of the workspace (GCRA, as
// Notifier.pace does per channel, with a burst of 5).
func (h *Home) pace(ctx context.Context) error {
	const burst = 5
	h.mu.Lock()
	now := h.cfg.Now()
	due := now
	if h.nextAt.After(now) {
		due = h.nextAt
	}
	slot := due.Add(-(burst - 1) * h.cfg.PublishEvery)
	if slot.Before(now) {
		slot = now
	}
	h.nextAt = due.Add(h.cfg.PublishEvery)
	h.mu.Unlock()
	return pause(ctx, slot.Sub(now))
}

// Render is a Home: the Asks its viewer may decide, each with its
// message's buttons, then the viewer's own runs that wait for a decision
// (mine). mayDecide says whether the viewer is an approver at all.
func (h *Home) Render(mayDecide bool, decidable, mine []pending.Ask) slack.HomeTabViewRequest {
	blocks := []slack.Block{headerBlock("askops")}
	switch {
	case len(decidable) > 0:
		head := fmt.Sprintf("*Waiting for your decision:* %d", len(decidable))
		if k := notShown(decidable); k > 0 {
			// Slack's pace holds them back; here they can be decided now.
			head += fmt.Sprintf(" · :hourglass: %d not yet in their channel (it is busy): decide them here", k)
		}
		blocks = append(blocks, sectionBlock("askops_home_decide", head))
	case mayDecide:
		blocks = append(blocks, sectionBlock("askops_home_decide", "*Nothing is waiting for your decision.*"))
	default:
		blocks = append(blocks, sectionBlock("askops_home_decide", "_You are not one of askops' approvers, so no request waits for your decision._"))
	}
	for i, a := range decidable {
		if i == maxHomeAsks {
			blocks = append(blocks, contextBlock("askops_home_more", fmt.Sprintf("…and %d more: see the approval channel.", len(decidable)-maxHomeAsks)))
			break
		}
		blocks = append(blocks, h.askBlocks(a)...)
	}
	blocks = append(blocks, slack.NewDividerBlock(), sectionBlock("askops_home_runs", h.runsText(mine)))
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}, CallbackID: "askops_home"}
}

// notShown counts the Asks whose message is not posted yet: queued for
// a busy channel.
func notShown(asks []pending.Ask) int {
	k := 0
	for _, a := range asks {
		if a.MessageTS == "" {
			k++
		}
	}
	return k
}

// askBlocks are one Ask on the Home: what, who and until when, and the
// actions block of its message (buttons, confirm dialog and all).
func (h *Home) askBlocks(a pending.Ask) []slack.Block {
	cv := askview.Of(a, messageRedactLimit)
	who := []string{"started by " + Person(a.StartedBy)}
	if a.Label != "" {
		who = append(who, "agent "+inlineCode(a.Label, 100))
	}
	if a.Reason != "" {
		who = append(who, "why: "+Text(a.Reason, 200))
	}
	who = append(who, "decide by "+slackDate(a.Deadline))
	if a.MessageTS == "" {
		who = append(who, "not yet in its channel: waiting for Slack's pace")
	}
	blocks := []slack.Block{slack.NewDividerBlock()}
	if t := effectsText(cv.Effects); t != "" {
		// What it does, first, as on the message.
		blocks = append(blocks, sectionBlock("askops_home_effects_"+a.ID, t))
	}
	blocks = append(blocks,
		sectionBlock("askops_home_ask_"+a.ID, askGist(a, cv)),
		contextBlock("askops_home_who_"+a.ID, strings.Join(who, " · ")))
	if q, ok := quorumBlock(a).(*slack.ContextBlock); ok { // "1 of 2 approvals: @ana", as on the message
		q.BlockID += "_" + a.ID // block ids are unique within a view
		blocks = append(blocks, q)
	}
	open := a
	open.Status, open.DecidedBy, open.DecisionReason = pending.StatusPending, "", ""
	for _, b := range h.cfg.Notifier.render(open).Blocks {
		if ab, ok := b.(*slack.ActionBlock); ok {
			blocks = append(blocks, slack.NewActionBlock("askops_home_actions_"+a.ID, ab.Elements.ElementSet...))
		}
	}
	return blocks
}

func (h *Home) runsText(mine []pending.Ask) string {
	if len(mine) == 0 {
		return "*Your runs:* none is waiting for a decision."
	}
	lines := []string{fmt.Sprintf("*Your runs waiting for a decision:* %d", len(mine))}
	for i, a := range mine {
		if i == maxHomeRuns {
			lines = append(lines, fmt.Sprintf("…and %d more", len(mine)-maxHomeRuns))
			break
		}
		run := a.RunID
		if a.Label != "" {
			run = a.Label
		}
		lines = append(lines, "• "+inlineCode(run, 60)+": "+askGist(a, askview.Of(a, messageRedactLimit))+", asked "+slackDate(a.CreatedAt))
	}
	return strings.Join(lines, "\n")
}

// homeBinds binds a click on a Home button to its Ask: the Home the click
// came from (Slack sends its blocks, as published) must carry that button
// for that Ask, and the Ask's own message must offer it (Offers), so a
// Home click is exactly a click on the message.
func (i *Interactions) homeBinds(cb slack.InteractionCallback, a pending.Ask, actionID string) error {
	if !buttonFor(cb.View.Blocks.BlockSet, actionID, a.ID) {
		return &errNotBound{why: fmt.Sprintf("click on ask %s from Home view %s, which does not carry that button", a.ID, cb.View.ID)}
	}
	if !i.cfg.Notifier.Offers(a, actionID) {
		return &errNotBound{why: fmt.Sprintf("action %s on ask %s was not offered on its message", actionID, a.ID)}
	}
	return nil
}

// fromHome reports whether a click came from the App Home tab.
func fromHome(cb slack.InteractionCallback) bool {
	return cb.View.Type == slack.VTHomeTab && cb.Container.Type == "view"
}

// HomeNotifier is a Notifier whose every post and update of an Ask also
// refreshes the Homes of this replica at once.
type HomeNotifier struct {
	*Notifier
	Home *Home
}

// Post implements approval.Notifier.
func (n HomeNotifier) Post(ctx context.Context, a pending.Ask) (string, string, error) {
	n.Home.Changed() // the Ask is decidable here while it waits for its channel
	ch, ts, err := n.Notifier.Post(ctx, a)
	n.Home.Changed()
	return ch, ts, err
}

// PostThen is Notifier.PostThen with the Home told of the post, as Post
// tells it (without it, the embedded Notifier's PostThen would show an
// Ask the App Home never republished).
func (n HomeNotifier) PostThen(ctx context.Context, a *pending.Ask, done func(channel, ts string, err error)) {
	n.Home.Changed() // the Ask is decidable here while it waits for its channel
	n.Notifier.PostThen(ctx, a, func(ch, ts string, err error) {
		n.Home.Changed()
		done(ch, ts, err)
	})
}

// Update implements approval.Notifier.
func (n HomeNotifier) Update(ctx context.Context, a pending.Ask) error {
	err := n.Notifier.Update(ctx, a)
	n.Home.Changed()
	return err
}

// UpdateExpired implements ExpiredUpdater.
func (n HomeNotifier) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	n.Notifier.UpdateExpired(ctx, asks)
	n.Home.Changed()
}
