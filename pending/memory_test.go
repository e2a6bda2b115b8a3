package pending

import "testing"

func TestMemoryStore(t *testing.T) {
	testStore(t, func(t *testing.T, opts Options) (Store, Store) {
		s := NewMemoryStore(opts)
		t.Cleanup(func() { _ = s.Close() })
		return s, s
	})
}
