package approval

import (
	"context"

	"github.com/askops/askops/pending"
)

// Reporting is a Notifier that tells Posted where its Notifier showed each
// Ask (bot ask says on stderr where it waits).
type Reporting struct {
	Notifier
	Posted func(a pending.Ask, channel, ts string)
}

// Post implements Notifier: Notifier's Post, reported when it succeeded.
func (n Reporting) Post(ctx context.Context, a pending.Ask) (string, string, error) {
	channel, ts, err := n.Notifier.Post(ctx, a)
	if err == nil {
		n.Posted(a, channel, ts)
	}
	return channel, ts, err
}
