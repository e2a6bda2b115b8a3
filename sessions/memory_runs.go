package sessions

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// memoryRuns is MemoryStore's record of runs in progress. Its one process
// ends every record it makes, so it needs no lease.
type memoryRuns struct {
	mu     sync.Mutex
	byUser map[string]map[string]Run // user -> run id -> run
}

// RecordRun records r as running until the returned end is called (end is
// idempotent). More than MaxRunsPerUser runs of one user are refused.
func (m *MemoryStore) RecordRun(ctx context.Context, r Run) (end func(), err error) {
	r, err = r.check("record run")
	if err != nil {
		return nil, err
	}
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	if m.runs.byUser == nil {
		m.runs.byUser = map[string]map[string]Run{}
	}
	mine := m.runs.byUser[r.StartedBy]
	if mine == nil {
		mine = map[string]Run{}
		m.runs.byUser[r.StartedBy] = mine
	}
	if _, again := mine[r.ID]; !again && len(mine) >= m.opts.MaxRunsPerUser {
		return nil, invalid("record run", "user %s already has %d runs recorded", r.StartedBy, len(mine))
	}
	mine[r.ID] = r
	var once sync.Once
	return func() {
		once.Do(func() {
			m.runs.mu.Lock()
			defer m.runs.mu.Unlock()
			cur := m.runs.byUser[r.StartedBy] // mine may have been dropped and made again
			delete(cur, r.ID)
			if len(cur) == 0 {
				delete(m.runs.byUser, r.StartedBy)
			}
		})
	}, nil
}

// RunsOf lists each user's runs in progress, newest first. Users with
// none are absent from the map.
func (m *MemoryStore) RunsOf(ctx context.Context, users []string) (map[string][]Run, error) {
	for _, u := range users {
		if err := checkID("runs of", "user", u); err != nil {
			return nil, err
		}
	}
	m.runs.mu.Lock()
	defer m.runs.mu.Unlock()
	out := map[string][]Run{}
	for _, u := range users {
		for _, r := range m.runs.byUser[u] {
			out[u] = append(out[u], r)
		}
		sortRuns(out[u])
	}
	return out, nil
}

// sortRuns orders runs newest first (then by id, so equal times list alike
// in both stores).
func sortRuns(rs []Run) {
	slices.SortFunc(rs, func(a, b Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
