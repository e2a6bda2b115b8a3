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

// titleTimeout bounds how long a title waits behind its channel's Asks.
const titleTimeout = 2 * time.Minute

// OpenThreadThen posts title (escaped, redacted: it comes from an agent)
// to the approval channel and calls done, once, on a goroutine of its own,
// with where it went: the message whose thread an external agent session's
// Asks are then posted in (Ask.ReplyChannel and ReplyThreadTS).
//
// Nobody waits on a title (see gateway.Threads), so it goes after the
// Asks and every more urgent post (PriorityStatus), paced and retried like
// them, and not before titleGrace has let the Ask that opened it be queued
// first. It holds no goroutine while queued: 500 new sessions in a burst
// are 500 short entries, not 500 parked goroutines.
func (n *Notifier) OpenThreadThen(ctx context.Context, title string, done func(channel, ts string, err error)) {
	channel := n.cfg.ApprovalChannel
	if channel == "" {
		go done("", "", ErrNoChannel)
		return
	}
	now := time.Now()
	text := Escape(redact.Secrets(title))
	// Not withdrawn when ctx ends: a title is asked for on a request
	// that ends long before the title's turn.
	n.Enqueue(context.WithoutCancel(ctx), Post{
		Channel: channel, Priority: PriorityStatus,
		Message:   func() []slack.MsgOption { return []slack.MsgOption{slack.MsgOptionText(text, false)} },
		NotBefore: now.Add(titleGrace), GiveUpAt: now.Add(titleTimeout),
	}, func(channel, ts string, err error) {
		if err != nil {
			err = fmt.Errorf("slackui: open thread in %s: %w", n.cfg.ApprovalChannel, err)
		}
		done(channel, ts, err)
	})
}
