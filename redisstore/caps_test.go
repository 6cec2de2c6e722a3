package redisstore_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

var _ mcphttp.CallerCounter = (*redisstore.Caps)(nil)

// units returns the units a caller holds of a cap on all replicas together.
func units(t *testing.T, prefix, key string) int {
	t.Helper()
	vals, err := newClient(t, needRedis(t)).HVals(context.Background(), prefix+"cap:{"+key+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vals {
		i, _ := strconv.Atoi(v)
		n += i
	}
	return n
}

// awaitUnits waits until the caller holds want units of a cap.
func awaitUnits(t *testing.T, prefix, key string, want int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); units(t, prefix, key) != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d units, want %d", key, units(t, prefix, key), want)
		}
		time.Sleep(5 * time.Millisecond) // polling Redis: nothing here to await
	}
}

// TestCapsSessionsAcrossReplicas: with the per-caller caps counted in Redis, a caller's sessions
// count on every replica together: through the round robin its third session is refused with
// 429 whichever replica gets it, and a session deleted through another replica than the one that
// created it gives the unit back.
func TestCapsSessionsAcrossReplicas(t *testing.T) {
	f := newFleet(t, func(o *mcphttp.Options) { o.MaxSessionsPerCaller = 2 })
	first := f.initialize(t)
	f.initialize(t)
	for range 3 { // each lands on the next replica
		c := testutil.NewClient(f.proxy.URL(), oneShot)
		c.Post(t, testutil.Initialize(0, "2025-11-25")).WantError(t, http.StatusTooManyRequests, -32603,
			"Too many requests: this caller holds the maximum of 2 sessions", "0")
	}
	del := first.Do(t, first.NewRequest(context.Background(), http.MethodDelete))
	if del.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", del.Status, del.Body)
	}
	awaitUnits(t, f.prefix, "sessions|addr:127.0.0.1", 1)
	f.initialize(t)
}

// TestCapsListenAcrossReplicas: a caller's listen streams count on every replica together.
func TestCapsListenAcrossReplicas(t *testing.T) {
	f := newFleet(t, func(o *mcphttp.Options) { o.Listen.MaxStreamsPerCaller = 1 })
	listen := func(id int) *http.Response {
		c := testutil.NewClient(f.proxy.URL(), oneShot)
		return c.Open(t, c.NewModernPost(context.Background(), testutil.ModernRequest(id, "subscriptions/listen",
			map[string]any{"notifications": map[string]any{"toolsListChanged": true}})))
	}
	open := listen(1)
	defer open.Body.Close()
	if open.StatusCode != http.StatusOK {
		t.Fatalf("the first listen: %d", open.StatusCode)
	}
	for i := range 3 {
		resp := listen(2 + i)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a second listen stream on another replica: %d, want 429", resp.StatusCode)
		}
	}
	open.Body.Close()
	awaitUnits(t, f.prefix, "listen|addr:127.0.0.1", 0)
	again := listen(9)
	defer again.Body.Close()
	if again.StatusCode != http.StatusOK {
		t.Fatalf("a listen once the first closed: %d", again.StatusCode)
	}
}

// TestCapsFreedWhenReplicaLapses: the units a replica took and never gave back (it was killed)
// are freed by a survivor once its lease lapses, once.
func TestCapsFreedWhenReplicaLapses(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	deadRouter, deadRDB := leaseRouter(t, srv, prefix)
	liveRouter, _ := leaseRouter(t, srv, prefix)
	dead, live := redisstore.NewCaps(deadRouter), redisstore.NewCaps(liveRouter)
	ctx := context.Background()
	for range 2 {
		if ok, err := dead.Acquire(ctx, "k", 2); !ok || err != nil {
			t.Fatalf("Acquire on the first replica: %v %v", ok, err)
		}
	}
	if ok, err := live.Acquire(ctx, "k", 2); ok || err != nil {
		t.Fatalf("Acquire past the cap on another replica: %v %v", ok, err)
	}
	if ok, err := live.Acquire(ctx, "other", 2); !ok || err != nil {
		t.Fatalf("another caller's share: %v %v", ok, err)
	}
	_ = deadRDB.Close() // killed: no release, no renewal
	awaitUnits(t, prefix, "k", 0)
	if ok, err := live.Acquire(ctx, "k", 2); !ok || err != nil {
		t.Fatalf("Acquire once the dead replica's units were freed: %v %v", ok, err)
	}
	live.Release(ctx, "k")
	live.Release(ctx, "other")
	if n := units(t, prefix, "k") + units(t, prefix, "other"); n != 0 {
		t.Fatalf("%d units left after every release", n)
	}
}

// TestCapsResumableAcrossReplicas: a caller's resumable calls count on every replica together:
// while its one allowed call runs on one replica, a call landing on another is served on a plain
// stream (no event ids to resume from), and once the first is done the next one is resumable
// again.
func TestCapsResumableAcrossReplicas(t *testing.T) {
	f := newFleet(t, func(o *mcphttp.Options) { o.Resumability.MaxCallsPerCaller = 1 })
	c := f.initialize(t)
	resumable := func(r testutil.Reply) bool {
		return strings.Contains(string(r.Body), "\nid: ") || strings.HasPrefix(string(r.Body), "id: ")
	}
	done := make(chan testutil.Reply, 1)
	go func() { done <- c.Post(t, testutil.CallTool(5, "block", nil, nil)) }()
	await(t, f.probe.running, "the first call to start")
	awaitUnits(t, f.prefix, "resumable|addr:127.0.0.1", 1)
	for i := range 3 { // each lands on the next replica
		rep := c.Post(t, testutil.CallTool(6+i, "echo", map[string]any{"text": "x"}, nil))
		if rep.Status != http.StatusOK || resumable(rep) {
			t.Fatalf("a call past the caller's share: %d, resumable %v: %s", rep.Status, resumable(rep), rep.Body)
		}
	}
	close(f.probe.release)
	if rep := await(t, done, "the first call to finish"); !resumable(rep) {
		t.Fatalf("the first call's stream had no event ids: %s", rep.Body)
	}
	awaitUnits(t, f.prefix, "resumable|addr:127.0.0.1", 0)
	if rep := c.Post(t, testutil.CallTool(20, "echo", map[string]any{"text": "x"}, nil)); !resumable(rep) {
		t.Fatalf("a call once the first was done: not resumable: %s", rep.Body)
	}
}
