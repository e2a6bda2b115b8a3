package memlimit

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/askops/askops/internal/testwait"
)

func TestForGivesTheCollectorsRoomAndNeverLessThanTheFloor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name string
		s    Sample
		want int64
	}{
		{"idle serve", Sample{Live: 4 * mib, NonHeap: 8 * mib, GCPercent: 50}, Floor},
		{"10,000 held hooks", Sample{Live: 70 * mib, NonHeap: 10 * mib, GCPercent: 50}, (70*6/5 + 10 + 8) * mib},
		{"twice as many get twice the heap's room", Sample{Live: 140 * mib, NonHeap: 10 * mib, GCPercent: 50}, (140*6/5 + 10 + 8) * mib},
		{"GOGC=100", Sample{Live: 100 * mib, NonHeap: 10 * mib, GCPercent: 100}, (100*7/5 + 10 + 8) * mib},
		{"no target: the heap alone", Sample{Live: 100 * mib, GCPercent: -1}, (100 + 8) * mib},
		{"no overflow", Sample{Live: math.MaxUint64, GCPercent: 50}, math.MaxInt64},
	} {
		if got := For(c.s); got != c.want {
			t.Errorf("%s: For(%+v) = %d MiB, want %d MiB", c.name, c.s, got/mib, c.want/mib)
		}
	}
}

func TestReadSeesTheLiveHeap(t *testing.T) {
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	runtime.GC()
	s := Read()
	if s.Live < uint64(len(held)) || s.NonHeap == 0 || s.GCPercent != debug.SetGCPercent(-1) {
		t.Fatalf("read %+v with %d bytes live", s, len(held))
	}
	debug.SetGCPercent(s.GCPercent)
	runtime.KeepAlive(held)
}

// The limit follows what is live: a serve that holds more gets more room
// (a fixed limit would collect without end), and once Follow ends the
// limit is lifted.
func TestFollowRaisesTheLimitWithTheLiveHeapAndLiftsItAtTheEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); Follow(ctx) }()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	testwait.For(t, "a limit", func() bool { return limit() < math.MaxInt64 })
	if l := limit(); l < Floor {
		t.Fatalf("limit %d, below the floor", l)
	}
	held := make([]byte, 256<<20)
	for i := range held {
		held[i] = 1
	}
	testwait.For(t, "the limit to make room for 256 MiB live", func() bool {
		runtime.GC()
		return limit() >= int64(len(held))*5/4
	})
	runtime.KeepAlive(held)
	cancel()
	<-done
	if l := limit(); l != math.MaxInt64 {
		t.Fatalf("limit %d after Follow ended", l)
	}
}
