package main

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

// ActionRevokeGrant is the button on /askops grants that revokes one grant;
// its value is "SESSION GRANT_ID" (SESSION empty for a standing grant).
const ActionRevokeGrant = "askops_revoke_grant"

// chatOps is askops' conversation surface in serve: the slash command, the
// @-mention that starts a run in a thread, and the run's status message.
type chatOps struct {
	app      *app
	runner   *agent.Runner
	starters *slackui.Approvers
	runsCtx  context.Context
	log      *slog.Logger

	// releaseStops ends this process's answers to /askops stop requests.
	releaseStops func()

	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup
}

func newChatOps(runsCtx context.Context, a *app) (*chatOps, error) {
	runner, err := newRunner(a)
	if err != nil {
		return nil, err
	}
	starters := a.approvers // empty run_starters: the approvers may start runs
	if !a.cfg.Approvals.RunStarters.Empty() {
		starters, err = slackui.NewApprovers(slackui.ApproversConfig{
			Users:  a.cfg.Approvals.RunStarters.Users,
			Groups: a.cfg.Approvals.RunStarters.Usergroups,
			API:    a.slack,
			Logger: a.log.With("component", "run_starters"),
			Now:    a.now,
		})
		if err != nil {
			return nil, fmt.Errorf("approvals.run_starters: %w", err)
		}
	}
	o := &chatOps{app: a, runner: runner, starters: starters, runsCtx: runsCtx, log: a.log.With("component", "chatops")}
	// /askops stop on any replica reaches this process's runs.
	o.releaseStops, err = a.sessions.HandleStops(runsCtx, stopperFor(runner, o.log))
	if err != nil {
		return nil, fmt.Errorf("redis.url: %w", err)
	}
	return o, nil
}

// stopperFor answers stop requests for runner's runs.
func stopperFor(runner *agent.Runner, log *slog.Logger) func(runID, by string) bool {
	return func(runID, by string) bool {
		if !runner.Stop(runID) {
			return false
		}
		log.Info("run stop requested", "run", runID, "by", by)
		return true
	}
}

// Close ends this process's answers to stop requests.
func (o *chatOps) Close() {
	if o.releaseStops != nil {
		o.releaseStops()
	}
}

// StopIntake refuses new runs from now on (shutdown has begun).
func (o *chatOps) StopIntake() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// Wait waits up to d for the runs to end; it reports whether they all did.
func (o *chatOps) Wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { o.runs.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// slashReply is the immediate answer to a slash command.
type slashReply struct {
	ResponseType string        `json:"response_type"`
	Text         string        `json:"text"`
	Blocks       []slack.Block `json:"blocks,omitempty"`
}

func ephemeral(format string, args ...any) *slashReply {
	return &slashReply{ResponseType: "ephemeral", Text: fmt.Sprintf(format, args...)}
}

// SlashCommand answers /askops. It returns within Slack's 3 s: a run is
// started in the background.
func (o *chatOps) SlashCommand(ctx context.Context, cmd slack.SlashCommand) any {
	sub, rest, _ := strings.Cut(strings.TrimSpace(cmd.Text), " ")
	rest = strings.TrimSpace(rest)
	name := o.app.cfg.Slack.Command
	switch strings.ToLower(sub) {
	case "run":
		if rest == "" {
			return ephemeral("Usage: `%s run TASK`", name)
		}
		if ok, err := o.starters.MayDecide(ctx, cmd.UserID); !ok {
			o.log.Info("run refused: not a run starter", "user", cmd.UserID, "err", err)
			return ephemeral("Sorry, you may not start runs here; ask an askops admin to add you to approvals.run_starters.")
		}
		if !o.goRun(func() { o.startRun(cmd.ChannelID, "", cmd.UserID, rest) }) {
			return ephemeral("askops is shutting down; try again in a moment.")
		}
		return ephemeral("Starting a run for: %s", slackui.Text(headLine(rest), 200))
	case "stop":
		if rest == "" {
			return ephemeral("Usage: `%s stop RUN_ID`", name)
		}
		if !o.mayAct(ctx, cmd.UserID) {
			return ephemeral("Sorry, only approvers and run starters may stop runs.")
		}
		return o.stop(ctx, rest, cmd.UserID)
	case "pending":
		return o.pendingReply(ctx, cmd)
	case "grants":
		return o.grantsReply(ctx, cmd)
	case "mode":
		return o.mode(ctx, cmd, strings.ToLower(rest))
	case "", "help":
		return ephemeral("%s", o.help())
	}
	return ephemeral("Unknown subcommand `%s`.\n%s", slackui.Text(sub, 80), o.help())
}

func (o *chatOps) help() string {
	n := o.app.cfg.Slack.Command
	return strings.Join([]string{
		"*askops* runs an AI agent and asks here before risky tool calls.",
		fmt.Sprintf("`%s run TASK` start a run in a new thread (or @-mention me in a thread)", n),
		fmt.Sprintf("`%s stop RUN_ID` stop a run, on whichever askops process runs it; its open Asks are cancelled", n),
		fmt.Sprintf("`%s pending` list this channel's open Asks (approvers and run starters)", n),
		fmt.Sprintf("`%s grants` list the grants of this channel's sessions (approvers and run starters); approvers also see the standing grants and get Revoke buttons", n),
		fmt.Sprintf("`%s mode [ask|never]` show or set how this channel's sessions treat asks: new runs here and the next calls of runs going in its threads (approvers only; per channel, since a slash command carries no thread)", n),
	}, "\n")
}

// stop stops a run wherever it runs: this process's directly, another's
// through the session store, which waits briefly for the owner to confirm.
func (o *chatOps) stop(ctx context.Context, runID, user string) any {
	res, err := o.app.sessions.Stop(ctx, runID, user)
	id := slackui.Text(runID, 100)
	switch {
	case err != nil:
		o.log.Warn("stop request failed", "run", runID, "by", user, "err", err)
		return ephemeral("Could not pass on the stop request for run `%s` right now; try again.", id)
	case res.Stopped && res.Local: // stopperFor logged it
		return ephemeral("Stopping run `%s`; its open Asks are being cancelled.", id)
	case res.Stopped:
		o.log.Info("run stopped by its askops process", "run", runID, "by", user, "at", res.At)
		return ephemeral("Stopping run `%s` (the askops process running it took the request at <!date^%d^{time_secs}|%s>); its open Asks are being cancelled.",
			id, res.At.Unix(), res.At.UTC().Format(time.RFC3339))
	}
	if !o.app.shared() {
		return ephemeral("No live run `%s` here.", id)
	}
	return ephemeral("No askops process confirmed a live run `%s`: it may have ended already (see `%s pending`), or its process did not answer in time; try again.", id, o.app.cfg.Slack.Command)
}

// mode shows or sets the mode of the channel's sessions. Slash commands
// carry no thread, so the mode belongs to the channel; every run in its
// threads reads it before each call.
func (o *chatOps) mode(ctx context.Context, cmd slack.SlashCommand, arg string) any {
	name := o.app.cfg.Slack.Command
	if arg == "" {
		ms, ok, err := o.app.sessions.Mode(ctx, cmd.ChannelID)
		switch {
		case err != nil:
			o.log.Warn("read channel mode", "channel", cmd.ChannelID, "err", err)
			return ephemeral("Could not read this channel's mode right now.")
		case !ok:
			return ephemeral("This channel's sessions use the configured mode `%s`. Set one with `%s mode ask|never`.", o.app.cfg.Policy.Mode, name)
		}
		return ephemeral("This channel's sessions use mode `%s`, set by %s.", slackui.Text(string(ms.Mode), 20), slackui.Person(ms.By))
	}
	mode := policy.Mode(arg)
	if !mode.SessionSettable() {
		return ephemeral("Usage: `%s mode ask|never` (mode full is set in the config only)", name)
	}
	if ok, _ := o.app.approvers.MayDecide(ctx, cmd.UserID); !ok {
		return ephemeral("Sorry, only approvers may change the mode.")
	}
	if err := o.app.sessions.SetMode(ctx, cmd.ChannelID, mode, cmd.UserID); err != nil {
		o.log.Warn("set channel mode", "channel", cmd.ChannelID, "mode", mode, "err", err)
		return ephemeral("Could not set the mode right now; nothing changed.")
	}
	o.log.Info("mode set", "channel", cmd.ChannelID, "mode", mode, "by", cmd.UserID)
	return ephemeral("This channel's sessions now use mode `%s`: new runs here and the next tool calls of runs already going in this channel's threads, on every askops replica. It is per channel (a slash command carries no thread) and lapses after %s without a run here.",
		mode, shortDuration(o.app.cfg.Approvals.SessionTTL.D()))
}

// shortDuration drops the zero tail Go prints: 12h0m0s is 12h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// goRun starts fn as a tracked run unless intake has stopped. The check and
// the Add happen under the lock StopIntake takes, so Wait never races an Add.
func (o *chatOps) goRun(fn func()) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.runs.Go(fn)
	return true
}

func (o *chatOps) mayAct(ctx context.Context, user string) bool {
	if ok, _ := o.app.approvers.MayDecide(ctx, user); ok {
		return true
	}
	ok, _ := o.starters.MayDecide(ctx, user)
	return ok
}

// viewer is what a user may see of a channel's chat-ops state.
type viewer int

const (
	viewerNone     viewer = iota // neither an approver nor a run starter
	viewerStarter                // may start runs here: the channel's Asks and session grants
	viewerApprover               // also standing grants, and Revoke buttons
)

// viewerOf says what user may see. An approver may see everything of the
// channel. A run starter is whoever may start a run in it (the check
// /askops run makes): no per-user record of past runs exists, and one that
// did would add nothing, since such a user becomes a starter of this
// channel with one command. A failed check shows nothing.
func (o *chatOps) viewerOf(ctx context.Context, user string) viewer {
	if ok, _ := o.app.approvers.MayDecide(ctx, user); ok {
		return viewerApprover
	}
	if ok, _ := o.starters.MayDecide(ctx, user); ok {
		return viewerStarter
	}
	return viewerNone
}

// inChannel reports whether a was posted (or is to be posted) in channel,
// top level or in one of its threads.
func inChannel(a pending.Ask, channel string) bool {
	return channel != "" && (a.Channel == channel || (a.Channel == "" && a.ReplyChannel == channel))
}

func (o *chatOps) pendingReply(ctx context.Context, cmd slack.SlashCommand) any {
	if o.viewerOf(ctx, cmd.UserID) == viewerNone {
		o.log.Info("pending refused: not an approver or run starter", "user", cmd.UserID, "channel", cmd.ChannelID)
		return ephemeral("Sorry, only approvers and run starters may list this channel's open Asks.")
	}
	all, err := o.app.asks.ListPending(ctx, pending.Filter{})
	if err != nil {
		o.log.Warn("list pending asks", "err", err)
		return ephemeral("Could not read the open Asks right now.")
	}
	var asks []pending.Ask
	for _, a := range all {
		if inChannel(a, cmd.ChannelID) {
			asks = append(asks, a)
		}
	}
	if len(asks) == 0 {
		return ephemeral("No open Asks in this channel.")
	}
	lines := []string{fmt.Sprintf("*%d open Ask(s) in this channel:*", len(asks))}
	for i, a := range asks {
		if i == 20 {
			lines = append(lines, fmt.Sprintf("…and %d more", len(asks)-i))
			break
		}
		line := fmt.Sprintf("• `%s` %s — run `%s`, until <!date^%d^{time}|%s>", slackui.Text(a.Tool, 60), slackui.Text(headLine(a.Summary), 80),
			slackui.Text(a.RunID, 100), a.Deadline.Unix(), a.Deadline.UTC().Format(time.RFC3339))
		if link, ok := messageLink(cmd.TeamDomain, a.Channel, a.MessageTS); ok {
			line += " <" + link + "|open>"
		}
		lines = append(lines, line)
	}
	return ephemeral("%s", strings.Join(lines, "\n"))
}

// channelSession reports whether session is one of channel's, as the
// session store records them (the runs started there).
func (o *chatOps) channelSession(ctx context.Context, channel, session string) (bool, error) {
	sessions, err := o.app.sessions.Sessions(ctx, channel)
	if err != nil {
		return false, err
	}
	return channel != "" && slices.Contains(sessions, session), nil
}

func (o *chatOps) grantsReply(ctx context.Context, cmd slack.SlashCommand) any {
	who := o.viewerOf(ctx, cmd.UserID)
	if who == viewerNone {
		o.log.Info("grants refused: not an approver or run starter", "user", cmd.UserID, "channel", cmd.ChannelID)
		return ephemeral("Sorry, only approvers and run starters may list this channel's grants.")
	}
	var list []grants.Grant
	if who == viewerApprover {
		standing, err := o.app.grants.List(ctx, "")
		if err != nil {
			o.log.Warn("list standing grants", "err", err)
			return ephemeral("Could not read the grants right now.")
		}
		list = append(list, standing...)
	}
	channelSessions, err := o.app.sessions.Sessions(ctx, cmd.ChannelID)
	if err != nil {
		o.log.Warn("list channel sessions", "channel", cmd.ChannelID, "err", err)
		return ephemeral("Could not read the grants right now.")
	}
	for _, session := range channelSessions {
		gs, err := o.app.grants.List(ctx, session)
		if err != nil {
			o.log.Warn("list session grants", "session", session, "err", err)
			continue
		}
		list = append(list, gs...)
	}
	if len(list) == 0 {
		if who == viewerApprover {
			return ephemeral("No session grants for runs started in this channel, and no standing grants.")
		}
		return ephemeral("No session grants for runs started in this channel.")
	}
	var blocks []slack.Block
	for i, g := range list {
		if i == 40 { // Block Kit allows 50 blocks
			break
		}
		kind := "standing"
		if !g.Standing() {
			kind = "session " + slackui.Text(g.SessionID, 200)
		}
		text := fmt.Sprintf("`%s` (%s) by %s", slackui.Text(g.Scope.String(), 2000), kind, slackui.Person(g.By))
		var accessory *slack.Accessory
		if who == viewerApprover { // only approvers may revoke
			btn := slack.NewButtonBlockElement(ActionRevokeGrant, g.SessionID+" "+g.ID, slack.NewTextBlockObject(slack.PlainTextType, "Revoke", false, false)).WithStyle(slack.StyleDanger)
			accessory = slack.NewAccessory(btn)
		}
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, accessory))
	}
	return &slashReply{ResponseType: "ephemeral", Text: fmt.Sprintf("%d grant(s)", len(list)), Blocks: blocks}
}

// Interaction handles the clicks chat-ops owns (Revoke) and passes every
// other one (the Ask buttons and modals) to slackui.
func (o *chatOps) Interaction(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error) {
	if cb.Type == slack.InteractionTypeBlockActions {
		for _, act := range cb.ActionCallback.BlockActions {
			if act != nil && act.ActionID == ActionRevokeGrant {
				o.revoke(ctx, cb, act.Value)
				return nil, nil
			}
		}
	}
	return o.app.interactions.Handle(ctx, cb)
}

func (o *chatOps) revoke(ctx context.Context, cb slack.InteractionCallback, value string) {
	session, id, _ := strings.Cut(value, " ")
	reply := func(text string) {
		go func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_, _ = o.app.slack.PostEphemeralContext(rctx, cb.Channel.ID, cb.User.ID, slack.MsgOptionText(text, false))
		}()
	}
	if ok, _ := o.app.approvers.MayDecide(ctx, cb.User.ID); !ok {
		reply("Sorry, only approvers may revoke grants.")
		return
	}
	// Only this channel's grants (and standing ones, which only approvers
	// were shown): a Revoke clicked here cannot reach another channel's.
	channel := cb.Container.ChannelID
	if channel == "" {
		channel = cb.Channel.ID
	}
	if session != "" {
		ok, err := o.channelSession(ctx, channel, session)
		if err != nil {
			o.log.Warn("revoke: list channel sessions", "channel", channel, "err", err)
			reply("Could not check that grant right now; nothing changed. Please try again.")
			return
		}
		if !ok {
			o.log.Info("revoke refused: grant of another channel's session", "grant", id, "session", session, "channel", channel, "by", cb.User.ID)
			reply("That grant does not belong to a session of this channel; nothing changed.")
			return
		}
	}
	if err := o.app.grants.Revoke(ctx, session, id); err != nil {
		o.log.Warn("revoke grant", "grant", id, "session", session, "err", err)
		if grants.ErrorCode(err) == grants.CodeNotFound {
			reply("That grant is gone already (revoked, expired, or never made).")
			return
		}
		reply("Could not revoke that grant right now; nothing changed. Please try again.")
		return
	}
	o.log.Info("grant revoked", "grant", id, "session", session, "by", cb.User.ID)
	reply("Grant revoked.")
}

var mentionRe = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// Event handles Events API events: an app_mention starts a run in the
// mention's thread (a reply to it when it is not in a thread yet).
func (o *chatOps) Event(ctx context.Context, ev slackevents.EventsAPIEvent) {
	m, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || m.BotID != "" {
		return // not a mention, or a bot (never let bots start runs)
	}
	task := strings.TrimSpace(mentionRe.ReplaceAllString(m.Text, ""))
	thread := m.ThreadTimeStamp
	if thread == "" {
		thread = m.TimeStamp
	}
	say := func(text string) {
		if _, err := o.app.slack.PostEphemeralContext(ctx, m.Channel, m.User, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)); err != nil {
			o.log.Warn("ephemeral reply failed", "err", err)
		}
	}
	if task == "" || strings.EqualFold(task, "help") {
		say(o.help())
		return
	}
	if ok, err := o.starters.MayDecide(ctx, m.User); !ok {
		o.log.Info("run refused: not a run starter", "user", m.User, "err", err)
		say("Sorry, you may not start runs here; ask an askops admin to add you to approvals.run_starters.")
		return
	}
	if !o.goRun(func() { o.startRun(m.Channel, thread, m.User, task) }) {
		say("askops is shutting down; try again in a moment.")
	}
}

// startRun runs task for user in channel. With thread empty the run's status
// message starts a new thread; otherwise it is a reply in thread. The thread
// is the run's session: its grants and Asks stay there.
func (o *chatOps) startRun(channel, thread, user, task string) {
	ctx := o.runsCtx
	id := "run-" + randomID()
	st := &runStatus{id: id, user: user, task: task, state: "starting"}
	opts := []slack.MsgOption{slack.MsgOptionText(st.text(), false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, statusTS, err := o.app.slack.PostMessageContext(pctx, channel, opts...)
	cancel()
	if err != nil {
		o.log.Error("could not post run status; run not started", "channel", channel, "user", user, "err", err)
		o.app.metrics.RunEnded("failed")
		return
	}
	if thread == "" {
		thread = statusTS
	}
	spec := agent.RunSpec{
		ID: id, SessionID: channel + "/" + thread, StartedBy: user, Label: "askops in channel " + channel,
		Task: task, Mode: o.startMode(ctx, channel), ModeFor: o.modeFor(channel), ReplyChannel: channel, ReplyThreadTS: thread,
	}
	if err := o.app.sessions.Track(ctx, channel, spec.SessionID); err != nil {
		// The run is still judged by the policy; only /askops grants will not list its session.
		o.log.Warn("could not record the run's session for /askops grants", "run", id, "session", spec.SessionID, "err", err)
	}
	up := newStatusUpdater(o.app.slack, channel, statusTS, st, o.log)
	o.log.Info("run started", "run", id, "session", spec.SessionID, "by", user)
	run := o.runner.Start(ctx, spec, up.event)
	res := run.Wait()
	up.finish(res)
	o.app.metrics.RunEnded(string(res.Status))
	o.log.Info("run ended", "run", id, "status", res.Status, "iterations", res.Iterations, "err", res.Err)

	// The answer is a reply in the thread, so it notifies the thread. It
	// is the model's text, which a prompt injection may have written: it
	// goes out inert and redacted like everything else.
	var text string
	switch res.Status {
	case agent.StatusFinished:
		text = slackui.Text(res.Answer, slackui.MaxPostText)
	case agent.StatusCancelled:
		text = fmt.Sprintf("Run `%s` was stopped.", slackui.Text(id, 100))
	default:
		text = fmt.Sprintf("Run `%s` failed: %s", slackui.Text(id, 100), slackui.Text(fmt.Sprint(res.Err), 3000))
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if _, _, err := o.app.slack.PostMessageContext(actx, channel, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)); err != nil {
		o.log.Warn("could not post run answer", "run", id, "err", err)
	}
}

// startMode is the mode a run in channel starts with: the channel's, or
// the configured one when none is set (""). A failed read starts it in mode
// never: the channel's approvers may have said so.
func (o *chatOps) startMode(ctx context.Context, channel string) policy.Mode {
	rctx, cancel := context.WithTimeout(ctx, modeReadTimeout)
	defer cancel()
	ms, ok, err := o.app.sessions.Mode(rctx, channel)
	switch {
	case err != nil:
		o.log.Warn("could not read the channel's mode; the run starts in mode never", "channel", channel, "err", err)
		return policy.ModeNever
	case !ok:
		return ""
	}
	return ms.Mode
}

// modeFor is what a run in channel reads before each call: the channel's
// mode as /askops mode sets it, on any replica.
func (o *chatOps) modeFor(channel string) func(context.Context) (policy.Mode, error) {
	return func(ctx context.Context) (policy.Mode, error) {
		rctx, cancel := context.WithTimeout(ctx, modeReadTimeout)
		defer cancel()
		ms, ok, err := o.app.sessions.Mode(rctx, channel)
		if err != nil || !ok {
			return "", err
		}
		return ms.Mode, nil
	}
}

// modeReadTimeout bounds one read of a channel's mode.
const modeReadTimeout = 2 * time.Second

// runStatus is what the status message shows.
type runStatus struct {
	id, user, task string
	state          string // starting, running, waiting for approval, finished, failed, stopped
	step           int
	calls          int
	last           string
}

func (s *runStatus) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Run* `%s` by %s: %s\n", slackui.Text(s.id, 100), slackui.Person(s.user), slackui.Text(headLine(s.task), 300))
	fmt.Fprintf(&b, "_%s_ · step %d · %d tool call(s)", s.state, s.step, s.calls)
	if s.last != "" {
		fmt.Fprintf(&b, "\nlast: %s", s.last)
	}
	return b.String()
}

// statusUpdater edits the run's status message as events arrive, at most
// about once a second (Slack's chat.update limit), the last state always.
type statusUpdater struct {
	api     *slack.Client
	channel string
	ts      string
	log     *slog.Logger

	mu    sync.Mutex
	st    *runStatus
	dirty chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

func newStatusUpdater(api *slack.Client, channel, ts string, st *runStatus, log *slog.Logger) *statusUpdater {
	u := &statusUpdater{api: api, channel: channel, ts: ts, st: st, log: log, dirty: make(chan struct{}, 1), done: make(chan struct{})}
	u.wg.Go(u.loop)
	return u
}

func (u *statusUpdater) event(e agent.Event) {
	u.mu.Lock()
	s := u.st
	if e.Iteration > s.step {
		s.step = e.Iteration
	}
	switch e.Kind {
	case agent.EventStarted:
		s.state = "running"
	case agent.EventToolCall:
		s.calls++
		s.state = "running"
		s.last = fmt.Sprintf("`%s` %s", slackui.Text(e.Tool, 60), slackui.Text(headLine(e.Summary), 120))
	case agent.EventAsked:
		s.state = "waiting for approval"
	case agent.EventDecided:
		s.state = "running"
		s.last += " → " + slackui.Text(outcomeText(string(e.Outcome)), 40)
	}
	u.mu.Unlock()
	select {
	case u.dirty <- struct{}{}:
	default:
	}
}

func (u *statusUpdater) finish(res agent.Result) {
	u.mu.Lock()
	switch res.Status {
	case agent.StatusFinished:
		u.st.state = "finished"
	case agent.StatusCancelled:
		u.st.state = "stopped"
	default:
		u.st.state = "failed"
	}
	if res.Iterations > u.st.step {
		u.st.step = res.Iterations
	}
	u.mu.Unlock()
	close(u.done)
	u.wg.Wait()
}

func (u *statusUpdater) loop() {
	for {
		select {
		case <-u.dirty:
			u.update()
			select { // pace the edits
			case <-time.After(time.Second):
			case <-u.done:
			}
		case <-u.done:
			u.update()
			return
		}
	}
}

func (u *statusUpdater) update() {
	u.mu.Lock()
	text := u.st.text()
	u.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, _, err := u.api.UpdateMessageContext(ctx, u.channel, u.ts, slack.MsgOptionText(text, false)); err != nil {
		u.log.Warn("could not update run status", "run", u.st.id, "err", err)
	}
}

// headLine is s's first line, marked when more follows. It is not cut:
// slackui.Text cuts after redacting, so a secret is never cut into a piece
// the redaction no longer recognises.
func headLine(s string) string {
	if line, _, more := strings.Cut(s, "\n"); more {
		return line + " …"
	}
	return s
}

// messageLink is the permalink of a message, built only from parts that
// look like what Slack sends (a team domain, a channel id, a message ts),
// so nothing stored or typed can turn it into markup.
func messageLink(domain, channel, ts string) (string, bool) {
	if !teamDomainRe.MatchString(domain) || !channelIDRe.MatchString(channel) || !messageTSRe.MatchString(ts) {
		return "", false
	}
	return fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", domain, channel, strings.ReplaceAll(ts, ".", "")), true
}

var (
	teamDomainRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	channelIDRe  = regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`)
	messageTSRe  = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)
