package slackui

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/pending"
)

// A click or the deny-reason form is parsed here into an approval.Vote,
// judged by approval.Decider (the rules the console's form and the API
// meet too) and its Result worded for the clicker, in Slack's own text.
// What stays Slack's: who the approvers are (user groups, escalation, a
// direct message's recipient: clickAuthority), whether a click sits on
// its Ask's message (binds, homeBinds, formBinds) and adopting a message
// the store did not know yet (firstclick.go).

// Decider judges a vote by the deciding rules; the process's one
// *approval.Decider, which every surface shares, satisfies it.
type Decider interface {
	Decide(ctx context.Context, v approval.Vote) (approval.Result, error)
}

// grantLives is a renderer that says which "Approve for 15 min" buttons
// it offers; *Notifier is one.
type grantLives interface{ GrantLives() []time.Duration }

// GrantLives is approvals.grant_durations as this Notifier offers them.
func (n *Notifier) GrantLives() []time.Duration { return n.cfg.GrantDurations }

// clickAuthority is who may decide, as a click (cb; nil for a form) shows
// them: an approver, in a direct-message copy only its recipient, and the
// targets of an escalation level that fired.
type clickAuthority struct {
	i  *Interactions
	cb *slack.InteractionCallback
}

func (c clickAuthority) MayDecide(ctx context.Context, user string) (bool, error) {
	return c.i.cfg.Approvers.MayDecide(ctx, user)
}

func (c clickAuthority) MayDecideAsk(ctx context.Context, user, askID string, approver bool, err error) error {
	return c.i.authorizeChecked(ctx, user, askID, c.cb, approver, err)
}

// clickVote is the vote of the click cb, with the button actionID.
// Slack's signed payload says who clicked: a person, for a quorum.
func (i *Interactions) clickVote(cb slack.InteractionCallback, askID, actionID string, b pending.Ballot) approval.Vote {
	v := approval.Vote{
		Ask: askID, Outcome: b.Outcome, Reason: b.Reason,
		Voter:     approval.Voter{By: cb.User.ID, Person: cb.User.ID},
		Authority: clickAuthority{i, &cb},
		Bind: func(ctx context.Context, a *pending.Ask) error {
			if err := i.binds(cb, *a, actionID); err != nil {
				return err
			}
			i.adoptClicked(ctx, cb, a) // firstclick.go
			return nil
		},
	}
	if b.GrantTTL > 0 {
		v.Life = b.GrantTTL
		// A renderer that cannot say its durations is held to what its
		// message offered (binds asks it).
		_, v.LifeChosen = i.cfg.Notifier.(grantLives)
	}
	if channel, ts, ok := clickedOn(cb); ok && !fromHome(cb) {
		v.On = &approval.Message{Channel: channel, TS: ts}
		// The common click, Approve or Deny on the Ask's own message, is
		// one store round trip (BenchmarkClickToResume).
		v.Fast = alwaysOffered(actionID)
	}
	return v
}

// clickWorded tells the clicker how res went; the error is for the log.
func (i *Interactions) clickWorded(cb slack.InteractionCallback, askID string, res approval.Result) error {
	switch res.Kind {
	case approval.Decided:
		return nil
	case approval.Counted:
		i.ephemeral(cb, voteCountedText(res.Ask))
		return nil
	case approval.RepeatVote:
		i.ephemeral(cb, repeatVoteText(res.Ask))
		return nil
	case approval.SelfApproved:
		i.ephemeral(cb, approval.SelfApprovalRefusal)
		return fmt.Errorf("refused %s on ask %s: self-approval", cb.User.ID, askID)
	case approval.NotAuthorized:
		i.ephemeral(cb, refusalShown(res.Err))
		return res.Err
	case approval.NotBound:
		return i.notBound(cb, askID, res.Err)
	case approval.NotOffered, approval.BadLife:
		// binds asked the message first, so only a message that offered
		// what the rules refuse gets here.
		i.ephemeral(cb, notBoundText)
		return fmt.Errorf("ask %s: %s refused", askID, res.Kind)
	case approval.AlreadyDecided:
		if res.Known {
			i.ephemeral(cb, alreadyDecidedText(res.Ask)) // the Decider brings the messages in step
			return nil
		}
	case approval.Unavailable:
		if res.Unsure {
			i.ephemeral(cb, unsureText)
			i.recheck(cb, askID)
			return fmt.Errorf("decide ask %q: the vote may have been recorded: %w", askID, res.Err)
		}
	}
	// The store's refusals and failures, in the words of any click's.
	return i.notDecided(cb, askID, res.Err)
}

// formVote is the deny-reason form's vote: the modal was opened from
// askID's message at ("CHANNEL TS").
func (i *Interactions) formVote(cb slack.InteractionCallback, askID, at, reason string) approval.Vote {
	return approval.Vote{
		Ask: askID, Outcome: pending.Denied, Reason: reason,
		Voter:     approval.Voter{By: cb.User.ID, Person: cb.User.ID},
		Authority: clickAuthority{i: i},
		Bind:      func(_ context.Context, a *pending.Ask) error { return i.formBinds(*a, at) },
	}
}

// formWorded answers the form with res: problems are shown in the modal
// itself (fail), there being no channel to reply in.
func (i *Interactions) formWorded(askID string, res approval.Result, fail func(string) *slack.ViewSubmissionResponse) (*slack.ViewSubmissionResponse, error) {
	read := res.Before.ID != "" // the store answered the read; else the vote
	switch res.Kind {
	case approval.Decided, approval.Counted:
		return nil, nil
	case approval.NotAuthorized:
		return fail(refusalShown(res.Err)), res.Err
	case approval.NotBound:
		return fail(notBoundPlain), res.Err
	case approval.Unknown:
		return fail("askops no longer knows this request; nothing will run because of it."), nil
	case approval.AlreadyDecided:
		if res.Known {
			return fail(alreadyDecidedPlain(res.Ask)), nil
		}
		return fail("This request was already decided; nothing changed."), nil
	case approval.NotDurable:
		return fail(pending.NotDurableNotice), fmt.Errorf("decide ask %q: %w", askID, res.Err)
	case approval.Unavailable:
		if res.Unsure {
			return fail(unsurePlain), fmt.Errorf("decide ask %q: the denial may have been recorded: %w", askID, res.Err)
		}
	}
	if !read { // the form could not be bound to its Ask
		return fail(notBoundPlain), res.Err
	}
	return fail("askops could not record your decision right now; please try again."), fmt.Errorf("decide ask %q: %w", askID, res.Err)
}

// unsureText is what a clicker is told when the store took too long to
// answer their vote: it may have been recorded all the same (and the Ask
// decided by it), so "nothing changed" would be a guess.
const unsureText = "askops could not confirm your decision: its store did not answer in time, so your click may or may not have been recorded. askops checks again and tells you; the request's message shows the outcome once it is known. Please look there before clicking again."

// unsurePlain is unsureText for the deny-reason form.
const unsurePlain = "askops could not confirm your denial: its store did not answer in time, so it may or may not have been recorded. The request's message shows the outcome once it is known; look there before submitting again."

// recheckDelay is how long after an unconfirmed vote recheck reads the Ask
// again: the store's late answer has come by then, or its write landed.
const recheckDelay = time.Second

// recheck tells the clicker of a vote the store did not confirm how it
// went after all, read again once the store had time to carry it out:
// how the Ask ended (their vote, or another's), their approval counted
// toward a quorum, or that it is still open without it. A read that fails
// again adds nothing: the clicker was told that it is unknown.
func (i *Interactions) recheck(cb slack.InteractionCallback, askID string) {
	i.backgroundAfter(recheckDelay, "pending.get", func(ctx context.Context) error {
		a, err := i.cfg.Asks.Get(ctx, askID)
		if err != nil {
			return fmt.Errorf("re-read ask %s after an unconfirmed vote: %w", askID, err)
		}
		switch {
		case a.Status != pending.StatusPending && a.DecidedBy == cb.User.ID:
			i.ephemeral(cb, "askops checked again: your decision was recorded after all. The request was "+outcomeWords(a)+" by you "+readerLocalTime(a.DecidedAt)+".")
			i.updateMessage(cb, a)
		case a.Status != pending.StatusPending:
			i.ephemeral(cb, alreadyDecidedText(a))
			i.updateMessage(cb, a)
		case slices.Contains(a.Votes.List(), cb.User.ID):
			i.ephemeral(cb, voteCountedText(a))
		default:
			i.ephemeral(cb, "askops checked again: your click was not recorded, and the request is still open. Click again to decide it.")
		}
		return nil
	})
}

// outcomeWords says how a ended, as "approved for the session".
func outcomeWords(a pending.Ask) string {
	switch o, _ := a.Outcome(); o {
	case pending.ApprovedSession:
		return "approved for the session"
	default:
		return string(o)
	}
}
