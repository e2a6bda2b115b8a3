// Package testclock is the tests' injected time: a clock that stands still
// until the test moves it, so deadlines, expiry and retention are tested
// without sleeping. Stores and servers take its Now as their clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is a time that moves only by Advance. It is safe for concurrent
// use: the code under test reads it from its own goroutines.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock standing at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time; hand it to the code under test as its clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
