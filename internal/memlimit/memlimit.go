// Package memlimit keeps a serve's soft memory limit (Go's GOMEMLIMIT)
// just above what the serve holds, so the memory a burst of Asks used goes
// back to the system as soon as the burst is over rather than over the
// next minute.
//
// Why: the garbage collector's target (GOGC) bounds the heap relative to
// what is live, but memory freed after a burst (the intake's parse and
// print garbage, the stacks of connections not yet held, Slack's renders)
// stays resident until Go's background scavenger returns it, about a
// minute later. With a soft limit the runtime returns it at once, and
// collects early when a burst's garbage would push it past the limit. A
// fixed limit would choke a serve that holds more than it was sized for
// (it collects without end near the limit); this one follows the live
// heap: a serve holding twice as much gets twice the room.
package memlimit

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Headroom is the room for what a burst allocates between two updates of
// the limit. (16 MiB held 10,000 waiting runs with the in-memory store at
// 163 MB; 8 MiB with the room below, 148 MB.)
const Headroom = 8 << 20

// Floor is the least limit: an idle serve is not made to collect its
// few live megabytes over and over.
const Floor = 64 << 20

// Every is how often the limit follows the live heap. A burst of 1,000
// hooks a second adds about 3 MB of live heap in that time, well within
// Headroom.
const Every = 500 * time.Millisecond

// Sample is what the limit is computed from, in bytes.
type Sample struct {
	// Live is the heap the last collection found live.
	Live uint64
	// NonHeap is the runtime's memory outside the heap's objects:
	// goroutine stacks, the collector's metadata, buffers of its own.
	NonHeap uint64
	// GCPercent is the collector's target (GOGC).
	GCPercent int
}

// For is the soft limit for s: the live heap with two fifths of the room
// the collector's target gives it (at GOGC=50, 1.2 times the live heap,
// where the target lets it reach 1.5 times), the memory outside the heap,
// and Headroom; never below Floor. Less room makes the collector run
// sooner only while a burst's garbage piles up; between bursts the heap
// stays well within it. The price is CPU during a burst: measured with
// 10,000 Asks (bench/waiting), the whole room took 10,000 hooks held with
// Slack to 159-163 MB just after the burst; half the room and 16 MiB of
// Headroom, 131 MB; two fifths and 8 MiB, 114 MB, for about a fifth more
// CPU while the burst lasted (17.5 -> 21.3 s for the burst of hooks, 30.5
// -> 39.6 s for 10,000 runs) and none once it was over.
func For(s Sample) int64 {
	heapGoal := float64(s.Live) * (1 + float64(max(s.GCPercent, 0))/250)
	limit := heapGoal + float64(s.NonHeap) + Headroom
	if limit > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return max(int64(limit), Floor)
}

var sampled = []string{
	"/gc/heap/live:bytes",
	"/gc/gogc:percent",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// Read samples the runtime.
func Read() Sample {
	ms := make([]metrics.Sample, len(sampled))
	for i, name := range sampled {
		ms[i].Name = name
	}
	metrics.Read(ms)
	u := func(i int) uint64 {
		if ms[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return ms[i].Value.Uint64()
	}
	heap := u(3) + u(4) + u(5) + u(6)
	s := Sample{Live: u(0), GCPercent: int(u(1))}
	if total := u(2); total > heap {
		s.NonHeap = total - heap
	}
	return s
}

// Follow sets the soft limit For the runtime's sample every Every until
// ctx ends, and then lifts it. Call it only where the environment sets
// no GOMEMLIMIT (an operator's fixed limit stands) and the collector runs
// at a target (with GOGC=off the limit is the only trigger, and following
// the live heap would never collect).
func Follow(ctx context.Context) {
	defer debug.SetMemoryLimit(math.MaxInt64)
	t := time.NewTicker(Every)
	defer t.Stop()
	for {
		debug.SetMemoryLimit(For(Read()))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
