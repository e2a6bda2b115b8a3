package slackui

import (
	"context"
	"fmt"
	"time"

	"github.com/askops/askops/internal/channelpace"
)

// Priorities. Slack lets an app post about once a second per channel and
// edit about fifty messages a minute; everything askops says shares those
// budgets. What a person must act on goes first, so a busy channel never
// makes an Ask wait behind what people only glance at:
//
//  1. new Asks: their messages, their batch messages, and the edits that
//     add Asks to a batch message;
//  2. decision updates: an Ask's messages brought in step with a vote, a
//     decision or its end;
//  3. follow-ups: reminders and escalations, in the Ask's thread and by DM
//     (only ever for an Ask already shown: escalate.go);
//  4. run status and answers, and agent sessions' thread titles.
//
// Within one process each channel's posts wait in its queue (burst.go) and
// the app's edits in one lane (editLane), the most urgent first. Between
// replicas the pace on Redis (channelpace.Redis) knows each one's most
// urgent claim per channel: a replica with only status to post yields the
// channel's slots while another has Asks queued there. The more urgent
// always take the next slot; the less urgent wait, and nothing they say
// is lost for it (a run's status is coalesced to its latest state, its
// answer retried until posted: status.go, poster.go).

// Priority is what a Slack post or edit is for; the lower goes first.
type Priority int

const (
	// PriorityAsk is a new Ask's message, batch message or batch edit.
	PriorityAsk Priority = iota
	// PriorityDecision is an Ask's messages brought in step with it.
	PriorityDecision
	// PriorityFollowup is a reminder or an escalation (thread post, DM).
	PriorityFollowup
	// PriorityStatus is a run's status and answer, a thread's title.
	PriorityStatus

	numPriorities
)

func (p Priority) String() string {
	switch p {
	case PriorityAsk:
		return "ask"
	case PriorityDecision:
		return "decision"
	case PriorityFollowup:
		return "followup"
	case PriorityStatus:
		return "status"
	}
	return fmt.Sprintf("priority(%d)", int(p))
}

// editKey is the pace's key for the app's chat.update calls: Slack limits
// them per app and workspace (Tier 3), not per channel. No channel id has
// a dot.
const editKey = "chat.update"

// take takes a posting slot in channel for prio now if there is one (0),
// else says how long until it is worth looking again. A shared pace that
// fails falls back to this process's.
func (n *Notifier) take(ctx context.Context, channel string, prio Priority) time.Duration {
	return n.takeKey(ctx, channel, n.postLimit(), prio)
}

func (n *Notifier) postLimit() channelpace.Limit {
	return channelpace.Limit{Interval: n.cfg.PerChannelInterval, Burst: n.cfg.PerChannelBurst}
}

func (n *Notifier) editLimit() channelpace.Limit {
	return channelpace.Limit{Interval: n.cfg.EditInterval, Burst: n.cfg.EditBurst}
}

func (n *Notifier) takeKey(ctx context.Context, key string, l channelpace.Limit, prio Priority) time.Duration {
	l = headroom(l, prio)
	c := channelpace.Claim{Priority: int(prio), Holder: n.holder}
	wait, err := n.slots.Take(ctx, key, l, c)
	if err != nil {
		n.log.Warn("the shared posting pace failed; pacing this process alone", "channel", key, "err", err)
		wait, _ = n.local.Take(ctx, key, l, c)
	}
	return wait
}

// headroom is the pace run status and answers take slots at: the same
// rate, but a burst of half the size (at least 1), so they never spend the
// slots a burst of Asks or decisions finds waiting. The pace's state is
// shared, so the headroom holds across replicas too: with a channel's
// burst of 3 its status posts go only while 2 slots are spare for Asks, and
// sixty runs' status edits leave ten of the app's twenty for decisions.
func headroom(l channelpace.Limit, prio Priority) channelpace.Limit {
	if prio == PriorityStatus {
		l.Burst = max(1, l.Burst/2)
	}
	return l
}

// release drops this process's claim on key: nothing of it waits there.
func (n *Notifier) release(ctx context.Context, key string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := n.slots.Release(rctx, key, n.holder); err != nil {
		n.log.Debug("could not release the posting claim; it lapses", "channel", key, "err", err)
	}
	_ = n.local.Release(rctx, key, n.holder)
}

// editLane is the app's chat.update budget in this process: callers wait
// for a slot, the most urgent first (FIFO within a priority), and one
// goroutine, running only while someone waits, takes the slots from the
// pace and hands them out.
type editLane struct {
	waiting [numPriorities][]*editWaiter
	running bool
	wake    chan struct{}
}

type editWaiter struct {
	granted chan struct{} // closed when the slot is this waiter's
	gone    bool          // its caller stopped waiting
}

// editSlot waits for a chat.update slot at prio; an error means ctx ended
// first (no slot was taken for the caller).
func (n *Notifier) editSlot(ctx context.Context, prio Priority) error {
	w := &editWaiter{granted: make(chan struct{})}
	n.mu.Lock()
	lane := &n.edits
	lane.waiting[prio] = append(lane.waiting[prio], w)
	if lane.wake == nil {
		lane.wake = make(chan struct{}, 1)
	}
	if !lane.running {
		lane.running = true
		n.draining.Add(1)
		go n.handOutEdits(context.WithoutCancel(ctx))
	}
	poke(lane.wake)
	n.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
		n.mu.Lock()
		defer n.mu.Unlock()
		select {
		case <-w.granted:
			return nil // granted just now: use it
		default:
		}
		w.gone = true
		poke(lane.wake)
		return ctx.Err()
	}
}

// handOutEdits takes chat.update slots while anyone waits for one and
// hands each to the most urgent waiter.
func (n *Notifier) handOutEdits(ctx context.Context) {
	defer n.draining.Done()
	lane := &n.edits
	released := false
	for {
		n.mu.Lock()
		prio := Priority(-1)
		for p := range lane.waiting {
			kept := lane.waiting[p][:0]
			for _, w := range lane.waiting[p] {
				if !w.gone {
					kept = append(kept, w)
				}
			}
			clear(lane.waiting[p][len(kept):])
			lane.waiting[p] = kept
			if len(kept) > 0 && prio < 0 {
				prio = Priority(p)
			}
		}
		if prio < 0 && !released {
			// Released before the lane stops, so a lane started after it
			// never loses its fresh claim to this release.
			n.mu.Unlock()
			n.release(ctx, editKey)
			released = true
			continue
		}
		if prio < 0 {
			lane.running = false
			n.mu.Unlock()
			return
		}
		released = false
		n.mu.Unlock()
		wait := n.takeKey(ctx, editKey, n.editLimit(), prio)
		if wait == 0 {
			n.mu.Lock()
			// The most urgent waiter now: one may have come or gone.
			granted := false
			for p := range lane.waiting {
				for i, w := range lane.waiting[p] {
					if !w.gone {
						close(w.granted)
						lane.waiting[p] = append(lane.waiting[p][:i], lane.waiting[p][i+1:]...)
						granted = true
						break
					}
				}
				if granted {
					break
				}
			}
			n.mu.Unlock()
			continue
		}
		t := time.NewTimer(min(wait, abandonPoll))
		select {
		case <-t.C:
		case <-lane.wake:
		}
		t.Stop()
	}
}

// poke wakes whoever waits on wake (capacity 1), if it is not awake yet.
func poke(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
