package redisstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

const testLease = 150 * time.Millisecond

// leaseRouter returns a router on its own client (so the test can cut it off from Redis, as a
// kill would) with a short lease.
func leaseRouter(t *testing.T, srv *testutil.RedisServer, prefix string) (*redisstore.Router, redis.UniversalClient) {
	t.Helper()
	nop := quietLogger()
	rdb := newClient(t, srv)
	r := redisstore.NewRouter(rdb, redisstore.Options{Prefix: prefix, Logger: &nop, LeaseTTL: testLease})
	t.Cleanup(func() { _ = r.Close() })
	return r, rdb
}

// lapses records the lapse handlers' calls of several routers.
type lapses struct {
	mu    sync.Mutex
	calls map[string][]string // lapsed replica -> the replicas whose handler ran for it
	ran   chan string
}

func newLapses() *lapses { return &lapses{calls: map[string][]string{}, ran: make(chan string, 64)} }

func (l *lapses) watch(r *redisstore.Router) {
	r.OnLapse(func(ctx context.Context, id string) error {
		if ctx.Err() != nil {
			panic("a lapse handler got an ended context")
		}
		l.mu.Lock()
		l.calls[id] = append(l.calls[id], r.ID())
		l.mu.Unlock()
		l.ran <- id
		return nil
	})
}

func (l *lapses) of(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls[id]...)
}

// await waits until the handlers ran for id.
func (l *lapses) await(t *testing.T, id string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-l.ran:
			if got == id {
				return
			}
		case <-deadline:
			t.Fatalf("no lapse handler ran for %s", id)
		}
	}
}

// TestLeaseAlive: a router's lease is live from NewRouter on and renewed by its ticker past the
// TTL; an unknown replica is not alive, nor a closed one.
func TestLeaseAlive(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	a, _ := leaseRouter(t, srv, prefix)
	b, _ := leaseRouter(t, srv, prefix)
	ctx := context.Background()
	if ok, err := b.Alive(ctx, a.ID()); err != nil || !ok {
		t.Fatalf("Alive(a) right after NewRouter = %v, %v", ok, err)
	}
	if ok, err := b.Alive(ctx, "nobody"); err != nil || ok {
		t.Fatalf("Alive(unknown) = %v, %v", ok, err)
	}
	// Renewed by the ticker: still alive after several lifetimes of one lease.
	waitFor(t, 4*testLease)
	if ok, err := b.Alive(ctx, a.ID()); err != nil || !ok {
		t.Fatalf("Alive(a) after 4 TTLs = %v, %v", ok, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Alive(ctx, a.ID()); err != nil || ok {
		t.Fatalf("Alive(a) after Close = %v, %v", ok, err)
	}
	if b.LeaseTTL() != testLease {
		t.Fatalf("LeaseTTL = %v", b.LeaseTTL())
	}
}

// waitFor lets d pass (the lease must outlive its TTL: there is nothing to await but time).
func waitFor(t *testing.T, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	<-timer.C
}

// TestLeaseLapseOnce: a replica cut off from Redis without Close (as a kill leaves it) is
// reported lapsed by exactly one of the survivors, once; a replica that closes is handed over
// the same way; no survivor reports another survivor.
func TestLeaseLapseOnce(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	l := newLapses()
	var survivors []*redisstore.Router
	for range 3 {
		r, _ := leaseRouter(t, srv, prefix)
		l.watch(r)
		survivors = append(survivors, r)
	}
	dead, deadRDB := leaseRouter(t, srv, prefix)
	l.watch(dead) // its own handler never runs for itself
	_ = deadRDB.Close()
	l.await(t, dead.ID())

	// A second replica closes: its hand-over is the next lapse the survivors report; by then
	// the first one's claim is long over and it was reported once.
	closing, _ := leaseRouter(t, srv, prefix)
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	l.await(t, closing.ID())
	if got := l.of(dead.ID()); len(got) != 1 {
		t.Fatalf("the killed replica was reported %d times (by %v), want once", len(got), got)
	}
	if got := l.of(closing.ID()); len(got) != 1 {
		t.Fatalf("the closed replica was reported %d times (by %v), want once", len(got), got)
	}
	for _, r := range survivors {
		if got := l.of(r.ID()); len(got) != 0 {
			t.Fatalf("a live replica was reported lapsed by %v", got)
		}
		if ok, err := r.Alive(context.Background(), dead.ID()); err != nil || ok {
			t.Fatalf("Alive(killed) = %v, %v", ok, err)
		}
	}
	// Nothing is left to claim: the index holds the survivors only.
	rdb := newClient(t, srv)
	live, err := rdb.ZCard(context.Background(), prefix+"{replicas}:live").Result()
	if err != nil || live != 3 {
		t.Fatalf("lease index holds %d replicas (%v), want the 3 survivors", live, err)
	}
	if n, err := rdb.ZCard(context.Background(), prefix+"{replicas}:lapsed").Result(); err != nil || n != 0 {
		t.Fatalf("%d lapsed replicas still claimed (%v)", n, err)
	}
}

// TestLeaseReclaimed: a cleanup whose claimant died before finishing is claimed again by another
// replica once the claim expires.
func TestLeaseReclaimed(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	rdb := newClient(t, srv)
	// A lapsed replica a janitor claimed and never finished with (its claim expired at once).
	if err := rdb.ZAdd(context.Background(), prefix+"{replicas}:lapsed", redis.Z{Score: 1, Member: "gone"}).Err(); err != nil {
		t.Fatal(err)
	}
	l := newLapses()
	r, _ := leaseRouter(t, srv, prefix)
	l.watch(r)
	l.await(t, "gone")
}

// TestLeaseLapseRetriedAfterFailure: a cleanup whose handler failed keeps its claim and runs again
// once that claim expired; one that succeeded is not run again.
func TestLeaseLapseRetriedAfterFailure(t *testing.T) {
	srv := needRedis(t)
	prefix := testPrefix()
	survivor, _ := leaseRouter(t, srv, prefix)
	runs := make(chan int, 8)
	var n int
	survivor.OnLapse(func(_ context.Context, _ string) error {
		n++ // the janitor runs the handlers of one replica one after the other
		runs <- n
		if n == 1 {
			return errors.New("Redis went away mid-cleanup")
		}
		return nil
	})
	dead, deadRDB := leaseRouter(t, srv, prefix)
	_ = deadRDB.Close()
	for want := 1; want <= 2; want++ {
		select {
		case got := <-runs:
			if got != want {
				t.Fatalf("run %d, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the cleanup of %s ran %d times, want it run again after its failure", dead.ID(), want-1)
		}
	}
	waitFor(t, 4*testLease) // a finished cleanup is not claimed again
	select {
	case got := <-runs:
		t.Fatalf("the cleanup ran a %d. time after it succeeded", got)
	default:
	}
}
