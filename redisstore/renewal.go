package redisstore

import "time"

// A session's record is renewed in steps, not by every request: a lookup that renews sets the
// record's TTL to the idle timeout plus an eighth of it (renewMillis), and a replica renews a
// session it holds only when its own last renewal of it is older than a sixteenth of the idle
// timeout (renewDue). Whichever replica renewed last, a session in use never has less than the
// idle timeout (plus a sixteenth, for the time a lookup spends on its way) left after a request,
// and an idle one ends between IdleTimeout and IdleTimeout + IdleTimeout/8 after its last use.
// Off a Cluster the session index moves with the record, in the same script and to the same
// instant, so MaxSessions counts exactly the records that have not expired; most lookups write
// neither (no PEXPIRE, no TIME, no ZADD: Redis's CPU per request is what the session workload's
// throughput is bound by when Redis shares a core).

// renewSlack is the fraction of the idle timeout (1/renewSlack) a renewal adds to it.
const renewSlack = 8

// renewMillis is the TTL a renewal gives a record, in milliseconds (0 when sessions never
// expire).
func (s *Sessions) renewMillis() int64 {
	if s.idle < 0 {
		return 0
	}
	return (s.idle + s.idle/renewSlack).Milliseconds()
}

// renewDue reports whether a lookup at now renews the session, given when this replica last
// renewed it (zero: never, or it does not hold the session).
func (s *Sessions) renewDue(last, now time.Time) bool {
	return s.idle > 0 && (last.IsZero() || now.Sub(last) >= s.idle/(2*renewSlack))
}

// renewed records that a lookup sent at "at" renewed the session, if this replica holds it.
func (s *Sessions) renewed(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.local[id]; h != nil && at.After(h.renewed) {
		h.renewed = at
	}
}
