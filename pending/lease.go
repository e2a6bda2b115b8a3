package pending

import (
	"context"
	"errors"
)

// An Ask lives only while its asker waits for it. Whoever waits holds the
// Ask (Hold): the store keeps a lease on it that the holder's process
// renews; once nobody holds it (the asker was killed, its connection
// dropped, the process that waited for it died) the lease lapses and
// SweepLeases, on any replica, ends the Ask cancelled with ReasonAskerGone,
// so no approver can approve a call its agent has already settled another
// way.

// ReasonAskerGone is the decision reason of an Ask that ended because its
// asker stopped waiting for it.
const ReasonAskerGone = "the agent stopped waiting"

// ErrAskerGone is the cause a front door cancels a waiting context with
// when its asker went away (a dropped connection): Wait then records
// ReasonAskerGone.
var ErrAskerGone = errors.New(ReasonAskerGone)

// cancelReason is the reason Wait records when ctx ended: ReasonAskerGone
// when the front door said its asker went away, else the context's cause.
func cancelReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrAskerGone) {
		return ReasonAskerGone
	}
	return "wait ended: " + cause.Error()
}
