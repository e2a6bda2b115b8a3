package approval

import (
	"cmp"
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

// ExpiredUpdater brings a channel's messages in step with Asks a sweep
// ended; slackui's Notifier and the console's Live satisfy it.
type ExpiredUpdater interface {
	UpdateExpired(ctx context.Context, asks []pending.Ask)
}

// ExpiredUpdaters brings every channel in step with the Asks a sweep
// ended (their waiters are gone, so nobody else does): Slack's notifier
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

// Sweep ends the Asks nobody will decide: every Every it expires overdue
// Asks (the ones whose waiter's process is gone) and, every
// pending.LeaseSweepInterval (or Every if shorter), cancels those whose
// asker stopped waiting (a killed hook, a dead serve: their leases
// lapsed), and updates their messages. Any replica may run it: the store
// ends each Ask exactly once between them, so each message is updated by
// the replica that ended it. It belongs to the round trip, not to a
// channel: a serve with only the console sweeps the same way.
type Sweep struct {
	Store    Sweeper
	Messages ExpiredUpdater
	Every    time.Duration // default 30s
	Now      func() time.Time
	Logger   *slog.Logger
}

// Run sweeps until ctx ends; it returns nil then (a failed sweep is
// logged and tried again on the next tick).
func (s Sweep) Run(ctx context.Context) error {
	every, now, log := s.Every, s.Now, s.Logger
	if every <= 0 {
		every = 30 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	t := time.NewTicker(every)
	defer t.Stop()
	leases := time.NewTicker(min(every, pending.LeaseSweepInterval))
	defer leases.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-leases.C:
			gone, err := s.Store.SweepLeases(ctx)
			if err != nil {
				log.Warn("lease sweep failed", "err", err)
			}
			if len(gone) > 0 {
				log.Info("lease sweep cancelled asks whose asker stopped waiting", "count", len(gone))
				s.Messages.UpdateExpired(ctx, gone)
			}
			continue
		case <-t.C:
		}
		expired, err := s.Store.Sweep(ctx, now())
		if err != nil {
			log.Warn("expiry sweep failed", "err", err)
		}
		if len(expired) > 0 {
			log.Info("expiry sweep expired asks", "count", len(expired))
			s.Messages.UpdateExpired(ctx, expired)
		}
	}
}
