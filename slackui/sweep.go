package slackui

import (
	"context"
	"log/slog"
	"time"

	"github.com/askops/askops/approval"
)

// Sweeper expires overdue Asks and cancels those whose asker stopped
// waiting; pending.Store satisfies it (approval.Sweeper).
type Sweeper = approval.Sweeper

// ExpiredUpdater updates the messages of Asks a sweep expired; *Notifier
// satisfies it (approval.ExpiredUpdater).
type ExpiredUpdater = approval.ExpiredUpdater

// RunSweeper is approval.Sweep's Run, kept for Slack's callers: the sweep
// is the round trip's, and a serve without Slack runs it the same way.
func RunSweeper(ctx context.Context, store Sweeper, n ExpiredUpdater, every time.Duration, now func() time.Time, log *slog.Logger) {
	_ = approval.Sweep{Store: store, Messages: n, Every: every, Now: now, Logger: log}.Run(ctx)
}
