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
func (n *Notifier) Offers(a pending.Ask, actionID string) bool {
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
