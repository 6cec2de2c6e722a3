package testutil

import (
	"sync"
	"time"
)

// Clock is a manual clock for the kit's injectable time sources (for example
// session.MemoryOptions.Now): tests move it with Advance instead of sleeping. It is safe for
// concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock set to a fixed instant.
func NewClock() *Clock { return NewClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

// NewClockAt returns a clock set to t (for example time.Now(), when the test also works with
// real timestamps such as those inside signed tokens).
func NewClockAt(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
