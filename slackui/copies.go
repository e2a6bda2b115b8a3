package slackui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// Every copy of an Ask (its own message, the direct messages of an
// escalation) is the same Ask: a click on any of them is the same click
// (boundAsk accepts exactly the recorded copies), and whoever decides it
// updates all of them.

// EscalatedAuthority says whether a user may decide an Ask because it was
// escalated to them; *Escalation satisfies it.
type EscalatedAuthority interface {
	MayDecideEscalated(ctx context.Context, user string, a pending.Ask) (bool, error)
	// DirectWith reports whether channel is the direct message between
	// askops and user: who a DM copy is to.
	DirectWith(ctx context.Context, user, channel string) (bool, error)
	// ConfirmDirect records a message in channel as user's reserved DM
	// of the Ask askID (pending.DirectSteps).
	ConfirmDirect(ctx context.Context, askID, user, channel, ts string) error
}

// escalatedTo reports whether user, not an approver (checkErr is why the
// approver check could not tell, if it could not), may decide askID as the
// target of an escalation level that fired for it.
func (i *Interactions) escalatedTo(ctx context.Context, user, askID string, checkErr error) (bool, error) {
	a, err := i.cfg.Asks.Get(ctx, askID)
	if err != nil {
		if pending.ErrorCode(err) == pending.CodeNotFound || pending.ErrorCode(err) == pending.CodeInvalid {
			return false, checkErr // the click's own handling says so
		}
		return false, errors.Join(checkErr, err)
	}
	ok, err := i.cfg.Escalated.MayDecideEscalated(ctx, user, a)
	if ok {
		return true, nil
	}
	return false, errors.Join(checkErr, err)
}

// copyUncheckedText is what a click on a DM copy is told when askops could
// not tell whose DM it is.
const copyUncheckedText = "askops could not check that this direct message is yours, so your click changed nothing. Please try again in a moment."

// onDirectCopy judges a click (cb, nil for a form) that may be on a DM
// copy of askID. A DM copy is decided by its recipient and nobody else,
// whoever the clicker is elsewhere: the copy speaks for the place it was
// clicked, and the place is not the person. Its recipient may decide it
// the instant it is out: the escalation reserves the DM, with its
// recipient, before posting it, and a click on a message of the reserved
// channel that carries the Ask's buttons is that recipient's DM even
// before its sender recorded its ts (or if its sender died first), and is
// recorded as the copy it is. judged is false for any other click, which
// the approver rules decide.
func (i *Interactions) onDirectCopy(ctx context.Context, user, askID string, cb *slack.InteractionCallback) (judged bool, err error) {
	if cb == nil || fromHome(*cb) {
		return false, nil
	}
	channel, ts, ok := clickedOn(*cb)
	if !ok || !strings.HasPrefix(channel, "D") {
		return false, nil // not in a 1:1 DM: no copy is
	}
	a, err := i.cfg.Asks.Get(ctx, askID)
	switch {
	case pending.ErrorCode(err) == pending.CodeNotFound || pending.ErrorCode(err) == pending.CodeInvalid:
		return false, nil // the click's own handling says so
	case err != nil:
		return true, &refusal{show: copyUncheckedText, err: fmt.Errorf("refused %s on ask %s: could not read it to check its copy %s: %w", user, askID, channel, err)}
	case a.Channel == channel && a.MessageTS == ts:
		return false, nil // the Ask's own message
	}
	if r, ok := a.Directs.In(channel); ok {
		return true, i.onReservedDirect(ctx, user, a, r, cb, ts)
	}
	switch {
	case !a.Copies.Has(channel, ts):
		return false, nil // no copy of it
	case i.cfg.Escalated == nil:
		return true, &refusal{show: copyUncheckedText, err: fmt.Errorf("refused %s on ask %s: its DM copy %s cannot be checked without escalation configured", user, askID, channel)}
	}
	mine, err := i.cfg.Escalated.DirectWith(ctx, user, channel)
	switch {
	case err != nil:
		return true, &refusal{show: copyUncheckedText, err: fmt.Errorf("refused %s on ask %s: could not check who its DM copy %s is to: %w", user, askID, channel, err)}
	case !mine:
		return true, &refusal{show: refusalText, err: fmt.Errorf("refused %s on ask %s: its DM copy %s is somebody else's", user, askID, channel)}
	}
	return true, nil
}

// copyUnrecordedText is what a click on a message of a reserved DM channel
// is told when it neither is a recorded copy nor carries the Ask.
const copyUnrecordedText = "askops has not yet recorded this direct message, so your click changed nothing. Please try again in a moment."

// onReservedDirect judges a click on a message of the DM channel an
// escalation reserved for r.User: theirs alone, and theirs at once.
func (i *Interactions) onReservedDirect(ctx context.Context, user string, a pending.Ask, r pending.DirectCopy, cb *slack.InteractionCallback, ts string) error {
	switch {
	case r.User != user:
		return &refusal{show: refusalText, err: fmt.Errorf("refused %s on ask %s: its DM %s is %s's", user, a.ID, r.Channel, r.User)}
	case a.Copies.Has(r.Channel, ts):
		return nil
	case !carriesAsk(cb.Message.Blocks.BlockSet, a.ID):
		return &refusal{show: copyUnrecordedText, err: fmt.Errorf("refused %s on ask %s: message %s/%s in its DM is not recorded and does not carry it", user, a.ID, r.Channel, ts)}
	case i.cfg.Escalated == nil:
		return &refusal{show: copyUncheckedText, err: fmt.Errorf("refused %s on ask %s: its DM %s cannot be recorded without escalation configured", user, a.ID, r.Channel)}
	}
	// The DM is out, the click says so (Slack signed the message into the
	// payload), and its sender has not recorded it yet or never will.
	if err := i.cfg.Escalated.ConfirmDirect(ctx, a.ID, user, r.Channel, ts); err != nil {
		return &refusal{show: copyUncheckedText, err: fmt.Errorf("refused %s on ask %s: could not record its DM %s/%s: %w", user, a.ID, r.Channel, ts, err)}
	}
	return nil
}

// updateCopies rewrites a's recorded copies (not its own message) as msg.
func (n *Notifier) updateCopies(ctx context.Context, a pending.Ask, msg Message) error {
	var errs []error
	for _, c := range a.Copies.List() {
		if c[0] == a.Channel && c[1] == a.MessageTS {
			continue
		}
		if err := n.edit(ctx, PriorityDecision, false, c[0], c[1], slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)); err != nil {
			errs = append(errs, fmt.Errorf("slackui: update ask %s copy %s/%s: %w", a.ID, c[0], c[1], err))
		}
	}
	return errors.Join(errs...)
}

// catchUp brings a DM copy just recorded up to date with its Ask. The DM
// was rendered from the record as its step was claimed; a vote or a
// decision that landed before the copy was recorded updated every copy
// but this one, which would go on showing the old count, or buttons of an
// Ask already decided. Once recorded, later changes update it as they do
// every copy.
func (e *Escalation) catchUp(ctx context.Context, n *Notifier, shown pending.Ask, channel, ts string) error {
	cur, err := e.cfg.Steps.Get(ctx, shown.ID)
	if err != nil {
		return fmt.Errorf("slackui: re-read ask %s after its DM: %w", shown.ID, err)
	}
	if cur.Status == shown.Status && cur.Votes == shown.Votes {
		return nil
	}
	cur.Channel, cur.MessageTS, cur.Copies = channel, ts, "" // this DM only
	return n.Update(ctx, cur)
}
