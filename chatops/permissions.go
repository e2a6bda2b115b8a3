package chatops

import (
	"context"
	"slices"

	"github.com/askops/askops/pending"
)

func (o *Ops) mayAct(ctx context.Context, user string) bool {
	if ok, _ := o.cfg.Approvers.MayDecide(ctx, user); ok {
		return true
	}
	ok, _ := o.cfg.Starters.MayDecide(ctx, user)
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
func (o *Ops) viewerOf(ctx context.Context, user string) viewer {
	if ok, _ := o.cfg.Approvers.MayDecide(ctx, user); ok {
		return viewerApprover
	}
	if ok, _ := o.cfg.Starters.MayDecide(ctx, user); ok {
		return viewerStarter
	}
	return viewerNone
}

// inChannel reports whether a was posted (or is to be posted) in channel,
// top level or in one of its threads.
func inChannel(a pending.Ask, channel string) bool {
	return channel != "" && (a.Channel == channel || (a.Channel == "" && a.ReplyChannel == channel))
}

// channelSession reports whether session is one of channel's, as the
// session store records them (the runs started there).
func (o *Ops) channelSession(ctx context.Context, channel, session string) (bool, error) {
	sessions, err := o.cfg.Sessions.Sessions(ctx, channel)
	if err != nil {
		return false, err
	}
	return channel != "" && slices.Contains(sessions, session), nil
}
