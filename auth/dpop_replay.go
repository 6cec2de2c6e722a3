package auth

import (
	"context"
	"sync"
	"time"
)

// MemoryReplayCache is the in-memory ReplayCache: at most max live entries, the oldest
// recorded going first when it is full, expired ones dropped as new ones arrive. It sees one
// process only; replicas share redisstore.ReplayCache instead. It is safe for concurrent use.
type MemoryReplayCache struct {
	mu      sync.Mutex
	max     int
	entries map[string]time.Time
	queue   []replayEntry // insertion order; queue[head] is the oldest
	head    int
	now     func() time.Time
}

type replayEntry struct {
	id    string
	until time.Time
}

// NewMemoryReplayCache returns a cache of at most max entries. It panics when max is not
// positive.
func NewMemoryReplayCache(max int) *MemoryReplayCache {
	if max <= 0 {
		panic("auth: NewMemoryReplayCache needs a positive max")
	}
	return &MemoryReplayCache{max: max, entries: make(map[string]time.Time), now: time.Now}
}

// Seen records id until until and reports whether it was recorded and live already.
func (c *MemoryReplayCache) Seen(_ context.Context, id string, until time.Time) (bool, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.entries[id]; ok && now.Before(u) {
		return true, nil
	}
	// Drop expired entries from the old end, then make room.
	for c.head < len(c.queue) && !now.Before(c.queue[c.head].until) {
		c.drop()
	}
	if len(c.queue)-c.head >= c.max {
		c.drop()
	}
	if c.head > 1024 && c.head > len(c.queue)/2 {
		n := copy(c.queue, c.queue[c.head:])
		clear(c.queue[n:])
		c.queue, c.head = c.queue[:n], 0
	}
	c.entries[id] = until
	c.queue = append(c.queue, replayEntry{id: id, until: until})
	return false, nil
}

// drop removes the oldest entry of the queue (and its map entry unless the id was recorded
// again since).
func (c *MemoryReplayCache) drop() {
	e := c.queue[c.head]
	if u, ok := c.entries[e.id]; ok && u.Equal(e.until) {
		delete(c.entries, e.id)
	}
	c.queue[c.head] = replayEntry{}
	c.head++
}

// Len returns the number of entries held.
func (c *MemoryReplayCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
