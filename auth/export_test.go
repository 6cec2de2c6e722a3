package auth

import "time"

// SetJWTClock replaces the verifier's clock (tests only).
func SetJWTClock(v *JWTVerifier, now func() time.Time) { v.now = now }

// SetIntrospectionClock replaces the verifier's clock (tests only).
func SetIntrospectionClock(v *IntrospectionVerifier, now func() time.Time) { v.now = now }

// IntrospectionCacheLen returns how many answers the verifier caches (tests only).
func IntrospectionCacheLen(v *IntrospectionVerifier) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.cache)
}
