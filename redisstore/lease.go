package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultLeaseTTL is the lifetime of a replica's liveness lease when Options.LeaseTTL is zero.
const DefaultLeaseTTL = 15 * time.Second

// minLeaseTTL is the shortest lease Options.LeaseTTL may ask for: Redis counts in milliseconds
// and the lease is renewed at a third of its lifetime.
const minLeaseTTL = 10 * time.Millisecond

// maxLapsesPerScan bounds the lapsed replicas one janitor pass handles.
const maxLapsesPerScan = 64

// LapseHandler frees what a replica that lapsed held (see Router.OnLapse). ctx is bounded by the
// lease's TTL: past it another replica may claim the same cleanup again. A handler that could not
// free everything returns an error: the cleanup is then run again, by whichever replica claims
// it once the claim expired (after LeaseTTL).
type LapseHandler func(ctx context.Context, replicaID string) error

// The replica index: the sorted set of the replicas' leases (member: replica id, score: the
// lease's expiry in Redis's milliseconds) and the sorted set of lapsed replicas whose cleanup a
// janitor claimed (score: the claim's expiry). Both share one hash tag, so every lease script
// stays in one slot of a Cluster.
func (r *Router) leaseKey() string  { return r.prefix + "{replicas}:live" }
func (r *Router) lapsedKey() string { return r.prefix + "{replicas}:lapsed" }

// renewScript renews this replica's lease (ARGV: id, TTL ms) and answers 0 when there was no
// live lease before (the first renewal, or a lease that lapsed), 1 otherwise. A replica that
// comes back after its lease lapsed is a live replica again from then on (what it held may have
// been freed meanwhile).
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if old and tonumber(old) > now then return 1 end
return 0
`)

// aliveScript answers 1 when the replica's lease (ARGV[1]) is live.
var aliveScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) > now then return 1 end
return 0
`)

// claimScript is the janitor's claim (ARGV: claim TTL ms, limit): the replicas whose lease
// lapsed move from the lease set to the lapsed set, and lapsed replicas whose earlier claim
// expired (the claimant died before it finished) are claimed again; it answers the ids claimed.
// Being one script, two janitors never claim the same replica at once.
var claimScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], until_, id)
  out[#out + 1] = id
end
if #out < limit then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, limit - #out)) do
    redis.call('ZADD', KEYS[2], until_, id)
    out[#out + 1] = id
  end
end
return out
`)

// handOverScript ends this replica's lease at Close (ARGV[1]: id) and hands it to the janitors
// at once (a claim that has already expired), so that what its components did not release
// themselves is freed by a surviving replica.
var handOverScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('ZADD', KEYS[2], now, ARGV[1]) end
return 1
`)

// LeaseTTL returns the lifetime of the replicas' liveness leases.
func (r *Router) LeaseTTL() time.Duration { return r.leaseTTL }

// Alive reports whether the replica's lease is live: it renewed it less than LeaseTTL ago and
// did not close. A replica that was never seen, closed, or stopped renewing (killed, cut off
// from Redis) is not alive.
func (r *Router) Alive(ctx context.Context, replicaID string) (bool, error) {
	ctx, cancel := r.Bound(ctx)
	defer cancel()
	n, err := aliveScript.Run(ctx, r.rdb, []string{r.leaseKey()}, replicaID).Int64()
	if err != nil {
		return false, fmt.Errorf("redisstore: reading a replica's lease: %w", err)
	}
	return n == 1, nil
}

// OnLapse registers f to run when a replica's lease lapses (it stopped renewing it) or when a
// replica closes: a janitor on each replica, run from the lease's ticker, claims lapsed replicas
// atomically, so the handlers of one surviving replica run for each lapsed replica, once. The
// handlers run one after the other on the janitor's goroutine, after f's registration on every
// later lapse. If the replica running them dies before they all returned, the claim expires after
// LeaseTTL and another replica runs them again: a handler must be idempotent (free what is still
// held by replicaID, nothing else). Only replicas with a handler run the janitor.
func (r *Router) OnLapse(f LapseHandler) {
	if f == nil {
		panic("redisstore: OnLapse needs a function")
	}
	r.mu.Lock()
	r.lapse = append(r.lapse, f)
	r.mu.Unlock()
}

// startLease renews the lease once before NewRouter returns and then from one ticker, at a
// third of the TTL; each tick also wakes the janitor, on a goroutine of its own so that slow lapse
// handlers never delay a renewal.
func (r *Router) startLease() {
	r.leaseStop = make(chan struct{})
	r.leaseDone = make(chan struct{})
	r.renew(true)
	sweep := make(chan struct{}, 1)
	janitor := make(chan struct{})
	go func() {
		defer close(janitor)
		for range sweep {
			r.sweepLapsed()
		}
	}()
	go func() {
		defer close(r.leaseDone)
		defer func() { close(sweep); <-janitor }()
		t := time.NewTicker(r.leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-r.leaseStop:
				return
			case <-t.C:
				r.renew(false)
				select {
				case sweep <- struct{}{}:
				default: // the janitor is still at the last tick's work
				}
			}
		}
	}()
}

// renew renews this replica's lease, and logs when it had lapsed meanwhile.
func (r *Router) renew(first bool) {
	ctx, cancel := r.Bound(context.Background())
	defer cancel()
	n, err := renewScript.Run(ctx, r.rdb, []string{r.leaseKey()}, r.id, r.leaseTTL.Milliseconds()).Int64()
	switch {
	case err != nil:
		r.log.Warn().Err(err).Msg("redisstore: renewing this replica's lease (retried on the next tick)")
	case n == 0 && !first:
		r.log.Warn().Str("replica", r.id).Msg("redisstore: this replica's lease had lapsed: what it held was freed by another replica")
	}
}

// sweepLapsed claims the replicas that lapsed, one at a time so that each claim's TTL covers
// the handlers of that replica only, and runs the lapse handlers for each. A cleanup whose
// handlers all succeeded ends its claim; one with a failed handler keeps it, to be claimed and
// run again once the claim expired.
func (r *Router) sweepLapsed() {
	r.mu.RLock()
	handlers := r.lapse
	r.mu.RUnlock()
	if len(handlers) == 0 {
		return
	}
	for range maxLapsesPerScan {
		ctx, cancel := r.Bound(context.Background())
		ids, err := claimScript.Run(ctx, r.rdb, []string{r.leaseKey(), r.lapsedKey()}, r.leaseTTL.Milliseconds(), 1).StringSlice()
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			r.log.Warn().Err(err).Msg("redisstore: claiming lapsed replicas (retried on the next tick)")
		}
		if len(ids) == 0 {
			return
		}
		r.cleanUp(ids[0], handlers)
	}
}

// cleanUp runs the lapse handlers for one claimed replica and ends the claim when they all
// succeeded.
func (r *Router) cleanUp(id string, handlers []LapseHandler) {
	if id != r.id { // this replica's own lapse: renewed since, it holds what it held
		hctx, hcancel := context.WithTimeout(context.Background(), r.leaseTTL)
		defer hcancel()
		var failed error
		for _, f := range handlers {
			if err := f(hctx, id); err != nil {
				failed = err
			}
		}
		if failed != nil {
			r.log.Warn().Err(failed).Str("replica", id).Msg("redisstore: freeing what a lapsed replica held (run again once the claim expired)")
			return
		}
	}
	dctx, dcancel := r.Bound(context.Background())
	defer dcancel()
	if err := r.rdb.ZRem(dctx, r.lapsedKey(), id).Err(); err != nil {
		r.log.Warn().Err(err).Str("replica", id).Msg("redisstore: ending the claim on a lapsed replica")
	}
}

// stopLease stops the ticker and hands the lease over (see handOverScript).
func (r *Router) stopLease() error {
	close(r.leaseStop)
	<-r.leaseDone
	ctx, cancel := r.Bound(context.Background())
	defer cancel()
	if err := handOverScript.Run(ctx, r.rdb, []string{r.leaseKey(), r.lapsedKey()}, r.id).Err(); err != nil {
		return fmt.Errorf("redisstore: removing this replica's lease: %w", err)
	}
	return nil
}
