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
// even while its level is still being carried out (a level records that
// it fired only once all its messages are out, and a target quick on
// their phone must not be refused in between; the copy is recorded right
// after its DM is posted). judged is false for any other click, which the
// approver rules decide.
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
	case !a.Copies.Has(channel, ts) || (a.Channel == channel && a.MessageTS == ts):
		return false, nil // the Ask's own message, or no copy of it
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

// updateCopies rewrites a's recorded copies (not its own message) as msg.
func (n *Notifier) updateCopies(ctx context.Context, a pending.Ask, msg Message) error {
	var errs []error
	for _, c := range a.Copies.List() {
		if c[0] == a.Channel && c[1] == a.MessageTS {
			continue
		}
		if err := n.UpdateMessage(ctx, c[0], c[1], slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)); err != nil {
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
