package auth

import "time"

// SetJWTClock replaces the verifier's clock (tests only).
func SetJWTClock(v *JWTVerifier, now func() time.Time) { v.now = now }

// SetIntrospectionClock replaces the verifier's clock (tests only).
func SetIntrospectionClock(v *IntrospectionVerifier, now func() time.Time) { v.now = now }

// IntrospectionCacheLen returns how many answers the verifier caches (tests only).
func IntrospectionCacheLen(v *IntrospectionVerifier) int {
	return v.cache.len()
}

// JWTCacheLen returns how many verified tokens the verifier caches (tests only).
func JWTCacheLen(v *JWTVerifier) int { return v.cache.len() }

// AwaitKeyFetch waits for the verifier's key-set fetch in flight, if any (tests only).
func AwaitKeyFetch(v *JWTVerifier) {
	v.keys.mu.Lock()
	ch := v.keys.inflight
	v.keys.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// OnIntrospectionJoin makes the verifier call f whenever a check joins a call in flight (tests
// only).
func OnIntrospectionJoin(v *IntrospectionVerifier, f func()) { v.joined = f }

// NewNonceSealerForTest returns the nonce sealer DPoP uses (tests only).
func NewNonceSealerForTest(key []byte, lifetime time.Duration) *nonceSealer {
	return &nonceSealer{keys: newNonceKeys(key, nil), lifetime: lifetime}
}

// IssueNonce issues a nonce at now (tests only).
func IssueNonce(n *nonceSealer, now time.Time) string { return n.issue(now) }

// OpenNonce opens a nonce at now (tests only).
func OpenNonce(n *nonceSealer, nonce string, now time.Time) (fresh, ok bool) {
	return n.open(nonce, now)
}

// SetReplayClock replaces the cache's clock (tests only).
func SetReplayClock(c *MemoryReplayCache, now func() time.Time) { c.now = now }
