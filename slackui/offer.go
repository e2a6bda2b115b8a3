package slackui

import (
	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// Offers reports whether a's message, as this Notifier renders it while
// the Ask is open, has a button with actionID: "Approve for session" only
// where a session grant was stated, "Show full" only where something was
// cut. Interactions honour a click only for what the message offered, and
// they ask the renderer itself rather than copying its rules, so the two
// cannot drift apart.
//
// The buttons every open message carries (alwaysOffered) are answered
// without rendering: rendering is the whole message, redaction of the call
// included (tens of µs for a short command, more for a long one), and it
// sat on a click's path between reading the Ask and recording the decision
// (BenchmarkClickToResume, replica B's trace). TestAlwaysOfferedIsRendered
// holds renderOpen to that list.
func (n *Notifier) Offers(a pending.Ask, actionID string) bool {
	if alwaysOffered(actionID) {
		return true
	}
	open := a
	open.Status, open.DecidedBy, open.DecisionReason = pending.StatusPending, "", ""
	return buttonFor(n.render(open).Blocks, actionID, a.ID)
}

// buttonFor reports whether blocks hold a button with actionID whose value
// is value.
func buttonFor(blocks []slack.Block, actionID, value string) bool {
	for _, b := range blocks {
		if pb, ok := b.(*payloadBlocks); ok {
			if buttonFor(pb.decode(), actionID, value) {
				return true
			}
			continue
		}
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.Elements == nil {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID && btn.Value == value {
				return true
			}
		}
	}
	return false
}

// alwaysOffered reports whether every open Ask's message carries a button
// with actionID, whatever the Ask holds.
func alwaysOffered(actionID string) bool {
	switch actionID {
	case ActionApprove, ActionDeny, ActionDenyReason:
		return true
	}
	return false
}
