package sessions

import (
	"context"
	"time"

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

	// The gateway's agent sessions and chat-ops' event dedup (agents.go).
	PinRoot(ctx context.Context, session, root string, ttl time.Duration) (string, error)
	PinStart(ctx context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error)
	Thread(ctx context.Context, session string, ttl time.Duration) (channel, ts string, ok bool, err error)
	ClaimThread(ctx context.Context, session, channel, ts string, ttl time.Duration) (string, string, error)
	FirstEvent(ctx context.Context, id string) bool

	Close() error
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Store = (*RedisStore)(nil)
)
