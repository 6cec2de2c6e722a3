package redisstore

import (
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The releases of the claims this replica's requests are done with (see claims.go) are queued
// by session, after the response went out, and reach Redis off the request's path with the
// store's next pipeline (lookups.go): riding a lookup of the same session, which ends its
// session's queued claims in its own script, or in a releaseScript of their own among the
// pipeline's commands. The pipe is woken by each release and never waits for more to gather, so
// a plain request costs one round trip on its path and at most one after it, and under load
// fewer than one in all: its lookup shares a round trip with those of other requests and the
// releases of earlier ones. A release sent twice (its lookup failed after Redis ran it) is
// harmless: a claim ends only under the token it was taken with.

// maxQueuedReleases bounds the releases a replica keeps for a second attempt when Redis failed
// them; past it a failed batch is dropped (its claims are then freed as claims.go describes).
const maxQueuedReleases = 10000

// releaseRetryDelay is how long the pipe waits before it sends again the releases Redis
// failed (Redis down or failing over), when no new release wakes it sooner.
const releaseRetryDelay = time.Second

// maxRidingReleases bounds the releases one lookup carries (its script reads and drops their
// fields in one command each, and Lua bounds the arguments of one call); the others go in a
// releaseScript of the same pipeline.
const maxRidingReleases = 64

// releaseScript ends claims (ARGV: field, token, field, token, ...) unless another request
// holds them by now, and answers how many it ended.
var releaseScript = redis.NewScript(`
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return n
`)

// queueRelease queues the release of a claim and wakes the pipe; when the store is closed
// (its pipe is gone) it queues nothing and returns false, for the caller to send the release
// itself. The caller holds s.mu.
func (s *Sessions) queueRelease(id, field, token string) bool {
	if s.closed {
		return false
	}
	s.queued[id] = append(s.queued[id], field, token)
	s.nqueued++
	s.wakePipe()
	return true
}

// requeue puts back releases whose round trip failed, unless too many are queued already. When
// a lookup carried them (its reply may have been lost, with Redis well), it wakes the pipe, so
// that they do not wait for the next release of the replica; the failures of releases of their
// own are retried after releaseRetryDelay instead (see pipe).
func (s *Sessions) requeue(id string, pairs []any, wake bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.nqueued+len(pairs)/2 > maxQueuedReleases {
		s.r.log.Warn().Int("claims", len(pairs)/2).Msg("redisstore: dropping the releases of session claims Redis failed")
		return
	}
	s.queued[id] = append(s.queued[id], pairs...)
	s.nqueued += len(pairs) / 2
	if wake {
		s.wakePipe()
	}
}

// released handles the outcome of the releases of one session: those Redis failed are queued
// again (see requeue), and it reports whether they were.
func (s *Sessions) released(id string, pairs []any, err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	s.r.log.Warn().Err(err).Msg("redisstore: releasing session claims (tried again shortly)")
	s.requeue(id, pairs, false)
	return true
}
