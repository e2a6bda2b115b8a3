package slackui

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/redact"
)

// titleGrace is how long a thread's title lets the Ask that opened it go
// first: the title is asked for just before that Ask is recorded.
const titleGrace = 200 * time.Millisecond

// OpenThread posts title (escaped, redacted: it comes from an agent) to the
// approval channel and returns where: the message whose thread an external
// agent session's Asks are then posted in (Ask.ReplyChannel and
// ReplyThreadTS). It is paced and retried like an Ask's post, but after
// the Asks: nobody waits on a title (see gateway.Threads), so it gives the
// Ask that opened it titleGrace to be queued, and then waits while Asks
// are queued for the channel.
func (n *Notifier) OpenThread(ctx context.Context, title string) (channel, ts string, err error) {
	channel = n.cfg.ApprovalChannel
	if channel == "" {
		return "", "", ErrNoChannel
	}
	if err := sleep(ctx, titleGrace); err != nil {
		return "", "", fmt.Errorf("slackui: open thread in %s: %w", channel, err)
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
