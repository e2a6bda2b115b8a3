package slackui

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// MessageSaver saves where an Ask's message is; pending.Store satisfies it.
// Interactions use it when a click beats the poster's own save.
type MessageSaver interface {
	SetMessage(ctx context.Context, id, channel, ts string) error
}

// adoptClicked records the clicked message as a's own when the store does
// not know a's message yet: the click beat the poster's save (Slack showed
// the message before the poster's process got chat.postMessage's answer).
// boundAsk has checked that the message Slack signed into the payload
// carries this Ask's button. Saved before the decision, the message is on
// the decided record from the start, so whoever reads the decision (a long
// poll on another replica: its message_url) sees where it was asked; the
// poster's own save, landing later, writes the same address.
func (i *Interactions) adoptClicked(ctx context.Context, cb slack.InteractionCallback, a *pending.Ask) {
	if a.Channel != "" || a.MessageTS != "" || fromHome(cb) {
		return
	}
	saver, ok := i.cfg.Asks.(MessageSaver)
	if !ok {
		return
	}
	channel, ts, ok := clickedOn(cb)
	if !ok {
		return
	}
	if err := saver.SetMessage(ctx, a.ID, channel, ts); err != nil {
		// The decision still counts; the poster's save may yet land.
		i.log.Warn("could not save the clicked message as the ask's", "ask", a.ID, "err", err)
		return
	}
	a.Channel, a.MessageTS = channel, ts
}
