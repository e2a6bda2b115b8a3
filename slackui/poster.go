package slackui

import (
	"context"

	"github.com/slack-go/slack"
)

// The Notifier's paced, retrying Web API calls, for messages that are not
// Asks: chat-ops' replies, follow-ups. Going through the same Notifier,
// they share each channel's posting budget, and the app's editing budget,
// with the Asks, behind them (priority.go).

// PostMessage posts a message at channel's pace, behind everything more
// urgent (PriorityStatus), retrying transient failures (429 Retry-After,
// 5xx, network) within the Notifier's budget. It returns the channel Slack
// posted to and the message's ts. Say posts at another priority.
func (n *Notifier) PostMessage(ctx context.Context, channel string, opts ...slack.MsgOption) (posted, ts string, err error) {
	return n.Say(ctx, PriorityStatus, channel, opts...)
}

// UpdateMessage edits a message at the app's editing pace, behind every
// more urgent edit (PriorityStatus), retrying like PostMessage.
func (n *Notifier) UpdateMessage(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	return n.edit(ctx, PriorityStatus, false, channel, ts, opts...)
}

// edit updates a message at prio in a slot of the app's editing pace
// (held: the caller took the first attempt's slot already), retrying
// like PostMessage; each attempt takes its own slot.
func (n *Notifier) edit(ctx context.Context, prio Priority, held bool, channel, ts string, opts ...slack.MsgOption) error {
	return n.editWith(ctx, prio, held, channel, ts, func() []slack.MsgOption { return opts })
}

// editWith is edit of the message render makes once each attempt has its
// slot: a status edited late shows its latest state.
func (n *Notifier) editWith(ctx context.Context, prio Priority, held bool, channel, ts string, render func() []slack.MsgOption) error {
	return n.retry(ctx, "chat.update", func(ctx context.Context) error {
		if !held {
			if err := n.editSlot(ctx, prio); err != nil {
				return err
			}
		}
		held = false
		_, _, _, err := n.api.UpdateMessageContext(ctx, channel, ts, render()...)
		return err
	})
}

// PostEphemeral shows user a message only they see, retrying like
// PostMessage. Ephemeral messages are not held to the channel's pace.
func (n *Notifier) PostEphemeral(ctx context.Context, channel, user string, opts ...slack.MsgOption) error {
	return n.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := n.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}

// Respond posts to a slash command's response_url (an ephemeral reply to
// whoever typed it), retrying like PostMessage. A response_url reaches
// them where askops cannot post, and is held to no channel's pace.
func (n *Notifier) Respond(ctx context.Context, channel, responseURL string, opts ...slack.MsgOption) error {
	opts = append([]slack.MsgOption{slack.MsgOptionResponseURL(responseURL, slack.ResponseTypeEphemeral)}, opts...)
	return n.retry(ctx, "response_url", func(ctx context.Context) error {
		_, _, err := n.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
}
