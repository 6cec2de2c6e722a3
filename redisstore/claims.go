package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// holdClaim records a claim getScript took.
func (s *Sessions) holdClaim(c *session.Claim, id, field, token string) {
	s.mu.Lock()
	s.claims[token] = struct{}{}
	s.mu.Unlock()
	c.Hold(s, id, field, token)
}

// claimFree reports whether the claim held under token may be taken over: its request on this
// replica is done, or the replica that holds it is gone (its lease lapsed).
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
// the next lookup of the session on this replica or the flusher's next round trip, whichever
// comes first (releases.go); after Close it is sent at once, bounded by the timeout. A release
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

// lookup runs getScript; a session that is gone is let go of here too. With touch it takes the
// request's claim (see claims.go).
func (s *Sessions) lookup(ctx context.Context, id string, touch bool, rev int64) ([]any, error) {
	bctx, cancel := s.r.Bound(ctx)
	defer cancel()
	t := "0"
	var c *session.Claim
	var field, token, replace string
	if touch {
		t = "1"
		if c = session.ClaimFrom(ctx); c.Wants() && !c.Held() {
			field, token = claimField(c), s.newToken()
		}
	}
	released := s.takeReleases(id)
	args := make([]any, 7, 7+len(released))
	args[0], args[1], args[2], args[3], args[4], args[5] = id, s.idleMillis(), t, rev, field, token
	for {
		args[6] = replace
		res, err := getScript.Run(bctx, s.r.rdb, s.keys(id), append(args, released...)...).Slice()
		if errors.Is(err, redis.Nil) {
			s.letGo(id)
			return nil, session.ErrNotFound
		}
		if err != nil {
			if released != nil {
				s.requeue(id, released, true)
			}
			return nil, fmt.Errorf("redisstore: looking a session up: %w", err)
		}
		released = nil // ended by the script
		if len(res) == 2 && res[0] == "!" {
			holder, _ := res[1].(string)
			if holder == replace {
				return nil, errors.New("redisstore: a session claim changed under its lookup")
			}
			free, err := s.claimFree(bctx, holder)
			if err != nil {
				return nil, err
			}
			if !free {
				return nil, session.ErrClaimed
			}
			replace = holder // its holder is done or gone: take it over
			continue
		}
		if field != "" {
			s.holdClaim(c, id, field, token)
		}
		return res, nil
	}
}
