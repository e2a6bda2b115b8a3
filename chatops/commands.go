package chatops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/askops/askops/internal/durationtext"

	"github.com/slack-go/slack"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/storeerr"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
	"github.com/askops/askops/slackui"
)

// ActionRevokeGrant is the button on /askops grants that revokes one grant;
// its value is "SESSION GRANT_ID" (SESSION empty for a standing grant).
const ActionRevokeGrant = "askops_revoke_grant"

// SlashReply is the immediate answer to a slash command.
type SlashReply struct {
	ResponseType string        `json:"response_type"`
	Text         string        `json:"text"`
	Blocks       []slack.Block `json:"blocks,omitempty"`
}

func ephemeral(format string, args ...any) *SlashReply {
	return &SlashReply{ResponseType: "ephemeral", Text: fmt.Sprintf(format, args...)}
}

// SlashCommand answers /askops. It returns within Slack's 3 s: a run is
// started in the background.
//
// Each invocation is handled once: a signed request stays valid for five
// minutes, so a captured `/askops run` could be delivered again (to any
// replica); its trigger_id, unique per invocation, makes the second
// delivery start nothing (and get no reply).
func (o *Ops) SlashCommand(ctx context.Context, cmd slack.SlashCommand) any {
	if cmd.TriggerID != "" && !o.cfg.Sessions.FirstEvent(ctx, "command:"+cmd.TriggerID) {
		o.log.Warn("duplicate slash command delivery ignored", "user", cmd.UserID, "command", cmd.Command)
		return nil
	}
	if o.cfg.Workspace != nil {
		if err := o.cfg.Workspace.AdmitsCommand(ctx, cmd); err != nil {
			o.log.Warn("slash command from outside askops' workspace refused", "user", cmd.UserID, "team", cmd.TeamID, "enterprise", cmd.EnterpriseID, "err", err)
			return ephemeral("%s", slackui.OutsiderShown(err))
		}
	}
	sub, rest, _ := strings.Cut(strings.TrimSpace(cmd.Text), " ")
	rest = strings.TrimSpace(rest)
	name := o.cfg.Command
	switch strings.ToLower(sub) {
	case "run":
		if rest == "" {
			return ephemeral("Usage: `%s run TASK`", name)
		}
		if o.cfg.RunsOff != "" {
			return ephemeral("Runs are off here: %s.", o.cfg.RunsOff)
		}
		if ok, err := o.cfg.Starters.MayDecide(ctx, cmd.UserID); !ok {
			o.log.Info("run refused: not a run starter", "user", cmd.UserID, "err", err)
			return ephemeral("Sorry, you may not start runs here; ask an askops admin to add you to approvals.run_starters.")
		}
		// The command's response_url reaches the user even where askops
		// cannot post (not in the channel).
		tell := func(text string) {
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
			defer cancel()
			if err := o.cfg.Slack.Respond(tctx, cmd.ChannelID, cmd.ResponseURL, slack.MsgOptionText(text, false)); err != nil {
				o.log.Warn("could not tell the user the run did not start", "user", cmd.UserID, "err", err)
			}
		}
		if !o.goTracked(func() { o.startRun(cmd.ChannelID, "", cmd.UserID, rest, tell) }) {
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

func (o *Ops) help() string {
	n := o.cfg.Command
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
func (o *Ops) stop(ctx context.Context, runID, user string) any {
	res, err := o.cfg.Sessions.Stop(ctx, runID, user)
	id := slackui.Text(runID, 100)
	switch {
	case sessions.ErrorCode(err) == sessions.CodeInvalid:
		// Trying again would not help: say what is wrong with the id.
		return ephemeral("`%s` is not a run id: %s.", id, slackui.Text(storeerr.Message(err), 200))
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
	if !o.cfg.Shared { // no other process could run it
		return ephemeral("No live run `%s` here.", id)
	}
	return ephemeral("No askops process confirmed a live run `%s`: it may have ended already (see `%s pending`), or its process did not answer in time; try again.", id, o.cfg.Command)
}

// mode shows or sets the mode of the channel's sessions. Slash commands
// carry no thread, so the mode belongs to the channel; every run in its
// threads reads it before each call.
func (o *Ops) mode(ctx context.Context, cmd slack.SlashCommand, arg string) any {
	name := o.cfg.Command
	if arg == "" {
		ms, ok, err := o.cfg.Sessions.Mode(ctx, cmd.ChannelID)
		switch {
		case err != nil:
			o.log.Warn("read channel mode", "channel", cmd.ChannelID, "err", err)
			return ephemeral("Could not read this channel's mode right now.")
		case !ok:
			return ephemeral("This channel's sessions use the configured mode `%s`. Set one with `%s mode ask|never`.", o.cfg.Mode, name)
		}
		return ephemeral("This channel's sessions use mode `%s`, set by %s.", slackui.Text(string(ms.Mode), 20), slackui.Person(ms.By))
	}
	mode := policy.Mode(arg)
	if !mode.SessionSettable() {
		return ephemeral("Usage: `%s mode ask|never` (mode full is set in the config only)", name)
	}
	if ok, _ := o.cfg.Approvers.MayDecide(ctx, cmd.UserID); !ok {
		return ephemeral("Sorry, only approvers may change the mode.")
	}
	if err := o.cfg.Sessions.SetMode(ctx, cmd.ChannelID, mode, cmd.UserID); err != nil {
		o.log.Warn("set channel mode", "channel", cmd.ChannelID, "mode", mode, "err", err)
		return ephemeral("Could not set the mode right now; nothing changed.")
	}
	o.log.Info("mode set", "channel", cmd.ChannelID, "mode", mode, "by", cmd.UserID)
	return ephemeral("This channel's sessions now use mode `%s`: new runs here and the next tool calls of runs already going in this channel's threads, on every askops replica. It is per channel (a slash command carries no thread) and lapses after %s without a run here.",
		mode, durationtext.Short(o.cfg.SessionTTL))
}

func (o *Ops) pendingReply(ctx context.Context, cmd slack.SlashCommand) any {
	if o.viewerOf(ctx, cmd.UserID) == viewerNone {
		o.log.Info("pending refused: not an approver or run starter", "user", cmd.UserID, "channel", cmd.ChannelID)
		return ephemeral("Sorry, only approvers and run starters may list this channel's open Asks.")
	}
	all, err := o.cfg.Asks.ListPending(ctx, pending.Filter{})
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
		if a.Needed() > 1 {
			line += fmt.Sprintf(" — %d of %d approvals", a.Counted(), a.Needed()) // people, as the store counts them
		}
		if link, ok := messageLink(cmd.TeamDomain, a.Channel, a.MessageTS); ok {
			line += " <" + link + "|open>"
		}
		lines = append(lines, line)
	}
	return ephemeral("%s", strings.Join(lines, "\n"))
}

func (o *Ops) grantsReply(ctx context.Context, cmd slack.SlashCommand) any {
	who := o.viewerOf(ctx, cmd.UserID)
	if who == viewerNone {
		o.log.Info("grants refused: not an approver or run starter", "user", cmd.UserID, "channel", cmd.ChannelID)
		return ephemeral("Sorry, only approvers and run starters may list this channel's grants.")
	}
	var list []grants.Grant
	if who == viewerApprover {
		standing, err := o.cfg.Grants.List(ctx, "")
		if err != nil {
			o.log.Warn("list standing grants", "err", err)
			return ephemeral("Could not read the grants right now.")
		}
		list = append(list, standing...)
	}
	channelSessions, err := o.cfg.Sessions.Sessions(ctx, cmd.ChannelID)
	if err != nil {
		o.log.Warn("list channel sessions", "channel", cmd.ChannelID, "err", err)
		return ephemeral("Could not read the grants right now.")
	}
	for _, session := range channelSessions {
		gs, err := o.cfg.Grants.List(ctx, session)
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
		text := fmt.Sprintf("`%s` (%s) by %s, %s", slackui.Text(g.Scope.String(), 2000), kind, slackui.Person(g.By), grantLife(g, o.cfg.Now()))
		var accessory *slack.Accessory
		if who == viewerApprover { // only approvers may revoke
			btn := slack.NewButtonBlockElement(ActionRevokeGrant, g.SessionID+" "+g.ID, slack.NewTextBlockObject(slack.PlainTextType, "Revoke", false, false)).WithStyle(slack.StyleDanger)
			accessory = slack.NewAccessory(btn)
		}
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, accessory))
	}
	return &SlashReply{ResponseType: "ephemeral", Text: fmt.Sprintf("%d grant(s)", len(list)), Blocks: blocks}
}

// Interaction handles the clicks chat-ops owns (Revoke) and passes every
// other one (the Ask buttons and modals) to slackui.
func (o *Ops) Interaction(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error) {
	if cb.Type == slack.InteractionTypeBlockActions {
		for _, act := range cb.ActionCallback.BlockActions {
			if act != nil && act.ActionID == ActionRevokeGrant {
				o.revoke(ctx, cb, act.Value)
				return nil, nil
			}
		}
	}
	return o.cfg.Clicks.Handle(ctx, cb)
}

func (o *Ops) revoke(ctx context.Context, cb slack.InteractionCallback, value string) {
	session, id, _ := strings.Cut(value, " ")
	// The reply leaves after the click's acknowledgement, as owned work.
	reply := func(text string) {
		if !o.goTracked(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := o.cfg.Slack.PostEphemeral(rctx, cb.Channel.ID, cb.User.ID, slack.MsgOptionText(text, false)); err != nil {
				o.log.Warn("revoke reply failed", "err", err)
			}
		}) {
			o.log.Warn("shutting down; revoke reply skipped", "user", cb.User.ID)
		}
	}
	if o.cfg.Workspace != nil {
		// A Revoke button an approver was shown can be clicked by anyone
		// who sees it: an ephemeral list is theirs alone, but closed-world
		// does not lean on that.
		if err := o.cfg.Workspace.Admits(ctx, cb.User.ID, cb.User.TeamID); err != nil {
			o.log.Warn("revoke from outside askops' workspace refused", "user", cb.User.ID, "user_team", cb.User.TeamID, "err", err)
			reply(slackui.OutsiderShown(err))
			return
		}
	}
	if ok, _ := o.cfg.Approvers.MayDecide(ctx, cb.User.ID); !ok {
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
	if err := o.cfg.Grants.Revoke(ctx, session, id); err != nil {
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
