package chatops

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/agent"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

var mentionRe = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// Event handles Events API events: an app_mention starts a run in the
// mention's thread (a reply to it when it is not in a thread yet). Each
// event id is handled once, whichever transport or replica Slack delivered
// it to, however often it retried.
func (o *Ops) Event(ctx context.Context, ev slackevents.EventsAPIEvent) {
	var eventID string
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok {
		eventID = cb.EventID
	}
	if !o.cfg.Sessions.FirstEvent(ctx, eventID) {
		o.log.Info("duplicate event delivery ignored", "event", eventID)
		return
	}
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
		if err := o.cfg.Slack.PostEphemeral(ctx, m.Channel, m.User, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)); err != nil {
			o.log.Warn("ephemeral reply failed", "err", err)
		}
	}
	// Slack names the mentioning user's home team (user_team) in shared
	// channels; a mention without one is taken as of askops' own
	// workspace, where Slack leaves it out (docs/security.md).
	if o.cfg.Workspace != nil && m.UserTeam != "" {
		if err := o.cfg.Workspace.Admits(ctx, m.User, m.UserTeam); err != nil {
			o.log.Warn("mention from outside askops' workspace refused", "user", m.User, "user_team", m.UserTeam, "err", err)
			say(slackui.OutsiderShown(err))
			return
		}
	}
	if task == "" || strings.EqualFold(task, "help") {
		say(o.help())
		return
	}
	if o.cfg.RunsOff != "" {
		say("Runs are off here: " + o.cfg.RunsOff + ".")
		return
	}
	if ok, err := o.cfg.Starters.MayDecide(ctx, m.User); !ok {
		o.log.Info("run refused: not a run starter", "user", m.User, "err", err)
		say("Sorry, you may not start runs here; ask an askops admin to add you to approvals.run_starters.")
		return
	}
	if !o.goTracked(func() { o.startRun(m.Channel, thread, m.User, task, say) }) {
		say("askops is shutting down; try again in a moment.")
	}
}

// startRun runs task for user in channel. With thread empty the run's status
// message starts a new thread; otherwise it is a reply in thread. The thread
// is the run's session: its grants and Asks stay there.
//
// Posting never holds a run back longer than it must, and a slow channel
// never fails one: the status message is queued behind everything more
// urgent in the channel (slackui's priorities) and shows the run's latest
// state once it is out. A run in a thread starts at once. A run typed in a
// channel starts once its status message is out, because that message is
// its thread and so its session; however long the channel makes it wait,
// it is not given up. Only Slack refusing the message for good (askops is
// not in the channel, it is archived) ends the run: then tell reaches the
// user who asked (a run that cannot post could not ask anyone either).
func (o *Ops) startRun(channel, thread, user, task string, tell func(text string)) {
	ctx := o.runsCtx
	id := recordid.NewRun()
	st := &runStatus{id: id, user: user, task: task, state: "starting"}
	up := newStatusUpdater(st, o.log)
	// The message outlives the run's cancellation: the run's end is
	// shown after it.
	up.msg = o.cfg.Slack.Status(context.WithoutCancel(ctx), channel, thread, up.text)
	endRecord := o.recordRun(ctx, id, channel, user, task)
	inThread := thread != ""
	if !inThread {
		_, ts, err := up.msg.Posted(ctx)
		if err != nil {
			endRecord()
			if ctx.Err() != nil {
				// Shutting down before the channel let the message out:
				// it says so if it is posted after all.
				o.log.Warn("run not started: askops is shutting down", "run", id, "channel", channel, "user", user)
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				up.finish(fctx, agent.Result{RunID: id, Status: agent.StatusCancelled})
				cancel()
				o.cfg.Runs.RunEnded("cancelled")
				tell("The run did not start: askops is restarting. Nothing ran; try again in a moment.")
				return
			}
			o.log.Error("could not post run status; run not started", "run", id, "channel", channel, "user", user, "err", err)
			o.cfg.Runs.RunEnded("failed")
			tell(notStartedText(err))
			return
		}
		thread = ts
	}
	spec := agent.RunSpec{
		ID: id, SessionID: channel + "/" + thread, StartedBy: user, Label: "askops in channel " + channel,
		Task: task, Mode: o.startMode(ctx, channel), ModeFor: o.modeFor(channel), ReplyChannel: channel, ReplyThreadTS: thread,
		SessionName: threadName(task), // its start is the run's
	}
	if err := o.cfg.Sessions.Track(ctx, channel, spec.SessionID); err != nil {
		// The run is still judged by the policy; only /askops grants will not list its session.
		o.log.Warn("could not record the run's session for /askops grants", "run", id, "session", spec.SessionID, "err", err)
	}
	o.log.Info("run started", "run", id, "session", spec.SessionID, "by", user)
	run := o.cfg.Runner.Start(ctx, spec, up.event)
	// What follows the end runs on the run's own goroutine, tracked like
	// this one: a waiting run holds no goroutine here.
	o.work.Add(1)
	run.Then(func(res agent.Result) {
		defer o.work.Done()
		endRecord()
		o.ended(ctx, channel, thread, id, res)
		up.finish(context.WithoutCancel(ctx), res)
	})
	if inThread {
		o.goTracked(func() { o.refusedFor(ctx, id, up, tell) })
	}
}

// refusedFor stops run id if Slack refuses its status message for good
// (a run in a thread starts before its message is out), and tells the user
// why.
func (o *Ops) refusedFor(ctx context.Context, id string, up *statusUpdater, tell func(text string)) {
	_, _, err := up.msg.Posted(ctx)
	if err == nil || ctx.Err() != nil {
		return
	}
	if o.cfg.Runner.Stop(id) {
		o.log.Error("could not post run status; run stopped", "run", id, "err", err)
		tell(stoppedText(err))
	}
}

// ended reports run id's end: the count, the log, and the answer in its
// thread. The answer is never dropped: it waits its turn in the channel
// and Slack's failures are tried again with back-off until it is posted,
// or Slack refuses it for good (its thread or channel is gone), which is
// logged as an error with the answer's first line.
func (o *Ops) ended(ctx context.Context, channel, thread, id string, res agent.Result) {
	o.cfg.Runs.RunEnded(string(res.Status))
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
	o.work.Add(1)
	o.cfg.Slack.Enqueue(context.WithoutCancel(ctx), slackui.Post{
		Channel: channel, Priority: slackui.PriorityStatus, Persist: true,
		Message: func() []slack.MsgOption {
			return []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)}
		},
	}, func(_, _ string, err error) {
		defer o.work.Done()
		if err != nil {
			o.log.Error("could not post run answer: Slack refused it for good", "run", id, "channel", channel, "thread", thread,
				"answer", headLine(slackui.Text(text, 200)), "err", err)
		}
	})
}

// notStartedText tells the user why a run did not start: the Slack error,
// and for the usual one what to do.
func notStartedText(err error) string {
	why := "Slack did not take the run's status message"
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		why += " (" + slackui.Text(se.Err, 100) + ")"
		if se.Err == "not_in_channel" || se.Err == "channel_not_found" {
			why += ": invite me to this channel with `/invite @askops`"
		}
	}
	return "The run did not start: " + why + ". Nothing ran."
}

// stoppedText tells the user why a run in a thread was stopped: it started
// at once, and Slack then refused its status message for good.
func stoppedText(err error) string {
	why := strings.TrimSuffix(strings.TrimPrefix(notStartedText(err), "The run did not start: "), ". Nothing ran.")
	return "The run was stopped: " + why + ". It could not have asked anyone here to approve a call either."
}

// startMode is the mode a run in channel starts with: the channel's, or
// the configured one when none is set (""). A failed read starts it in mode
// never: the channel's approvers may have said so.
func (o *Ops) startMode(ctx context.Context, channel string) policy.Mode {
	rctx, cancel := context.WithTimeout(ctx, modeReadTimeout)
	defer cancel()
	ms, ok, err := o.cfg.Sessions.Mode(rctx, channel)
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
func (o *Ops) modeFor(channel string) func(context.Context) (policy.Mode, error) {
	return func(ctx context.Context) (policy.Mode, error) {
		rctx, cancel := context.WithTimeout(ctx, modeReadTimeout)
		defer cancel()
		ms, ok, err := o.cfg.Sessions.Mode(rctx, channel)
		if err != nil || !ok {
			return "", err
		}
		return ms.Mode, nil
	}
}

// modeReadTimeout bounds one read of a channel's mode.
const modeReadTimeout = 2 * time.Second
