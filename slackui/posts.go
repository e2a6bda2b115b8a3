package slackui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"
)

// Posts that are not Asks — run status and answers, reminders and
// escalations, threads' titles — wait in their channel's queue beside the
// Asks (burst.go) and go, the most urgent first (priority.go), when the
// channel has a slot. Nobody's goroutine waits for them: a queued post is
// an entry, and its done is called once it went or was given up.

// Post is a message to post to a channel when its pace allows.
type Post struct {
	Channel  string
	Priority Priority
	// Message is the message's options (text, blocks, thread…), made when
	// its slot comes: a status posted late shows its latest state.
	Message func() []slack.MsgOption
	// Persist keeps a post Slack failed for a while (5xx, 429s, network
	// failures beyond the retries of one slot) queued, tried again with
	// back-off, until Slack takes it or refuses it for good (the channel
	// or the thread is gone, askops is not in it), instead of failing it.
	Persist bool
	// NotBefore holds the post back until then (a thread's title lets the
	// Ask that opened it go first).
	NotBefore time.Time
	// GiveUpAt, if set, gives the post up if it is still queued then.
	GiveUpAt time.Time
}

// queuedPost is a Post waiting in its channel's queue.
type queuedPost struct {
	Post
	seq     uint64          // queue order within a priority
	ctx     context.Context // its end withdraws the post
	backoff time.Duration   // the next wait after a failed attempt (Persist)
	done    func(channel, ts string, err error)
}

// postBackoffMax caps the wait between two attempts of a persistent post.
const postBackoffMax = time.Minute

// Enqueue queues p for its channel and returns at once; done gets where
// it was posted, or why it was not, once, on a goroutine of its own. The
// post is withdrawn if ctx ends while it is still queued (done then gets
// ctx's cause).
func (n *Notifier) Enqueue(ctx context.Context, p Post, done func(channel, ts string, err error)) {
	n.enqueuePost(ctx, p, done)
}

func (n *Notifier) enqueuePost(ctx context.Context, p Post, done func(channel, ts string, err error)) *queuedPost {
	if p.Channel == "" {
		go done("", "", ErrNoChannel)
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	q := &queuedPost{Post: p, seq: n.seq, ctx: ctx, backoff: n.cfg.RetryBackoff, done: done}
	cq := n.queue(ctx, p.Channel)
	cq.posts = append(cq.posts, q)
	cq.poke()
	return q
}

// withdrawPost takes q out of its channel's queue unless it is on its way
// (or done): then false.
func (n *Notifier) withdrawPost(q *queuedPost) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	cq := n.queues[q.Channel]
	if cq == nil {
		return false
	}
	for i, p := range cq.posts {
		if p == q {
			cq.posts = append(cq.posts[:i], cq.posts[i+1:]...)
			cq.poke()
			return true
		}
	}
	return false
}

// Say posts a message to channel at priority p, when the channel's pace
// allows, retrying transient failures within the Notifier's budget, and
// returns where it went. It waits for the post; ctx's end withdraws it if
// it is still queued.
func (n *Notifier) Say(ctx context.Context, p Priority, channel string, opts ...slack.MsgOption) (posted, ts string, err error) {
	type result struct {
		channel, ts string
		err         error
	}
	got := make(chan result, 1)
	q := n.enqueuePost(ctx, Post{Channel: channel, Priority: p, Message: func() []slack.MsgOption { return opts }},
		func(channel, ts string, err error) { got <- result{channel, ts, err} })
	if q != nil {
		select {
		case r := <-got:
			return r.channel, r.ts, r.err
		case <-ctx.Done():
			if n.withdrawPost(q) {
				return "", "", fmt.Errorf("slackui: post to %s still queued: %w", channel, context.Cause(ctx))
			}
		}
	}
	r := <-got // on its way to Slack: that call's result stands
	return r.channel, r.ts, r.err
}

// nextPost is the most urgent post of cq due now, and whether there is
// one; otherwise the earliest time one will be due (zero: none queued).
// n.mu is held.
func (cq *channelQueue) nextPost(now time.Time) (q *queuedPost, i int, due time.Time) {
	for k, p := range cq.posts {
		if p.NotBefore.After(now) {
			if due.IsZero() || p.NotBefore.Before(due) {
				due = p.NotBefore
			}
			continue
		}
		if q == nil || p.Priority < q.Priority || p.Priority == q.Priority && p.seq < q.seq {
			q, i = p, k
		}
	}
	return q, i, due
}

// dropGonePosts takes out the posts whose context ended or whose give-up
// time passed, and returns them with the earliest give-up time of those
// left (zero: none). n.mu is held.
func (cq *channelQueue) dropGonePosts(now time.Time) (gone []given, next time.Time) {
	kept := cq.posts[:0]
	for _, p := range cq.posts {
		switch {
		case p.ctx.Err() != nil:
			gone = append(gone, given{post: p, cause: context.Cause(p.ctx)})
			continue
		case !p.GiveUpAt.IsZero() && !now.Before(p.GiveUpAt):
			gone = append(gone, given{post: p, cause: fmt.Errorf("slackui: post to %s still queued at its give-up time: %w", p.Channel, context.DeadlineExceeded)})
			continue
		case !p.GiveUpAt.IsZero() && (next.IsZero() || p.GiveUpAt.Before(next)):
			next = p.GiveUpAt
		}
		kept = append(kept, p)
	}
	clear(cq.posts[len(kept):])
	cq.posts = kept
	return gone, next
}

// postQueued spends the slot just taken on the most urgent post due, if
// one still is (it may have been withdrawn meanwhile).
func (n *Notifier) postQueued(ctx context.Context, channel string) {
	now := time.Now()
	n.mu.Lock()
	cq := n.queues[channel]
	q, i, _ := cq.nextPost(now)
	if q == nil {
		n.mu.Unlock()
		return
	}
	cq.posts = append(cq.posts[:i], cq.posts[i+1:]...)
	n.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	posted, ts, err := n.postSlotted(cctx, channel, q.Message()...)
	if err != nil && q.Persist && q.ctx.Err() == nil && n.transient(err) {
		// Slack failed it for a while: it keeps its place (its sequence)
		// and goes again after a back-off, in a slot of its own.
		n.log.Warn("a post failed for now; trying it again", "channel", channel, "priority", q.Priority, "in", q.backoff, "err", err)
		q.NotBefore = time.Now().Add(q.backoff)
		q.backoff = min(q.backoff*2, postBackoffMax)
		n.mu.Lock()
		cq.posts = append(cq.posts, q)
		cq.poke()
		n.mu.Unlock()
		return
	}
	go q.done(posted, ts, err)
}

// transient reports whether err is a failure that trying again later may
// get past (a 429, a 5xx, the network, an attempt budget spent on those),
// not a refusal (the channel or thread is gone, askops is not in it, the
// message is malformed).
func (n *Notifier) transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true // the call's own bound, Slack being slow
	}
	_, retryable := n.retryWait(err, time.Second)
	return retryable
}
