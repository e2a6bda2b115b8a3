package slackui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// A StatusMessage is one message that shows something changing — a run's
// status — posted when its channel allows and then edited in place, both
// at PriorityStatus: behind every Ask, decision and follow-up (priority.go).
// Each post or edit sends the state as it is when its slot comes, so the
// states in between may be skipped, never the last: Finish's state is sent
// whatever it takes, tried again with back-off until Slack takes it or
// refuses it for good (the message or its channel is gone).
//
// It holds no goroutine while nothing is due: an edit is a timer until it
// is, and then one goroutine waiting for its slot.
type StatusMessage struct {
	n               *Notifier
	ctx             context.Context
	channel, thread string
	text            func() string

	mu        sync.Mutex
	version   int // bumped by every change
	sent      int // the version Slack shows
	rendering int // the version the post or edit on its way rendered
	busy      bool
	next      time.Time // no edit before: edits of one message a second apart
	backoff   time.Duration
	posted    chan struct{} // closed once posted, or refused for good
	postedTo  string
	ts        string
	err       error // why it was not posted, or why an edit can never land
	final     int   // the version Finish asked for; 0: not yet
	done      chan struct{}
	doneOnce  sync.Once
}

// statusSettle is how long a status waits after a change before it is
// edited. One step of a run is a burst of changes (decided, tool call,
// tool result, the next model turn), and the first comes just as an
// approval lets the agent go on: editing at once would spend the agent's
// critical moment on a Slack call nobody needs within a quarter second,
// and edit the message several times for one step.
const statusSettle = 200 * time.Millisecond

// Status queues the status message text() says, in channel (in thread,
// if set), and returns at once: Posted says when it is out. text is called
// whenever a post or an edit is made, and must be safe to call then. ctx
// bounds the message's whole life (a process's); Slack's slowness never
// ends it.
func (n *Notifier) Status(ctx context.Context, channel, thread string, text func() string) *StatusMessage {
	s := &StatusMessage{
		n: n, ctx: ctx, channel: channel, thread: thread, text: text,
		version: 1, busy: true, backoff: n.cfg.RetryBackoff,
		posted: make(chan struct{}), done: make(chan struct{}),
	}
	n.Enqueue(ctx, Post{Channel: channel, Priority: PriorityStatus, Persist: true, Message: s.postMessage}, s.postDone)
	return s
}

// postMessage renders the post when its slot has come.
func (s *StatusMessage) postMessage() []slack.MsgOption {
	s.mu.Lock()
	v := s.version
	s.mu.Unlock()
	opts := []slack.MsgOption{slack.MsgOptionText(s.text(), false)}
	if s.thread != "" {
		opts = append(opts, slack.MsgOptionTS(s.thread))
	}
	s.mu.Lock()
	s.rendering = v
	s.mu.Unlock()
	return opts
}

func (s *StatusMessage) postDone(channel, ts string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	if err != nil {
		s.err = fmt.Errorf("slackui: post status message in %s: %w", s.channel, err)
		close(s.posted)
		s.end()
		return
	}
	s.postedTo, s.ts, s.sent = channel, ts, s.rendering
	s.next = time.Now().Add(time.Second)
	close(s.posted)
	if s.final > 0 && s.sent >= s.final {
		s.end()
		return
	}
	s.kick()
}

// Posted waits until the message is posted and returns where (its ts
// opens a thread), or why Slack refused it for good, or ctx's error.
func (s *StatusMessage) Posted(ctx context.Context) (channel, ts string, err error) {
	select {
	case <-s.posted:
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postedTo, s.ts, s.err
}

// Changed says the state changed: it is sent when the pace allows, a
// moment after the change, with whatever changed meanwhile.
func (s *StatusMessage) Changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final > 0 {
		return
	}
	s.version++
	s.kick()
}

// Finish says the state is final and waits until Slack shows it, or the
// message can never show it (its error), or ctx ends.
func (s *StatusMessage) Finish(ctx context.Context) error {
	s.mu.Lock()
	if s.final == 0 {
		s.version++
		s.final = s.version
		if s.ts != "" && s.sent >= s.final {
			s.end()
		}
		s.kick()
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// kick arranges the next edit if one is due and none is on its way. s.mu
// is held.
func (s *StatusMessage) kick() {
	if s.busy || s.ts == "" || s.err != nil || s.sent >= s.version {
		return
	}
	s.busy = true
	at := time.Now()
	if s.final == 0 {
		at = at.Add(statusSettle)
	}
	if at.Before(s.next) {
		at = s.next
	}
	time.AfterFunc(time.Until(at), s.edit)
}

// edit sends the state as it is now, in an editing slot.
func (s *StatusMessage) edit() {
	err := s.n.editWith(s.ctx, PriorityStatus, false, s.postedTo, s.ts, s.editMessage)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	s.next = time.Now().Add(time.Second)
	switch {
	case err == nil:
		s.sent = s.rendering
		s.backoff = s.n.cfg.RetryBackoff
	case s.ctx.Err() != nil:
		s.err = err
	case s.n.transient(err):
		// Slack failed it for a while: the state (then newer) goes again
		// after a back-off.
		s.n.log.Warn("could not update a status message for now; trying again", "channel", s.channel, "ts", s.ts, "in", s.backoff, "err", err)
		s.next = time.Now().Add(s.backoff)
		s.backoff = min(s.backoff*2, postBackoffMax)
	default:
		s.err = fmt.Errorf("slackui: update status message %s/%s: %w", s.channel, s.ts, err)
	}
	if s.err != nil || s.final > 0 && s.sent >= s.final {
		s.end()
		return
	}
	s.kick()
}

// editMessage renders an edit when its slot has come.
func (s *StatusMessage) editMessage() []slack.MsgOption {
	s.mu.Lock()
	v := s.version
	s.mu.Unlock()
	opts := []slack.MsgOption{slack.MsgOptionText(s.text(), false)}
	s.mu.Lock()
	s.rendering = v
	s.mu.Unlock()
	return opts
}

// end closes done once. s.mu is held.
func (s *StatusMessage) end() {
	s.doneOnce.Do(func() { close(s.done) })
}
