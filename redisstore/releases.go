package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The releases of the claims this replica's requests are done with (see claims.go) are queued
// by session, after the response went out, and reach Redis off the request's path by whichever
// comes first: the next lookup of the same session on this replica, which ends its session's
// queued claims in its own script (no round trip of their own), or the store's one flusher
// goroutine, which sends everything queued, one script per session pipelined in one round trip,
// as soon as it is woken (it never waits for more to gather: what queues up while a round trip
// is under way goes in the next). So a plain request costs one round trip on its path and at
// most one after it, and under load fewer. A release sent twice (its lookup failed after Redis
// ran it) is harmless: a claim ends only under the token it was taken with.

// maxQueuedReleases bounds the releases a replica keeps for a second attempt when Redis failed
// them; past it a failed batch is dropped (its claims are then freed as claims.go describes).
const maxQueuedReleases = 10000

// releaseRetryDelay is how long the flusher waits before it sends again the releases Redis
// failed (Redis down or failing over), when no new release wakes it sooner.
const releaseRetryDelay = time.Second

// maxRidingReleases bounds the releases one lookup carries (its script reads and drops their
// fields in one command each, and Lua bounds the arguments of one call); the others stay queued
// for the flusher.
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

// queueRelease queues the release of a claim and wakes the flusher; when the store is closed
// (its flusher is gone) it queues nothing and returns false, for the caller to send the release
// itself. The caller holds s.mu.
func (s *Sessions) queueRelease(id, field, token string) bool {
	if s.closed {
		return false
	}
	s.queued[id] = append(s.queued[id], field, token)
	s.nqueued++
	select {
	case s.wake <- struct{}{}:
	default: // the flusher is awake already, and takes this one too
	}
	return true
}

// takeReleases removes and returns the releases queued for a session (at most
// maxRidingReleases), for its lookup to send.
func (s *Sessions) takeReleases(id string) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queued[id]
	if len(q) == 0 {
		return nil
	}
	if len(q) > 2*maxRidingReleases {
		s.queued[id] = append([]any(nil), q[2*maxRidingReleases:]...) // for the flusher, woken when they queued
		q = q[:2*maxRidingReleases]
	} else {
		delete(s.queued, id)
	}
	s.nqueued -= len(q) / 2
	return q
}

// requeue puts back releases whose round trip failed, unless too many are queued already. When
// a lookup carried them (its request may have been cancelled, with Redis well), it wakes the
// flusher, so that they do not wait for the next release of the replica; the flusher's own
// failures are retried after releaseRetryDelay instead (see flushReleases).
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
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// flushReleases is the flusher: woken by each queued release, it sends everything queued; when
// Redis failed some, it sends them again after releaseRetryDelay unless woken sooner. At Close
// it sends what is left and returns.
func (s *Sessions) flushReleases() {
	defer close(s.flushed)
	retry := time.NewTimer(releaseRetryDelay)
	retry.Stop()
	defer retry.Stop()
	for {
		select {
		case <-s.stop:
			s.sendQueued()
			return
		case <-s.wake:
		case <-retry.C:
		}
		if s.sendQueued() {
			retry.Reset(releaseRetryDelay)
		}
	}
}

// sendQueued sends every queued release: one script per session, pipelined. It reports whether
// Redis failed some (queued again).
func (s *Sessions) sendQueued() (failed bool) {
	s.mu.Lock()
	batch := s.queued
	if len(batch) == 0 {
		s.mu.Unlock()
		return false
	}
	s.queued = s.spare
	if s.queued == nil {
		s.queued = map[string][]any{}
	}
	s.spare = nil
	s.nqueued = 0
	s.mu.Unlock()
	failed = s.sendReleases(batch)
	clear(batch)
	s.mu.Lock()
	s.spare = batch
	s.mu.Unlock()
	return failed
}

// sendReleases runs releaseScript for each session of batch in one round trip; those Redis
// failed are queued again (see requeue), and it reports whether there were any.
func (s *Sessions) sendReleases(batch map[string][]any) (failed bool) {
	ctx, cancel := s.r.Bound(context.Background())
	defer cancel()
	if len(batch) == 1 { // one script: Run, which loads it when Redis lacks it, suffices
		for id, pairs := range batch {
			failed = s.released(id, pairs, releaseScript.Run(ctx, s.r.rdb, []string{s.key(id)}, pairs...).Err())
		}
		return failed
	}
	ids := make([]string, 0, len(batch))
	cmds := make([]*redis.Cmd, 0, len(batch))
	_, _ = s.r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for id, pairs := range batch {
			ids = append(ids, id)
			cmds = append(cmds, releaseScript.EvalSha(ctx, p, []string{s.key(id)}, pairs...))
		}
		return nil
	})
	for i, c := range cmds {
		err := c.Err()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Not in this server's script cache (flushed, or a promoted replica): Run loads it.
			err = releaseScript.Run(ctx, s.r.rdb, []string{s.key(ids[i])}, batch[ids[i]]...).Err()
		}
		if s.released(ids[i], batch[ids[i]], err) {
			failed = true
		}
	}
	return failed
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
