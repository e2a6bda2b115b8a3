package sessions

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/policy"
)

// MemoryStore is the embedded store for one process: with no Redis, the
// only runs /askops stop can reach are this process's own.
type MemoryStore struct {
	opts  Options
	local stoppers
	runs  memoryRuns

	homes memoryHomes // App Home viewers (homeviewers.go)

	// The agent sessions' state and the events seen (agents.go).
	roots   firstPins[string]
	starts  firstPins[time.Time]
	threads firstPins[thread]
	events  seenEvents

	mu       sync.Mutex
	sessions map[string]map[string]time.Time // channel -> session -> last run started
	modes    map[string]memoryMode           // channel -> mode
}

type memoryMode struct {
	ModeSetting
	expires time.Time
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore(opts Options) *MemoryStore {
	return &MemoryStore{opts: opts.withDefaults(), sessions: map[string]map[string]time.Time{}, modes: map[string]memoryMode{}}
}

// Track records that a run started session in channel now. It keeps the
// channel's sessions and its mode alive for another TTL.
func (m *MemoryStore) Track(ctx context.Context, channel, session string) error {
	if err := checkTrack(channel, session); err != nil {
		return err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[channel]
	if s == nil {
		s = map[string]time.Time{}
		m.sessions[channel] = s
	}
	for id, at := range s {
		if !now.Before(at.Add(m.opts.TTL)) {
			delete(s, id)
		}
	}
	s[session] = now
	for len(s) > m.opts.MaxSessions {
		oldest, at := "", time.Time{}
		for id, t := range s {
			if oldest == "" || t.Before(at) || (t.Equal(at) && id < oldest) {
				oldest, at = id, t
			}
		}
		delete(s, oldest)
	}
	if md, ok := m.modes[channel]; ok && now.Before(md.expires) {
		md.expires = now.Add(m.opts.TTL)
		m.modes[channel] = md
	}
	return nil
}

// Sessions lists the channel's sessions started within the TTL, newest first.
func (m *MemoryStore) Sessions(ctx context.Context, channel string) ([]string, error) {
	if err := checkID("list", "channel", channel); err != nil {
		return nil, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[channel]
	out := make([]string, 0, len(s))
	for id, at := range s {
		if now.Before(at.Add(m.opts.TTL)) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := s[b].Compare(s[a]); c != 0 {
			return c
		}
		return strings.Compare(b, a) // as Redis orders equal scores
	})
	return out, nil
}

// SetMode sets the mode of the channel's sessions (ask or never) for the TTL.
func (m *MemoryStore) SetMode(ctx context.Context, channel string, mode policy.Mode, by string) error {
	if err := checkSetMode(channel, mode); err != nil {
		return err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.modes[channel] = memoryMode{ModeSetting: ModeSetting{Mode: mode, By: by, At: msUTC(now)}, expires: now.Add(m.opts.TTL)}
	return nil
}

// Mode returns the channel's mode; ok is false when none is set (or it
// lapsed with the TTL).
func (m *MemoryStore) Mode(ctx context.Context, channel string) (ModeSetting, bool, error) {
	if err := checkID("mode", "channel", channel); err != nil {
		return ModeSetting{}, false, err
	}
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	md, ok := m.modes[channel]
	if !ok || !now.Before(md.expires) {
		return ModeSetting{}, false, nil
	}
	return md.ModeSetting, true, nil
}

// HandleStops makes fn this process's answer to stop requests until the
// returned func is called.
func (m *MemoryStore) HandleStops(ctx context.Context, fn Stopper) (func(), error) {
	return m.local.add(fn), nil
}

// Stop stops runID if a Stopper of this process has it.
func (m *MemoryStore) Stop(ctx context.Context, runID, by string) (StopResult, error) {
	if err := checkID("stop", "run id", runID); err != nil {
		return StopResult{}, err
	}
	if m.local.stop(runID, by) {
		return StopResult{Stopped: true, Local: true, By: by, At: msUTC(m.opts.Now())}, nil
	}
	return StopResult{}, nil
}

// Close does nothing; the store lives with the process.
func (m *MemoryStore) Close() error { return nil }
