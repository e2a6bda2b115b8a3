package slackui

import (
	"context"

	"github.com/slack-go/slack"
)

// The Notifier's paced, retrying Web API calls, for messages that are not
// Asks (chat-ops' run status, answers and replies). Going through the same
// Notifier, they share each channel's posting budget with the Asks.

// PostMessage posts a message at channel's pace, retrying transient
// failures (429 Retry-After, 5xx, network) within the Notifier's budget.
// It returns the channel Slack posted to and the message's ts.
func (n *Notifier) PostMessage(ctx context.Context, channel string, opts ...slack.MsgOption) (posted, ts string, err error) {
	err = n.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		if err := n.pace(ctx, channel); err != nil {
			return err
		}
		var err error
		posted, ts, err = n.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return posted, ts, err
}

// UpdateMessage edits a message, retrying like PostMessage.
func (n *Notifier) UpdateMessage(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	return n.retry(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := n.api.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
}

// PostEphemeral shows user a message only they see, retrying like
// PostMessage.
func (n *Notifier) PostEphemeral(ctx context.Context, channel, user string, opts ...slack.MsgOption) error {
	return n.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := n.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
}
