package pending

// OnEnder is a store that wakes a waiter holding no goroutine (OnEnd):
// RedisStore and MemoryStore are. The round trip's parked wait
// (approval.Core.Launch) and the gateway's held long polls use it.
type OnEnder interface {
	OnEnd(id string, wake func()) (stop func())
}

// OnEnd is how a waiter that holds no goroutine learns that its Ask may
// have ended: wake is called once the store has reason to think so (the
// Ask's end was announced or read, a read of it failed, it is not found,
// or the store closed), and then the waiter reads the outcome the ordinary
// way (Wait, which returns at once for an Ask that has ended). It is never
// called for a read that found the Ask still pending, and at most once.
// The deadline is the waiter's to watch (a timer): nothing here records an
// expiry. stop unregisters; wake may still run once if it raced stop.
//
// wake runs on the store's goroutines (its reader, its listener, a
// decider's) and must not block or call the store: it should hand off.
//
// 10,000 Asks waited on this way cost 10,000 map entries and no goroutine
// (see waiters): the round trip of an API Ask (approval.Core.Launch) parks
// here between showing the Ask and its decision.
func (s *RedisStore) OnEnd(id string, wake func()) (stop func()) {
	if checkID("wait", id) != nil {
		wake()
		return func() {}
	}
	select {
	case <-s.closed:
		wake()
		return func() {}
	default:
	}
	w := s.waiters.addWake(id, wake)
	return func() { s.waiters.remove(w) }
}

// OnEnd implements RedisStore.OnEnd's contract for the in-memory store.
func (s *MemoryStore) OnEnd(id string, wake func()) (stop func()) {
	s.mu.Lock()
	m, ok := s.asks[id]
	select {
	case <-s.closed:
		ok = false
	default:
	}
	if !ok || m.ask.Status != StatusPending {
		s.mu.Unlock()
		wake()
		return func() {}
	}
	if s.wakes == nil {
		s.wakes = make(map[*memoryAsk]map[*func()]struct{})
	}
	f := &wake
	if s.wakes[m] == nil {
		s.wakes[m] = make(map[*func()]struct{})
	}
	s.wakes[m][f] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if ws := s.wakes[m]; ws != nil {
			delete(ws, f)
			if len(ws) == 0 {
				delete(s.wakes, m)
			}
		}
	}
}

// wakeEnded calls the OnEnd wakes of m, which has just ended. The caller
// holds s.mu.
func (s *MemoryStore) wakeEnded(m *memoryAsk) {
	for f := range s.wakes[m] {
		(*f)()
	}
	delete(s.wakes, m)
}

// wakeAll calls every OnEnd wake: the store is closing.
func (s *MemoryStore) wakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for m := range s.wakes {
		s.wakeEnded(m)
	}
}
