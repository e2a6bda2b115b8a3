package sessions

import (
	"context"

	"github.com/askops/askops/policy"
)

// Store is the contract both stores obey, like pending.Store and
// grants.Store: what the wiring holds whichever one the config chose.
type Store interface {
	Track(ctx context.Context, channel, session string) error
	Sessions(ctx context.Context, channel string) ([]string, error)
	SetMode(ctx context.Context, channel string, mode policy.Mode, by string) error
	Mode(ctx context.Context, channel string) (ModeSetting, bool, error)
	HandleStops(ctx context.Context, fn Stopper) (release func(), err error)
	Stop(ctx context.Context, runID, by string) (StopResult, error)
	RecordRun(ctx context.Context, r Run) (end func(), err error)
	RunsOf(ctx context.Context, users []string) (map[string][]Run, error)
	Close() error
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Store = (*RedisStore)(nil)
)
