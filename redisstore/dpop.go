package redisstore

import (
	"context"
	"fmt"
	"time"
)

// ReplayCache is a DPoP proof replay cache shared by the replicas (auth.ReplayCache, set as
// auth.DPoPOptions.Replay): a proof accepted by one replica is refused as a replay by every
// other. Each proof is one key, "<prefix>dpop:{<id>}", set with SET NX and an expiry at the end
// of the proof's window: one round trip per DPoP request, one key per command (so any Redis
// Cluster slot will do), nothing left behind once the window has passed. It is safe for
// concurrent use.
type ReplayCache struct {
	r *Router
}

// ReplayCacheOptions configure a ReplayCache. The zero value is the default; there is nothing
// to configure yet (the prefix and the timeout are the router's).
type ReplayCacheOptions struct{}

// NewReplayCache returns a replay cache on the router's Redis.
func NewReplayCache(r *Router, _ ReplayCacheOptions) *ReplayCache {
	if r == nil {
		panic("redisstore: NewReplayCache needs a Router")
	}
	return &ReplayCache{r: r}
}

// Seen records id until until and reports whether it was recorded already (a replay). An id
// whose until has passed is not recorded and reports false. Errors (Redis down, the router's
// Timeout) wrap the cause; the DPoP layer answers them with 503.
func (c *ReplayCache) Seen(ctx context.Context, id string, until time.Time) (bool, error) {
	ttl := time.Until(until)
	if ttl <= 0 {
		return false, nil
	}
	ctx, cancel := c.r.Bound(ctx)
	defer cancel()
	ok, err := c.r.Client().SetNX(ctx, c.r.Key("dpop:{", id, "}"), 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("redisstore: recording a DPoP proof: %w", err)
	}
	return !ok, nil
}
