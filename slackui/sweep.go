package slackui

import (
	"context"
	"log/slog"
	"time"

	"github.com/askops/askops/pending"
)

// Sweeper expires overdue Asks and cancels those whose asker stopped
// waiting; pending.Store satisfies it.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time) ([]pending.Ask, error)
	SweepLeases(ctx context.Context) ([]pending.Ask, error)
}

// ExpiredUpdater updates the messages of Asks a sweep expired; *Notifier
// satisfies it.
type ExpiredUpdater interface {
	UpdateExpired(ctx context.Context, asks []pending.Ask)
}

// RunSweeper expires overdue Asks every interval (the ones whose waiter's
// process is gone) and, every pending.LeaseSweepInterval (or interval if
// shorter), cancels those whose asker stopped waiting (a killed hook, a
// dead serve: their leases lapsed), and updates their messages, until ctx
// ends. Any replica may run it: the store ends each Ask exactly once
// between them, so each message is updated by the replica that ended it.
func RunSweeper(ctx context.Context, store Sweeper, n ExpiredUpdater, every time.Duration, now func() time.Time, log *slog.Logger) {
	if every <= 0 {
		every = 30 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	leases := time.NewTicker(min(every, pending.LeaseSweepInterval))
	defer leases.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-leases.C:
			gone, err := store.SweepLeases(ctx)
			if err != nil {
				log.Warn("lease sweep failed", "err", err)
			}
			if len(gone) > 0 {
				log.Info("lease sweep cancelled asks whose asker stopped waiting", "count", len(gone))
				n.UpdateExpired(ctx, gone)
			}
			continue
		case <-t.C:
		}
		expired, err := store.Sweep(ctx, now())
		if err != nil {
			log.Warn("expiry sweep failed", "err", err)
		}
		if len(expired) > 0 {
			log.Info("expiry sweep expired asks", "count", len(expired))
			n.UpdateExpired(ctx, expired)
		}
	}
}
