package sessions

import "sync"

// stoppers are this process's Stoppers (one per runner, in practice one).
type stoppers struct {
	mu   sync.Mutex
	next int
	m    map[int]Stopper
}

func (s *stoppers) add(fn Stopper) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[int]Stopper{}
	}
	id := s.next
	s.next++
	s.m[id] = fn
	return func() {
		s.mu.Lock()
		delete(s.m, id)
		s.mu.Unlock()
	}
}

// stop asks each local Stopper; it reports whether one had the run.
func (s *stoppers) stop(runID, by string) bool {
	s.mu.Lock()
	fns := make([]Stopper, 0, len(s.m))
	for _, fn := range s.m {
		fns = append(fns, fn)
	}
	s.mu.Unlock()
	for _, fn := range fns {
		if fn(runID, by) {
			return true
		}
	}
	return false
}
