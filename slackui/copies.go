package slackui

import (
	"context"
	"errors"
	"fmt"

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
