package grants

// SessionCount exposes how many sessions the memory store holds, to test
// that expired ones do not pile up.
func (m *MemoryStore) SessionCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}
