package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Caps keeps the counts of the per-caller caps in Redis, shared by the replicas
// (mcphttp.CallerCounter: mcphttp.Options.Callers), so that a caller holds its share of
// sessions and listen streams across all of them, not its share on each. Each
// caller's count of one cap is a hash of its own ("<prefix>cap:{<cap>|<caller>}"), one field per
// replica holding units of it, so a replica's units are known as its own: when a replica's lease
// lapses (it died without letting go) a surviving replica removes its fields from every count
// (Router.OnLapse), and the caller gets its share back. Acquire and Release are one round trip
// each. Create it with NewCaps; the zero Caps is not usable.
type Caps struct {
	r *Router
}

// NewCaps returns the shared counter of the per-caller caps and registers the lapse handler that
// frees a dead replica's units.
func NewCaps(r *Router) *Caps {
	if r == nil {
		panic("redisstore: NewCaps needs a Router")
	}
	c := &Caps{r: r}
	r.OnLapse(c.free)
	return c
}

// capKey is the hash of one caller's count of one cap.
func (c *Caps) capKey(key string) string { return c.r.prefix + "cap:{" + key + "}" }

// acquireScript takes a unit for this replica (ARGV[1]) unless the caller's units of all
// replicas reach the cap (ARGV[2]): 1 taken, 0 at the cap.
var acquireScript = redis.NewScript(`
local n = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do n = n + tonumber(v) end
if n >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return 1
`)

// releaseUnitScript gives back a unit of this replica (ARGV[1]), dropping its field at zero (and
// the hash with its last field).
var releaseUnitScript = redis.NewScript(`
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
`)

// Acquire takes one unit of key for this replica unless the caller holds max units on all
// replicas together, and reports whether it took one.
func (c *Caps) Acquire(ctx context.Context, key string, max int) (bool, error) {
	ctx, cancel := c.r.Bound(ctx)
	defer cancel()
	n, err := acquireScript.Run(ctx, c.r.rdb, []string{c.capKey(key)}, c.r.id, max).Int64()
	if err != nil {
		return false, fmt.Errorf("redisstore: counting a caller's share: %w", err)
	}
	return n == 1, nil
}

// Release gives back one unit of key this replica took. A failed release is logged; the unit is
// freed with this replica's lease at the latest.
func (c *Caps) Release(ctx context.Context, key string) {
	ctx, cancel := c.r.Bound(ctx)
	defer cancel()
	if err := releaseUnitScript.Run(ctx, c.r.rdb, []string{c.capKey(key)}, c.r.id).Err(); err != nil {
		c.r.log.Warn().Err(err).Msg("redisstore: giving back a caller's unit")
	}
}

// free removes a lapsed replica's units from every count: a SCAN of the counts (on each primary
// of a Cluster) and an HDEL per count, pipelined.
func (c *Caps) free(ctx context.Context, replicaID string) error {
	scan := func(ctx context.Context, rdb redis.UniversalClient) error {
		iter := rdb.Scan(ctx, 0, c.r.prefix+"cap:*", 512).Iterator()
		var keys []string
		flush := func() error {
			if len(keys) == 0 {
				return nil
			}
			_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.HDel(ctx, k, replicaID)
				}
				return nil
			})
			keys = keys[:0]
			return err
		}
		for iter.Next(ctx) {
			if keys = append(keys, iter.Val()); len(keys) == 512 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		return flush()
	}
	var err error
	if cc, ok := c.r.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	} else {
		err = scan(ctx, c.r.rdb)
	}
	if err != nil {
		return fmt.Errorf("redisstore: freeing a lapsed replica's units: %w", err)
	}
	return nil
}
