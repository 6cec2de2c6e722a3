package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// tokenCache remembers verified tokens by the SHA-256 digest of the token (never the token
// itself) until a deadline, holding at most max entries: when full, expired entries go first,
// then arbitrary ones. A nil *tokenCache caches nothing. Cached TokenInfo values are shared by
// the requests that present the same token: nobody may modify them.
type tokenCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	info  *TokenInfo
	err   error // the verdict on a refused token (info is nil)
	until time.Time
}

// newTokenCache returns a cache for the ttl and entry options of a verifier: ttl zero means def,
// negative turns caching off (nil); max zero means defMax, negative panics.
func newTokenCache(ttl, def time.Duration, max, defMax int, maxOption string) *tokenCache {
	if max < 0 {
		panic("auth: " + maxOption + " must not be negative")
	}
	if ttl < 0 {
		return nil
	}
	if ttl == 0 {
		ttl = def
	}
	if max == 0 {
		max = defMax
	}
	return &tokenCache{ttl: ttl, max: max, entries: map[[sha256.Size]byte]cachedToken{}}
}

// get returns the live entry for key.
func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) (*TokenInfo, bool) {
	e, ok := c.lookup(key, now)
	return e.info, ok
}

// refusal returns the live verdict cached for key by putRefusal.
func (c *tokenCache) refusal(key [sha256.Size]byte, now time.Time) (error, bool) {
	e, ok := c.lookup(key, now)
	return e.err, ok
}

func (c *tokenCache) lookup(key [sha256.Size]byte, now time.Time) (cachedToken, bool) {
	if c == nil {
		return cachedToken{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok && !now.Before(e.until) {
		delete(c.entries, key)
		return cachedToken{}, false
	}
	return e, ok
}

// put caches info until now+ttl, or until the token expires if that is sooner.
func (c *tokenCache) put(key [sha256.Size]byte, info *TokenInfo, now time.Time) {
	if c == nil {
		return
	}
	until := now.Add(c.ttl)
	if !info.Expiration.IsZero() && info.Expiration.Before(until) {
		until = info.Expiration
	}
	c.store(key, cachedToken{info: info, until: until}, now)
}

// putRefusal caches the verdict err on a refused token until now+ttl.
func (c *tokenCache) putRefusal(key [sha256.Size]byte, err error, now time.Time) {
	if c == nil {
		return
	}
	c.store(key, cachedToken{err: err, until: now.Add(c.ttl)}, now)
}

// store adds e, making room first when the cache is full.
func (c *tokenCache) store(key [sha256.Size]byte, e cachedToken, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for k, old := range c.entries {
			if !now.Before(old.until) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = e
}

// len returns the number of entries (tests).
func (c *tokenCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
