// Package testclock is the tests' injected time: a clock that stands still
// until the test moves it, so deadlines, expiry and retention are tested
// without sleeping. Stores and servers take its Now (and After) as their
// clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is a time that moves only by Advance. It is safe for concurrent
// use: the code under test reads it from its own goroutines.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []timer
}

// timer is one After not yet fired.
type timer struct {
	at time.Time
	ch chan time.Time
}

// New returns a clock standing at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time; hand it to the code under test as its clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After is time.After on this clock: the channel receives the clock's
// time once Advance has moved it d or more past now (at once for d <= 0).
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, timer{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the clock forward by d and fires the timers it passes.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			kept = append(kept, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = kept
}
