package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ off atomic.Int64 }

var clockBase = time.Now()

func (c *fakeClock) now() time.Time          { return clockBase.Add(time.Duration(c.off.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.off.Add(int64(d)) }

// TestSessionRenewalSteps: a request renews the record to IdleTimeout plus an eighth, and the
// replica renews it again only once a sixteenth of IdleTimeout passed since its last renewal
// (the requests between renew nothing); off a Cluster the session index gets the record's
// expiry to the millisecond, so MaxSessions counts a session exactly until its record expires.
func TestSessionRenewalSteps(t *testing.T) {
	rs := needRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{IdleTimeout: time.Hour}, newProbe())
	var clock fakeClock
	redisstore.SetClock(a.sessions, clock.now)
	ca := a.initialize(t)
	rdb := newClient(t, rs)
	ctx := context.Background()
	key := prefix + "s:{" + ca.SessionID + "}"
	ttl := func() time.Duration {
		t.Helper()
		d, err := rdb.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	renewedTo := time.Hour + time.Hour/8
	ca.Call(t, 1, "ping", nil)
	if d := ttl(); d <= renewedTo-time.Minute || d > renewedTo {
		t.Fatalf("TTL after the first request %v, want about %v", d, renewedTo)
	}
	if rs != onCluster {
		at, err := rdb.PExpireTime(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		score, err := rdb.ZScore(ctx, prefix+"sessions", ca.SessionID).Result()
		if err != nil {
			t.Fatal(err)
		}
		if int64(score) != at.Milliseconds() {
			t.Fatalf("the index counts the session until %d, its record expires at %d", int64(score), at.Milliseconds())
		}
	}
	// Within a sixteenth of the idle timeout of the last renewal: no renewal.
	rdb.PExpire(ctx, key, time.Minute)
	clock.advance(time.Hour/16 - time.Second)
	ca.Call(t, 2, "ping", nil)
	if d := ttl(); d > time.Minute {
		t.Fatalf("a request %v after the last renewal renewed the record (TTL %v)", time.Hour/16-time.Second, d)
	}
	clock.advance(time.Second)
	ca.Call(t, 3, "ping", nil)
	if d := ttl(); d <= renewedTo-time.Minute {
		t.Fatalf("a request a sixteenth of the idle timeout after the last renewal left the TTL at %v", d)
	}
}

// TestLookupCommands: a request on a session its replica holds and renewed lately runs one
// script that reads the record in one command, takes the claim in another and ends the
// releases riding it in a third at most: no EXISTS, no PEXPIRE, no TIME, no write of the index.
// (Each command a script runs costs Redis about a microsecond more than the command itself, and
// Redis's CPU per request bounds the session workload when Redis shares a core.)
func TestLookupCommands(t *testing.T) {
	rs := ownRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe(), func(o *mcphttp.Options) { o.Resumability.Enabled = false })
	ca := a.initialize(t)
	ca.Call(t, 1, "tools/call", map[string]any{"name": "echo"}) // renewed, scripts loaded
	rdb := newClient(t, rs)
	ctx := context.Background()
	released(t, rdb, prefix, ca.SessionID, 1)
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		if w := ca.Call(t, 10+i, "tools/call", map[string]any{"name": "echo"}); w.Error != nil {
			t.Fatal(w.Error)
		}
	}
	released(t, rdb, prefix, ca.SessionID, 10+n-1)
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ",")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("commandstats line %q", line)
		}
		calls[name] = v
	}
	scripts := calls["evalsha"]
	if scripts < n || scripts > 2*n {
		t.Fatalf("%d scripts for %d requests (%v)", scripts, n, calls)
	}
	for _, c := range []string{"exists", "pexpire", "pexpireat", "time", "zadd", "eval"} {
		if calls[c] != 0 {
			t.Errorf("%d %s for %d requests, want none (%v)", calls[c], c, n, calls)
		}
	}
	inside := calls["hmget"] + calls["hget"] + calls["hset"] + calls["hdel"]
	if inside > 3*scripts {
		t.Errorf("the scripts ran %d commands, more than 3 each (%v)", inside, calls)
	}
	if calls["hmget"] != n || calls["hset"] != n {
		t.Errorf("%d HMGET and %d HSET for %d requests, want one each (%v)", calls["hmget"], calls["hset"], n, calls)
	}
}
