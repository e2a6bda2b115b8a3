package slackui

import (
	"context"
	"time"

	"github.com/askops/askops/redact"
)

// titleGrace is how long a thread's title lets the Ask that opened it go
// first: the title is asked for just before that Ask is recorded.
const titleGrace = 200 * time.Millisecond

// titleTimeout bounds how long a title waits behind its channel's Asks.
const titleTimeout = 2 * time.Minute

// queuedTitle is a thread's opening message waiting in its channel's queue
// (burst.go). It holds no goroutine: 500 new sessions in a burst are 500
// short entries, not 500 parked goroutines.
type queuedTitle struct {
	text      string
	notBefore time.Time // titleGrace after it was asked for
	giveUpAt  time.Time // titleTimeout after it was asked for
	done      func(channel, ts string, err error)
}

// OpenThreadThen posts title (escaped, redacted: it comes from an agent)
// to the approval channel and calls done, once, on a goroutine of its own,
// with where it went: the message whose thread an external agent session's
// Asks are then posted in (Ask.ReplyChannel and ReplyThreadTS).
//
// Nobody waits on a title (see gateway.Threads), so it goes after the
// Asks: it is queued with the channel's Asks and posted, paced and
// retried like them, only while no Ask waits, and not before titleGrace
// has let the Ask that opened it be queued first.
func (n *Notifier) OpenThreadThen(ctx context.Context, title string, done func(channel, ts string, err error)) {
	channel := n.cfg.ApprovalChannel
	if channel == "" {
		go done("", "", ErrNoChannel)
		return
	}
	now := time.Now()
	qt := &queuedTitle{
		text:      Escape(redact.Secrets(title)),
		notBefore: now.Add(titleGrace),
		giveUpAt:  now.Add(titleTimeout),
		done:      done,
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	cq := n.queue(ctx, channel)
	cq.titles = append(cq.titles, qt)
	cq.poke()
}

// dropStaleTitles takes out the titles that waited titleTimeout and
// returns them. n.mu is held.
func (cq *channelQueue) dropStaleTitles(now time.Time) []*queuedTitle {
	k := 0
	for k < len(cq.titles) && !now.Before(cq.titles[k].giveUpAt) {
		k++
	}
	if k == 0 {
		return nil
	}
	stale := append([]*queuedTitle(nil), cq.titles[:k]...)
	clear(cq.titles[:k])
	cq.titles = cq.titles[k:]
	return stale
}
