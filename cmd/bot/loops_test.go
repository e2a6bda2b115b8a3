package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/askops/askops/internal/testwait"
)

// A loop starts once per name and runs until stop, which waits for it to
// return; after stop nothing starts.
func TestLoopsStartOnceAndStopDrains(t *testing.T) {
	l := &loops{log: slog.New(slog.DiscardHandler)}
	var runs, running atomic.Int32
	loop := func(ctx context.Context) error {
		runs.Add(1)
		running.Add(1)
		defer running.Add(-1)
		<-ctx.Done()
		return nil
	}
	l.start("followups", loop)
	l.start("followups", loop)
	testwait.For(t, "the loop to start", func() bool { return running.Load() == 1 })
	l.stop()
	if running.Load() != 0 || runs.Load() != 1 {
		t.Fatalf("after stop: %d running, %d runs; want 0 and 1", running.Load(), runs.Load())
	}
	l.start("other", loop)
	l.stop()
	if runs.Load() != 1 {
		t.Errorf("a loop started after stop")
	}
}

// A loop that gives up early is logged, and stop still returns.
func TestLoopsLogALoopThatGivesUp(t *testing.T) {
	var logged atomic.Bool
	l := &loops{log: slog.New(handlerFunc(func(r slog.Record) { logged.Store(r.Level == slog.LevelError) }))}
	l.start("broken", func(context.Context) error { return errors.New("no store") })
	testwait.For(t, "the loop's error logged", logged.Load)
	l.stop()
}

type handlerFunc func(slog.Record)

func (h handlerFunc) Enabled(context.Context, slog.Level) bool      { return true }
func (h handlerFunc) Handle(_ context.Context, r slog.Record) error { h(r); return nil }
func (h handlerFunc) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h handlerFunc) WithGroup(string) slog.Handler                 { return h }
