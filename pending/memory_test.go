package pending

import (
	"testing"
	"time"
)

func TestMemoryStore(t *testing.T) {
	testStore(t, memoryStores)
}

func TestMemorySweepDropsRecordsAfterRetention(t *testing.T) {
	clock := newFakeClock()
	opts := clockOptions(clock)
	opts.Retention = time.Hour
	opts.AuditMaxLen = 3
	s := NewMemoryStore(opts)
	ask, _ := s.Create(t.Context(), sampleRequest(1), time.Minute)
	if _, err := s.Decide(t.Context(), ask.ID, Approved, "U1", ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := s.Sweep(t.Context(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), ask.ID); err != nil {
		t.Errorf("record dropped before deadline + retention: %v", err)
	}
	clock.Advance(time.Minute + time.Second)
	_, _ = s.Sweep(t.Context(), clock.Now())
	if _, err := s.Get(t.Context(), ask.ID); ErrorCode(err) != CodeNotFound {
		t.Errorf("record kept after deadline + retention: %v", err)
	}
	for i := range 3 {
		_, _ = s.Create(t.Context(), sampleRequest(i), time.Minute)
	}
	if events, _ := s.Audit(t.Context(), 0); len(events) != 3 || events[0].AskID == ask.ID {
		t.Errorf("audit with AuditMaxLen 3 holds %d events (oldest %+v)", len(events), events[0])
	}
}
