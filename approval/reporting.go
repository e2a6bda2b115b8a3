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

// PostThen implements Notifier: Notifier's PostThen, reported when it
// succeeded.
func (n Reporting) PostThen(ctx context.Context, a *pending.Ask, done func(channel, ts string, err error)) {
	n.Notifier.PostThen(ctx, a, func(channel, ts string, err error) {
		if err == nil {
			n.Posted(*a, channel, ts)
		}
		done(channel, ts, err)
	})
}
