package slackui

import (
	"context"

	"github.com/askops/askops/pending"
)

// ExpiredUpdaters brings every channel in step with the Asks a sweep
// expired (their waiters are gone, so nobody else does): Slack's notifier
// and, beside it, the console's. Nil entries are skipped.
type ExpiredUpdaters []ExpiredUpdater

// UpdateExpired implements ExpiredUpdater.
func (us ExpiredUpdaters) UpdateExpired(ctx context.Context, asks []pending.Ask) {
	for _, u := range us {
		if u != nil {
			u.UpdateExpired(ctx, asks)
		}
	}
}
