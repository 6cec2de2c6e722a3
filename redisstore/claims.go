package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/session"
)

// A request's session.Claim lives in the session's record, a field per claim: "q:<request id>"
// for a request id in flight, "g" for the standalone GET stream, holding the token of the request
// that took it ("<replica> <sequence>"). getScript takes it in the lookup that renews the session
// (no round trip of its own); the session layer releases it after the response, and the release
// reaches Redis off the request's path (releases.go). A claim whose holder is done (on this
// replica: a token it no longer holds) or whose replica's lease lapsed (Router.Alive) is free: the
// next request that wants it takes it over in one more lookup. Claims end with the record.

var _ session.ClaimReleaser = (*Sessions)(nil)

// claimField is the field of the record a claim is held under.
func claimField(c *session.Claim) string {
	if c.Stream {
		return "g"
	}
	return "q:" + transport.Core.IDKey(c.Request).String()
}

// newToken is the token of a new claim of this replica.
func (s *Sessions) newToken() string {
	return s.r.id + " " + strconv.FormatUint(s.seq.Add(1), 36)
}

// claiming records the token of a claim a lookup is about to take: from then on (its script may
// take it as soon as it is sent, and the lookups of other requests may come back first) the
// claim is live on this replica, until the request releases it or its lookup ends without it
// (unclaimed).
func (s *Sessions) claiming(token string) {
	s.mu.Lock()
	s.claims[token] = struct{}{}
	s.mu.Unlock()
}

// unclaimed forgets the token of a claim its lookup did not take (refused, failed, or its caller
// gone: a claim its script took all the same is released, see lookupFailed and lookups.go).
func (s *Sessions) unclaimed(token string) {
	s.mu.Lock()
	delete(s.claims, token)
	s.mu.Unlock()
}

// claimFree reports whether the claim held under token may be taken over: its request on this
// replica is done (its lookup is not under way and it released it), or the replica that holds
// it is gone (its lease lapsed).
func (s *Sessions) claimFree(ctx context.Context, token string) (bool, error) {
	replica, _, _ := strings.Cut(token, " ")
	if replica == s.r.id {
		s.mu.Lock()
		_, live := s.claims[token]
		s.mu.Unlock()
		return !live, nil
	}
	alive, err := s.r.Alive(ctx, replica)
	return !alive, err
}

// ReleaseClaim implements session.ClaimReleaser: the release is queued, and reaches Redis with
// the store's next round trip (riding a lookup of the session when one goes in it, see
// releases.go); after Close it is sent at once, bounded by the timeout. A release
// Redis fails is sent again with the next ones; a claim whose release is lost (Close, or too many
// failed) is taken over by the next request that wants it (see claimFree), on this replica at
// once, on another once this replica's lease lapsed.
func (s *Sessions) ReleaseClaim(ctx context.Context, id, field, token string) {
	s.mu.Lock()
	delete(s.claims, token)
	queued := s.queueRelease(id, field, token)
	s.mu.Unlock()
	if queued {
		return
	}
	ctx, cancel := s.r.Bound(ctx)
	defer cancel()
	if err := releaseScript.Run(ctx, s.r.rdb, []string{s.key(id)}, field, token).Err(); err != nil {
		s.r.log.Warn().Err(err).Msg("redisstore: releasing a request's session claim")
	}
}

// getScript looks a session up in as few Redis commands as it can (one HMGET, then an HSET for
// a claim and an HDEL for releases; a renewal adds a PEXPIRE, or off a Cluster TIME, PEXPIREAT
// and the ZADD of the index, at the same instant so that the cap counts the record until exactly
// when it expires). ARGV: the id, the renewal's TTL in ms (0: this lookup renews nothing, see
// renewal.go), the caller's revision, the claim's field ("" for none: a request id in flight or
// the standalone stream, taken under the token ARGV[5]; a claim held under another token than
// ARGV[6] is a conflict), then the releases this replica queued for the session since its last
// round trip for it (field, token, ... as releaseScript takes them; a field is dropped only
// while it still holds that token, before the claim is taken). It answers nil when the session
// is gone; {'!', token} when another request holds the claim; {rev} when the caller's revision is
// current; {rev, origin, owner, state} otherwise.
var getScript = redis.NewScript(`
local claim = ARGV[4]
local fields = {'rev'}
if claim ~= '' then fields[2] = claim end
local first = #fields
for i = 7, #ARGV, 2 do fields[#fields + 1] = ARGV[i] end
local f = redis.call('HMGET', KEYS[1], unpack(fields))
local rev = f[1]
if not rev then
  if KEYS[2] then redis.call('ZREM', KEYS[2], ARGV[1]) end
  return false
end
local cur = claim ~= '' and f[2]
local gone = {}
local j = first
for i = 7, #ARGV, 2 do
  j = j + 1
  if f[j] == ARGV[i + 1] then
    gone[#gone + 1] = ARGV[i]
    if ARGV[i] == claim then cur = false end
  end
end
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  if KEYS[2] then
    local t = redis.call('TIME')
    local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
    redis.call('PEXPIREAT', KEYS[1], at)
    redis.call('ZADD', KEYS[2], at, ARGV[1])
  else
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
end
if claim ~= '' then
  if cur and cur ~= ARGV[6] then return {'!', cur} end
  redis.call('HSET', KEYS[1], claim, ARGV[5])
end
if rev == ARGV[3] then return {rev} end
local r = redis.call('HMGET', KEYS[1], 'o', 'ow', 'st')
return {rev, r[1] or '', r[2] or '', r[3] or ''}
`)

// lookup runs getScript (through the store's pipe, lookups.go, which adds the releases queued for
// the session); a session that is gone is let go of here too. With touch it takes the request's
// claim (see claims.go) and renews the record when a renewal is due (renewed: when this replica
// last renewed it, see renewal.go). A failed lookup queued again what it carried (lookupFailed).
func (s *Sessions) lookup(ctx context.Context, id string, touch bool, rev int64, renewed time.Time) ([]any, error) {
	bctx, cancel := s.r.Bound(ctx)
	defer cancel()
	var ttl int64
	var at time.Time
	var c *session.Claim
	var field, token string
	if touch {
		if at = s.now(); s.renewDue(renewed, at) {
			ttl = s.renewMillis()
		}
		if c = session.ClaimFrom(ctx); c.Wants() && !c.Held() {
			field, token = claimField(c), s.newToken()
		}
	}
	if field != "" {
		s.claiming(token)
	}
	res, err := s.lookupLoop(bctx, id, field, token, ttl, rev, at)
	if field != "" {
		if err != nil {
			s.unclaimed(token)
		} else {
			c.Hold(s, id, field, token)
		}
	}
	return res, err
}

// lookupLoop runs getScript until it answers, taking over the claim (field, token) when the
// request that holds it is done or its replica gone.
func (s *Sessions) lookupLoop(ctx context.Context, id, field, token string, ttl, rev int64, at time.Time) ([]any, error) {
	var args [6]any
	var replace string
	args[0], args[1], args[2], args[3], args[4] = id, ttl, rev, field, token
	for {
		args[5] = replace
		res, err := s.runLookup(ctx, id, &args, field, token)
		if errors.Is(err, redis.Nil) {
			s.letGo(id)
			return nil, session.ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("redisstore: looking a session up: %w", err)
		}
		if ttl > 0 {
			s.renewed(id, at)
			ttl, args[1] = 0, int64(0) // renewed by this run, whatever its claim's fate
		}
		if len(res) == 2 && res[0] == "!" {
			holder, _ := res[1].(string)
			if holder == replace {
				return nil, errors.New("redisstore: a session claim changed under its lookup")
			}
			if holder == token {
				// An earlier run of this lookup took it (go-redis sent the script again when
				// the first reply was lost): it is this request's already.
				replace = token
				continue
			}
			free, err := s.claimFree(ctx, holder)
			if err != nil {
				return nil, err
			}
			if !free {
				return nil, session.ErrClaimed
			}
			replace = holder // its holder is done or gone: take it over
			continue
		}
		return res, nil
	}
}

// lookupFailed queues again what a failed lookup of a session carried: Redis may have run its
// script all the same (the reply was lost, or the context ended after it went out), so the
// releases it carried and the claim (field, token) it may have taken are sent again (a release
// ends a claim only under its own token).
func (s *Sessions) lookupFailed(id string, released []any, field, token string) {
	if field != "" {
		released = append(released, field, token)
	}
	if released != nil {
		s.requeue(id, released, true)
	}
}
