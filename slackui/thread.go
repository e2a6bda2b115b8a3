package slackui

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/askops/askops/redact"
)

// OpenThread posts title (escaped, redacted: it comes from an agent) to the
// approval channel and returns where: the message whose thread an external
// agent session's Asks are then posted in (Ask.ReplyChannel and
// ReplyThreadTS). It is paced and retried like an Ask's post.
func (n *Notifier) OpenThread(ctx context.Context, title string) (channel, ts string, err error) {
	channel = n.cfg.ApprovalChannel
	if channel == "" {
		return "", "", ErrNoChannel
	}
	text := Escape(redact.Secrets(title))
	var posted string
	err = n.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		if err := n.pace(ctx, channel, true); err != nil {
			return err
		}
		var err error
		posted, ts, err = n.api.PostMessageContext(ctx, channel, slack.MsgOptionText(text, false))
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("slackui: open thread in %s: %w", channel, err)
	}
	if posted == "" {
		posted = channel
	}
	return posted, ts, nil
}
