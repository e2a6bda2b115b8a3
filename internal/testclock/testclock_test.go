package testclock

import (
	"testing"
	"time"
)

// A timer fires when Advance reaches its time, not before, and only once.
func TestAfterFiresWhenAdvancedPast(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	now := c.After(0)
	later := c.After(time.Minute)
	if got := <-now; !got.Equal(start) {
		t.Errorf("After(0) gave %v, want the clock's time %v", got, start)
	}
	c.Advance(59 * time.Second)
	select {
	case <-later:
		t.Fatal("fired a second early")
	default:
	}
	c.Advance(time.Second)
	select {
	case got := <-later:
		if want := start.Add(time.Minute); !got.Equal(want) || !c.Now().Equal(want) {
			t.Errorf("fired with %v (clock %v), want %v", got, c.Now(), want)
		}
	default:
		t.Fatal("did not fire when the clock reached it")
	}
	c.Advance(time.Hour)
	select {
	case <-later:
		t.Fatal("fired twice")
	default:
	}
}
