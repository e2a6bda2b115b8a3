package slackui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// Bursts. Slack takes about one chat.postMessage a second per channel, so
// thirty agents asking at once would see their Asks posted over thirty
// seconds, and one with a short deadline could expire unseen. Instead each
// channel has a queue in this process, drained by one goroutine:
//
//   - a slot free now (the channel's pace, shared by every replica: see
//     NotifierConfig.Pace) and one Ask waiting: it gets its own message, in
//     its thread, exactly as without a queue;
//   - a slot free now and several waiting: one batch message ("N Asks
//     waiting") shows as many as Block Kit allows, each with its own facts
//     and buttons, unthreaded in the channel;
//   - no slot free: the Asks waiting join this process's latest batch
//     message of the channel, edited in place (chat.update is not held to
//     the posting pace), while it has room and is recent (BatchWindow);
//     else they wait for the next slot.
//
// A batched Ask's message is its batch message: Post returns it, the round
// trip records it as the Ask's message, so a click on its buttons is bound
// and decided exactly like a click on an Ask's own message. Which Asks a
// batch message shows is recorded (NotifierConfig.Batches), so whichever
// replica updates one of them renders the whole message again.

// channelQueue is a channel's Asks waiting to be shown by this process.
type channelQueue struct {
	waiting []*queuedAsk
	running bool          // a drain goroutine owns the queue
	wake    chan struct{} // the queue changed: the drain looks again
	batch   *openBatch    // this process's latest batch message in the channel
	// posts are the other messages for the channel (posts.go): run
	// status and answers, follow-ups, threads' titles. An Ask never waits
	// behind one (priority.go).
	posts []*queuedPost
}

// queuedAsk is one Post waiting for its Ask to be shown.
type queuedAsk struct {
	// ask is read, never written, here: PostThen's points at the round
	// trip's own copy (one Ask held per queued Ask, not two).
	ask    *pending.Ask
	thread string
	taken  bool // on its way to Slack; Post can no longer withdraw it
	done   chan struct{}
	then   func() // PostThen's: called once done is closed (nil for Post)

	// PostThen's Asks are given up by the drain itself, once ctx ends or
	// giveUpAt (zero: never) passes: abandon reports it. A timer and a
	// context hook per queued Ask were a third of what 10,000 of them
	// held. Post's (abandon nil) wait on their own.
	ctx      context.Context
	giveUpAt time.Time
	abandon  func(cause error)

	channel, ts string // where it was shown, once done
	err         error
}

// openBatch is a batch message that may take more Asks.
type openBatch struct {
	channel, ts string
	asks        []pending.Ask // as queued: to judge whether one more fits
	postedAt    time.Time
}

// batchRender is a render of one batch message in progress; updates of the
// same message meanwhile mark it dirty and wait for it. prio is what its
// next edit is for: an Ask joining raises a decision's render to its own
// priority, or the joined Asks would wait behind other decisions' edits.
type batchRender struct {
	dirty bool
	prio  Priority
	done  chan struct{}
	err   error
}

// enqueue queues q for channel and makes sure a goroutine drains the queue.
func (n *Notifier) enqueue(ctx context.Context, channel string, q *queuedAsk) {
	n.mu.Lock()
	defer n.mu.Unlock()
	cq := n.queue(ctx, channel)
	cq.waiting = append(cq.waiting, q)
	cq.poke()
}

// queue is channel's queue, with a goroutine draining it. n.mu is held.
func (n *Notifier) queue(ctx context.Context, channel string) *channelQueue {
	cq := n.queues[channel]
	if cq == nil {
		cq = &channelQueue{wake: make(chan struct{}, 1)}
		n.queues[channel] = cq
	}
	if !cq.running {
		cq.running = true
		n.draining.Add(1)
		// The drain outlives this Post (the next Asks ride on it), so it
		// is detached from its cancellation; every call it makes is
		// bounded by callTimeout.
		go n.drain(context.WithoutCancel(ctx), channel)
	}
	return cq
}

// finish says q's post is over (channel, ts and err are set).
func (q *queuedAsk) finish() {
	close(q.done)
	if q.then != nil {
		q.then()
	}
}

func (cq *channelQueue) poke() { poke(cq.wake) }

// withdraw takes q out of the queue unless it is already on its way.
func (n *Notifier) withdraw(channel string, q *queuedAsk) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if q.taken {
		return false
	}
	if cq := n.queues[channel]; cq != nil {
		for i, w := range cq.waiting {
			if w == q {
				cq.waiting = append(cq.waiting[:i], cq.waiting[i+1:]...)
				cq.poke()
				break
			}
		}
	}
	return true
}

// callTimeout bounds one Slack call of the drain, retries included.
const callTimeout = 30 * time.Second

// abandonPoll is how often the drain looks for queued Asks whose context
// ended (their give-up times it knows in advance).
const abandonPoll = time.Second

// given is a queued Ask (q) or post the drain gave up, and why.
type given struct {
	q     *queuedAsk
	post  *queuedPost
	cause error
}

// dropAbandoned takes out of the queue the PostThen Asks whose context
// ended or whose give-up time passed, and returns them with the earliest
// give-up time of those left (zero: none). n.mu is held.
func (cq *channelQueue) dropAbandoned(now time.Time) (gone []given, next time.Time) {
	kept := cq.waiting[:0]
	for _, q := range cq.waiting {
		if q.abandon != nil {
			if q.ctx.Err() != nil {
				gone = append(gone, given{q: q, cause: context.Cause(q.ctx)})
				continue
			}
			if !q.giveUpAt.IsZero() {
				if !now.Before(q.giveUpAt) {
					gone = append(gone, given{q: q, cause: context.DeadlineExceeded})
					continue
				}
				if next.IsZero() || q.giveUpAt.Before(next) {
					next = q.giveUpAt
				}
			}
		}
		kept = append(kept, q)
	}
	clear(cq.waiting[len(kept):]) // no stale pointers past the end
	cq.waiting = kept
	return gone, next
}

// drain shows channel's queued Asks and posts its other messages, the
// most urgent first, until none is left.
func (n *Notifier) drain(ctx context.Context, channel string) {
	defer n.draining.Done()
	released := false
	for {
		now := time.Now()
		n.mu.Lock()
		cq := n.queues[channel]
		gone, nextGiveUp := cq.dropAbandoned(now)
		stale, nextPostGiveUp := cq.dropGonePosts(now)
		gone = append(gone, stale...)
		if nextGiveUp.IsZero() || !nextPostGiveUp.IsZero() && nextPostGiveUp.Before(nextGiveUp) {
			nextGiveUp = nextPostGiveUp
		}
		if len(cq.waiting) == 0 && len(cq.posts) == 0 && !released {
			// Nothing left: other replicas need not yield to this one.
			// Released before the drain ends, so a drain started after
			// it never loses its fresh claim to this release.
			n.mu.Unlock()
			report(gone)
			n.release(ctx, channel)
			released = true
			continue
		}
		released = false
		if len(cq.waiting) == 0 && len(cq.posts) == 0 {
			cq.running = false
			if cq.batch == nil || n.cfg.Now().Sub(cq.batch.postedAt) > n.cfg.BatchWindow {
				delete(n.queues, channel)
			}
			n.mu.Unlock()
			report(gone)
			return
		}
		// The most urgent thing due: an Ask if any waits, else the first
		// post of the most urgent priority whose time has come. A slot is
		// not taken for a post before its time.
		prio, ready := PriorityAsk, len(cq.waiting) > 0
		var postDue time.Time
		if !ready {
			var q *queuedPost
			q, _, postDue = cq.nextPost(now)
			if ready = q != nil; ready {
				prio = q.Priority
			}
		}
		n.mu.Unlock()
		report(gone)
		var wait time.Duration
		if !ready {
			wait = postDue.Sub(now)
		} else {
			if wait = n.take(ctx, channel, prio); wait == 0 {
				if prio == PriorityAsk {
					n.postNext(ctx, channel)
				} else {
					n.postQueued(ctx, channel)
				}
				continue
			}
			if prio == PriorityAsk && n.joinBatch(ctx, channel, wait) {
				continue
			}
		}
		// Look again for Asks and posts to give up on time, however long
		// the channel's pace asks to wait.
		wait = min(wait, abandonPoll)
		if !nextGiveUp.IsZero() {
			wait = max(min(wait, time.Until(nextGiveUp)), 0)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-cq.wake: // an Ask or a post joined (a batch may take it) or left
		}
		t.Stop()
	}
}

// report tells the queued Asks and posts the drain dropped that they were
// given up; it runs without n.mu.
func report(gone []given) {
	for _, g := range gone {
		if g.q != nil {
			g.q.abandon(g.cause)
		} else {
			go g.post.done("", "", g.cause)
		}
	}
}

// postNext spends the slot just taken on the Asks waiting: the one Ask in
// its own message, or as many as fit in a new batch message.
func (n *Notifier) postNext(ctx context.Context, channel string) {
	n.mu.Lock()
	cq := n.queues[channel]
	if len(cq.waiting) == 0 { // withdrawn meanwhile
		n.mu.Unlock()
		return
	}
	var msg Message
	take := 1
	if n.cfg.Asks != nil && len(cq.waiting) > 1 {
		asks := queuedHead(cq.waiting)
		if k, m := n.fitBatch(nil, asks); k > 1 {
			take, msg = k, m
		}
	}
	items := append([]*queuedAsk(nil), cq.waiting[:take]...)
	cq.waiting = cq.waiting[take:]
	for _, q := range items {
		q.taken = true
	}
	n.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if take == 1 {
		q := items[0]
		q.channel, q.ts, q.err = n.postOwn(cctx, channel, q)
		q.finish()
		return
	}
	posted, ts, err := n.postSlotted(cctx, channel, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
	if err == nil {
		ids := make([]string, len(items))
		for i, q := range items {
			ids[i] = q.ask.ID
		}
		// Recorded before any Post returns it: an update of one of its
		// Asks must find the whole message.
		if err = n.cfg.Batches.Add(cctx, posted, ts, ids...); err != nil {
			err = fmt.Errorf("record batch message: %w", err)
			n.takeDown(cctx, posted, ts)
		}
	}
	if err == nil {
		b := &openBatch{channel: posted, ts: ts, postedAt: n.cfg.Now()}
		for _, q := range items {
			b.asks = append(b.asks, *q.ask)
		}
		n.mu.Lock()
		cq.batch = b
		n.mu.Unlock()
		n.log.Info("channel backed up; asks shown in one batch message", "channel", posted, "ts", ts, "asks", len(items))
	}
	for _, q := range items {
		q.channel, q.ts, q.err = posted, ts, err
		q.finish()
	}
}

// joinBatch adds the Asks waiting to the channel's open batch message by
// editing it, as many as fit; false when there is no such message or it
// is full. The edit waits for a chat.update slot (the app's, shared with
// every other edit) no longer than within, when the channel has its next
// posting slot anyway; true then too: the drain looks again at once.
func (n *Notifier) joinBatch(ctx context.Context, channel string, within time.Duration) bool {
	if n.cfg.Asks == nil {
		return false
	}
	open := func(cq *channelQueue) bool {
		b := cq.batch
		return b != nil && len(cq.waiting) > 0 && n.cfg.Now().Sub(b.postedAt) <= n.cfg.BatchWindow
	}
	n.mu.Lock()
	ok := open(n.queues[channel])
	n.mu.Unlock()
	if !ok {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, within)
	err := n.editSlot(sctx, PriorityAsk)
	cancel()
	if err != nil {
		return true
	}
	n.mu.Lock()
	cq := n.queues[channel]
	b := cq.batch
	if !open(cq) {
		n.mu.Unlock()
		return true // the Asks went meanwhile; the slot is spent
	}
	waiting := queuedHead(cq.waiting)
	k, _ := n.fitBatch(b.asks, waiting)
	if k == 0 {
		cq.batch = nil // full: the next slot opens another
		n.mu.Unlock()
		return true
	}
	items := append([]*queuedAsk(nil), cq.waiting[:k]...)
	cq.waiting = cq.waiting[k:]
	ids := make([]string, k)
	for i, q := range items {
		q.taken = true
		ids[i] = q.ask.ID
		b.asks = append(b.asks, *q.ask)
	}
	n.mu.Unlock()

	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err = n.cfg.Batches.Add(cctx, b.channel, b.ts, ids...)
	if err == nil {
		_, err = n.updateBatch(cctx, pending.Ask{Request: pending.Request{}, Channel: b.channel, MessageTS: b.ts}, PriorityAsk, true)
	}
	if err != nil {
		err = fmt.Errorf("add to batch message %s/%s: %w", b.channel, b.ts, err)
		n.mu.Lock()
		if cq.batch == b {
			cq.batch = nil // do not pile more on a message that failed
		}
		n.mu.Unlock()
	}
	for _, q := range items {
		q.channel, q.ts, q.err = b.channel, b.ts, err
		q.finish()
	}
	return true
}

// postOwn posts q's Ask in its own message, in its thread: the slot is
// already taken, so only retries wait.
func (n *Notifier) postOwn(ctx context.Context, channel string, q *queuedAsk) (string, string, error) {
	msg := n.render(*q.ask)
	opts := []slack.MsgOption{slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...)}
	if q.thread != "" {
		opts = append(opts, slack.MsgOptionTS(q.thread))
	}
	return n.postSlotted(ctx, channel, opts...)
}

// postSlotted posts in a slot already taken, retrying like PostMessage.
func (n *Notifier) postSlotted(ctx context.Context, channel string, opts ...slack.MsgOption) (posted, ts string, err error) {
	err = n.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		posted, ts, err = n.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if posted == "" {
		posted = channel
	}
	return posted, ts, err
}

// takeDown empties a batch message whose Asks could not be recorded with
// it: its buttons would act on nothing known to be there.
func (n *Notifier) takeDown(ctx context.Context, channel, ts string) {
	text := "These approval requests could not be shown here; askops is trying again or they end unanswered. Nothing ran because of this message."
	if err := n.edit(ctx, PriorityDecision, false, channel, ts, slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(sectionBlock("askops_batch_down", text))); err != nil {
		n.log.Warn("could not take down a batch message", "channel", channel, "ts", ts, "err", err)
	}
}

// queuedHead is the Asks at the head of a queue that one batch message
// could show: every entry takes a block at least, so no more than a
// message's blocks. (10,000 queued Asks copied whole for every slot were
// most of a backed-up serve's garbage.)
func queuedHead(waiting []*queuedAsk) []pending.Ask {
	asks := make([]pending.Ask, min(len(waiting), MaxMessageBlocks))
	for i := range asks {
		asks[i] = *waiting[i].ask
	}
	return asks
}

// fitBatch is how many of more fit in one batch message after shown (the
// Asks it already shows), and that message. Each Ask is rendered once:
// fitting re-assembles the rendered entries, it does not render them again
// (the caller holds n.mu, and an entry's render parses its command).
func (n *Notifier) fitBatch(shown, more []pending.Ask) (k int, msg Message) {
	entries := n.renderEntries(shown)
	for _, a := range more {
		entries = append(entries, n.renderEntry(a))
		m := n.batchMessage(entries)
		if CheckLimits(m.Blocks) != nil {
			break
		}
		k, msg = k+1, m
	}
	return k, msg
}

// renderBatch renders the batch message showing asks, each in its current
// state and compact (RenderOptions.Compact).
func (n *Notifier) renderBatch(asks []pending.Ask) Message {
	return n.batchMessage(n.renderEntries(asks))
}

// batchEntryRender is one Ask's entry in a batch message, rendered.
type batchEntryRender struct {
	id     string
	blocks []slack.Block // its facts and buttons (batchEntry)
	line   string        // its one-line summary: the Ask message's notification text
	done   bool
}

func (n *Notifier) renderEntry(a pending.Ask) batchEntryRender {
	m := RenderAsk(a, RenderOptions{GrantScope: n.cfg.ScopeText(a), GrantDurations: n.cfg.GrantDurations, Now: n.cfg.Now(), Compact: true})
	_, done := a.Outcome()
	return batchEntryRender{id: a.ID, blocks: batchEntry(a.ID, m.Blocks), line: m.Text, done: done}
}

func (n *Notifier) renderEntries(asks []pending.Ask) []batchEntryRender {
	entries := make([]batchEntryRender, len(asks))
	for i, a := range asks {
		entries[i] = n.renderEntry(a)
	}
	return entries
}

// batchMessage is the batch message of entries. Decisions can lengthen an
// entry (a reason, a scope) past what the message had room for: the
// decided ones then shrink to their line, so the update is still taken and
// the open Asks keep their buttons.
func (n *Notifier) batchMessage(entries []batchEntryRender) Message {
	msg := n.assembleBatch(entries, false)
	if CheckLimits(msg.Blocks) != nil {
		msg = n.assembleBatch(entries, true)
	}
	return msg
}

// assembleBatch puts the head and entries together, the decided ones as
// their line when brief.
func (n *Notifier) assembleBatch(entries []batchEntryRender, brief bool) Message {
	open := 0
	for _, e := range entries {
		if !e.done {
			open++
		}
	}
	var head, text string
	if open > 0 {
		head = fmt.Sprintf(":inbox_tray: *%d of %d approval requests waiting* — they came faster than Slack lets askops post here, so they are shown together. Each has its own buttons.", open, len(entries))
		text = fmt.Sprintf("%d approval requests waiting", open)
		if n.cfg.Mention != "" {
			head = "cc " + mentionText(n.cfg.Mention) + " " + head
			text = mentionText(n.cfg.Mention) + " " + text
		}
	} else {
		head = fmt.Sprintf(":white_check_mark: *%d approval requests, all ended*", len(entries))
		text = head
	}
	blocks := []slack.Block{sectionBlock("askops_batch_head", head)}
	var gists []string
	for _, e := range entries {
		if e.done && brief {
			blocks = append(blocks, sectionBlock(batchBlockID(e.id, 0), e.line))
		} else {
			blocks = append(blocks, e.blocks...)
		}
		if !e.done && len(gists) < 5 {
			gists = append(gists, e.line)
		}
	}
	if len(gists) > 0 {
		text += ": " + strings.Join(gists, "; ")
	}
	return Message{Text: text, Blocks: blocks}
}

// batchEntry is an Ask's message (blocks, as RenderAsk made them) as one
// entry of a batch message: the same text and the same buttons, its text
// blocks merged into as few sections as Block Kit allows (a message holds
// 50 blocks) and every block id made unique to the Ask.
func batchEntry(id string, blocks []slack.Block) []slack.Block {
	var out []slack.Block
	var lines []string
	size := 0
	blockID := func() string { return batchBlockID(id, len(out)) }
	flush := func() {
		if len(lines) > 0 {
			out = append(out, sectionBlock(blockID(), strings.Join(lines, "\n")))
			lines, size = nil, 0
		}
	}
	add := func(t string) {
		if t == "" {
			return
		}
		if size+textLen(t)+1 > MaxSectionText {
			flush()
		}
		lines = append(lines, t)
		size += textLen(t) + 1
	}
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if b.Text != nil {
				add("*" + Escape(b.Text.Text) + "*")
			}
		case *slack.SectionBlock:
			if b.Text != nil && len(b.Fields) == 0 && b.Accessory == nil {
				add(textOf(b.Text))
				continue
			}
			flush()
			c := *b
			c.BlockID = blockID()
			out = append(out, &c)
		case *slack.ContextBlock:
			var parts []string
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					parts = append(parts, textOf(t))
				}
			}
			add(strings.Join(parts, " · "))
		case *slack.ActionBlock:
			flush()
			c := *b
			c.BlockID = blockID()
			out = append(out, &c)
		default:
			flush()
			out = append(out, b)
		}
	}
	flush()
	return out
}

// batchBlockID is the id of the nth block of Ask id's entry in a batch
// message: unique in the message, and naming the Ask.
func batchBlockID(id string, n int) string { return fmt.Sprintf("askops_batch_%s_%d", id, n) }

// textOf is t as mrkdwn.
func textOf(t *slack.TextBlockObject) string {
	if t.Type == slack.PlainTextType {
		return Escape(t.Text)
	}
	return t.Text
}

// updateBatch renders a's message again if it is a batch message (then
// batched): every Ask it shows, as the store has them now. Updates of the
// same message in this process ride on one render; and each render reads
// the Asks again after writing, and writes again until what it read is
// what it wrote, so that of two replicas updating the message at once the
// last write is never the older state.
//
// prio is what the edits are for (an Ask joining, a decision); held says
// the caller took the first edit's slot already.
func (n *Notifier) updateBatch(ctx context.Context, a pending.Ask, prio Priority, held bool) (batched bool, err error) {
	ids, err := n.cfg.Batches.Members(ctx, a.Channel, a.MessageTS)
	if err != nil {
		// Rendering a alone over a batch message would take every other
		// Ask's buttons away; leave the message as it is.
		return true, fmt.Errorf("slackui: is %s/%s a batch message: %w", a.Channel, a.MessageTS, err)
	}
	if len(ids) == 0 {
		return false, nil
	}
	if n.cfg.Asks == nil {
		return true, fmt.Errorf("slackui: batch message %s/%s: no ask store to render it from", a.Channel, a.MessageTS)
	}
	key := [2]string{a.Channel, a.MessageTS}
	n.mu.Lock()
	if r := n.batching[key]; r != nil {
		r.dirty = true
		r.prio = min(r.prio, prio)
		n.mu.Unlock()
		select {
		case <-r.done:
			return true, r.err
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	r := &batchRender{prio: prio, done: make(chan struct{})}
	n.batching[key] = r
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.batching, key)
		n.mu.Unlock()
		r.err = err
		close(r.done)
	}()
	return true, n.renderBatchUntilStable(ctx, r, a, held)
}

func (n *Notifier) renderBatchUntilStable(ctx context.Context, r *batchRender, a pending.Ask, held bool) error {
	var written string
	for range 10 {
		n.mu.Lock()
		r.dirty = false
		n.mu.Unlock()
		ids, err := n.cfg.Batches.Members(ctx, a.Channel, a.MessageTS)
		if err != nil {
			return err
		}
		asks := make([]pending.Ask, 0, len(ids))
		var state strings.Builder
		for _, id := range ids {
			got, err := n.cfg.Asks.Get(ctx, id)
			if err != nil {
				if id != a.ID {
					return fmt.Errorf("slackui: read ask %s of batch message %s/%s: %w", id, a.Channel, a.MessageTS, err)
				}
				got = a
			}
			asks = append(asks, got)
			fmt.Fprintf(&state, "%s %s %s %s %s\n", got.ID, got.Status, got.Votes, got.DecidedBy, got.DecisionReason)
		}
		if state.String() != written {
			msg := n.renderBatch(asks)
			n.mu.Lock()
			prio := r.prio
			n.mu.Unlock()
			err := n.edit(ctx, prio, held, a.Channel, a.MessageTS, slack.MsgOptionText(msg.Text, false), slack.MsgOptionBlocks(msg.Blocks...))
			held = false
			if err != nil {
				return fmt.Errorf("slackui: update batch message %s/%s: %w", a.Channel, a.MessageTS, err)
			}
			written = state.String()
			continue
		}
		n.mu.Lock()
		dirty := r.dirty
		n.mu.Unlock()
		if !dirty {
			return nil
		}
	}
	return nil
}
