package redisstore

import "time"

// SetClock replaces the clock a store times its renewals by, for tests (before any request).
func SetClock(s *Sessions, now func() time.Time) { s.now = now }

// Released waits until a claim's field is gone from a record (see released).
var Released = released
