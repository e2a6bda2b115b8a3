package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/askops/askops/internal/testwait"
)

// serve keeps a soft memory limit that follows its live heap, unless the
// environment sets one of its own (GOMEMLIMIT) or turns the collector's
// target off; stopping lifts it.
func TestServeKeepsASoftMemoryLimitUnlessTheEnvironmentSetsOne(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	if limit() != math.MaxInt64 {
		t.Fatal("the test binary runs with a memory limit of its own (GOMEMLIMIT): run it without one")
	}
	for _, env := range []map[string]string{{"GOMEMLIMIT": "1GiB"}, {"GOGC": "off"}} {
		stop := tuneCollector(t.Context(), func(k string) string { return env[k] })
		if l := limit(); l != math.MaxInt64 {
			t.Errorf("with %v: limit %d set", env, l)
		}
		stop()
	}
	stop := tuneCollector(t.Context(), func(string) string { return "" })
	testwait.For(t, "a soft limit", func() bool { return limit() < math.MaxInt64 })
	if gc := debug.SetGCPercent(serveGCPercent); gc != serveGCPercent {
		t.Errorf("GOGC %d, want %d", gc, serveGCPercent)
	}
	stop()
	if l := limit(); l != math.MaxInt64 {
		t.Errorf("limit %d after stop, want none", l)
	}
}
