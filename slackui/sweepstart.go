package slackui

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// StartSweeper runs RunSweeper in the background; stop ends it and waits
// for a sweep in progress, so the stores it uses may be closed after.
func StartSweeper(ctx context.Context, store Sweeper, n ExpiredUpdater, every time.Duration, now func() time.Time, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var sweeper sync.WaitGroup
	sweeper.Go(func() { RunSweeper(ctx, store, n, every, now, log) })
	return func() { cancel(); sweeper.Wait() }
}
