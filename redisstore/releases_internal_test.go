package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/session"
)

// pipelines records the pipelines of scripts a client sends: for each, the number of arguments
// of each of its commands.
type pipelines struct {
	mu   sync.Mutex
	sent [][]int
}

func (h *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			var args []int
			for _, c := range cmds {
				args = append(args, len(c.Args()))
			}
			h.mu.Lock()
			h.sent = append(h.sent, args)
			h.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

// take returns the pipelines recorded since the last take.
func (h *pipelines) take() [][]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	sent := h.sent
	h.sent = nil
	return sent
}

// TestReleasesRideAndBatch: a queued release rides the next lookup of its session (no round
// trip of its own); the pipe sends the releases of several sessions in one pipeline; a
// release Redis failed is queued again and sent with the next pipeline.
func TestReleasesRideAndBatch(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "rel:")
	ctx := context.Background()

	// claim takes request id 1 of a session and returns its token, read back from the record.
	claim := func(id string) string {
		t.Helper()
		c := &session.Claim{Request: jsonrpc.IntID(1)}
		if _, err := s.GetChecked(session.WithClaim(ctx, c), id, true, nil); err != nil || !c.Held() {
			t.Fatalf("claiming in %s: %v", id, err)
		}
		tok, err := rdb.HGet(ctx, s.key(id), "q:1").Result()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// queue queues a release as ReleaseClaim does, without waking the pipe.
	queue := func(id, token string) {
		s.mu.Lock()
		delete(s.claims, token)
		s.queued[id] = append(s.queued[id], "q:1", token)
		s.nqueued++
		s.mu.Unlock()
	}
	held := func(id string) bool {
		t.Helper()
		ok, err := rdb.HExists(ctx, s.key(id), "q:1").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		if err := s.Add(ctx, &session.Entry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}

	queue("a", claim("a"))
	if !held("a") {
		t.Fatal("a queued release reached Redis before anything sent it")
	}
	if _, err := s.GetChecked(ctx, "a", true, nil); err != nil {
		t.Fatal(err)
	}
	if held("a") || s.nqueued != 0 || len(s.queued) != 0 {
		t.Fatalf("after the next lookup: held %v, %d queued", held("a"), s.nqueued)
	}

	h := &pipelines{}
	rdb.AddHook(h)
	tb, tc := claim("b"), claim("c")
	queue("b", tb)
	queue("c", tc)
	h.take()
	s.sendQueued()
	if sent := h.take(); held("b") || held("c") || len(sent) != 1 || len(sent[0]) != 2 {
		t.Fatalf("after a flush: b held %v, c held %v, pipelines %v (want one of two scripts)", held("b"), held("c"), sent)
	}

	tok := claim("a")
	srv.Stop()
	queue("a", tok)
	s.sendQueued()
	if s.nqueued != 1 {
		t.Fatalf("a release Redis failed: %d queued, want 1", s.nqueued)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	s.sendQueued()
	if s.nqueued != 0 {
		t.Fatalf("after the next flush: %d queued", s.nqueued)
	}
}

// claimScripts signals the script calls a client made about one claim field (q:1 when field is
// empty: request id 1's), after their reply: on ok when Redis ran them, on failed when the call
// failed.
type claimScripts struct {
	ok, failed chan struct{}
	field      string
}

func (h claimScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h claimScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.seen(cmd, err)
		return err
	}
}
func (h claimScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				h.seen(cmd, cmd.Err())
			} else {
				h.seen(cmd, err)
			}
		}
		return err
	}
}

// seen signals a script call about the field, once its reply (or error, err) is in.
func (h claimScripts) seen(cmd redis.Cmder, err error) {
	field := h.field
	if field == "" {
		field = "q:1"
	}
	if n := cmd.Name(); (n == "evalsha" || n == "eval") && slices.Contains(cmd.Args(), any(field)) {
		ch := h.ok
		if err != nil && !errors.Is(err, redis.Nil) {
			ch = h.failed
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// TestReleasesAfterAFailedRide: a release that rode a lookup which failed (its client hung up)
// is sent by the pipe at once, not left for the replica's next release: another replica can
// then take the request id. A release Redis itself failed is sent again after
// releaseRetryDelay, with nothing else queued to wake the pipe.
func TestReleasesAfterAFailedRide(t *testing.T) {
	srv := startTestRedis(t)
	a, rdbA := testReplica(t, srv, "rel:")
	b, _ := testReplica(t, srv, "rel:")
	calls := claimScripts{ok: make(chan struct{}, 1), failed: make(chan struct{}, 1)}
	rdbA.AddHook(calls)
	ctx := context.Background()
	if err := a.Add(ctx, &session.Entry{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	claimOn := func(s *Sessions) error {
		_, err := s.GetChecked(session.WithClaim(ctx, &session.Claim{Request: jsonrpc.IntID(1)}), "s", true, nil)
		return err
	}
	held := func() bool {
		ok, err := rdbA.HExists(ctx, a.key("s"), "q:1").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// queue queues a release as ReleaseClaim does when the pipe is busy (it is not woken).
	queue := func(token string) {
		a.mu.Lock()
		delete(a.claims, token)
		a.queued["s"] = append(a.queued["s"], "q:1", token)
		a.nqueued++
		a.mu.Unlock()
	}
	await := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not in 10 s", what)
		}
	}
	drain := func() {
		for _, ch := range []chan struct{}{calls.ok, calls.failed} {
			select {
			case <-ch:
			default:
			}
		}
	}

	if err := claimOn(a); err != nil {
		t.Fatal(err)
	}
	tok, err := rdbA.HGet(ctx, a.key("s"), "q:1").Result()
	if err != nil {
		t.Fatal(err)
	}
	queue(tok)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	drain()
	if _, err := a.GetChecked(cctx, "s", true, nil); err == nil {
		t.Fatal("a lookup with a cancelled context succeeded")
	}
	for held() {
		await(calls.ok, "the release of the failed lookup sent by the pipe")
	}
	if err := claimOn(b); err != nil {
		t.Fatalf("request id 1, released, claimed on another replica: %v", err)
	}

	srv.Stop()
	drain()
	queue("stale")
	select {
	case a.wake <- struct{}{}:
	default:
	}
	await(calls.failed, "the flush while Redis is down")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	await(calls.ok, "the flush sent again once Redis is back, with nothing new queued")
}

// TestRidingReleasesBounded: a lookup carries at most maxRidingReleases of its session's queued
// releases (its script reads their fields in one command); the rest go in a releaseScript of the
// same pipeline.
func TestRidingReleasesBounded(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "ride:")
	ctx := context.Background()
	if err := s.Add(ctx, &session.Entry{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	const n = maxRidingReleases + 6
	s.mu.Lock()
	for i := range n {
		field, token := "q:"+strconv.Itoa(i), "gone "+strconv.Itoa(i)
		if err := rdb.HSet(ctx, s.key("a"), field, token).Err(); err != nil {
			s.mu.Unlock()
			t.Fatal(err)
		}
		s.queued["a"] = append(s.queued["a"], field, token) // as ReleaseClaim queues, without waking the pipe
		s.nqueued++
	}
	s.mu.Unlock()
	h := &pipelines{}
	rdb.AddHook(h)
	if _, err := s.GetChecked(ctx, "a", true, nil); err != nil {
		t.Fatal(err)
	}
	claims := func() int64 {
		t.Helper()
		fields, err := rdb.HKeys(ctx, s.key("a")).Result()
		if err != nil {
			t.Fatal(err)
		}
		var c int64
		for _, f := range fields {
			if strings.HasPrefix(f, "q:") {
				c++
			}
		}
		return c
	}
	s.mu.Lock()
	queued := s.nqueued
	s.mu.Unlock()
	if c := claims(); c != 0 || queued != 0 {
		t.Fatalf("after a lookup: %d claims left, %d queued", c, queued)
	}
	// EVALSHA, sha, numkeys, the keys (two off a Cluster), then the arguments.
	keys := len(s.keys("a"))
	want := []int{3 + keys + 6 + 2*maxRidingReleases, 3 + 1 + 2*(n-maxRidingReleases)}
	if sent := h.take(); len(sent) != 1 || !slices.Equal(sent[0], want) {
		t.Fatalf("pipelines %v, want one of %v arguments", sent, want)
	}
}

// lostReply runs each script call, then, while armed, reports it failed as if its reply were
// lost on the way back.
type lostReply struct{ armed *atomic.Bool }

func (h lostReply) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h lostReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.lose(cmd) {
			return context.Canceled
		}
		return err
	}
}
func (h lostReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		lost := false
		for _, cmd := range cmds {
			lost = h.lose(cmd) || lost
		}
		if lost {
			return context.Canceled
		}
		return err
	}
}

// lose fails a script call that ran, while armed, and reports whether it did.
func (h lostReply) lose(cmd redis.Cmder) bool {
	if n := cmd.Name(); (n == "evalsha" || n == "eval") && h.armed.Load() {
		cmd.SetErr(context.Canceled)
		return true
	}
	return false
}

// TestClaimOfALostLookupIsReleased: when Redis ran a lookup's script but its reply was lost,
// the claim the script took (here the session's standalone GET stream) is released like the
// claims of finished requests: another replica can take it afterwards.
func TestClaimOfALostLookupIsReleased(t *testing.T) {
	srv := startTestRedis(t)
	a, rdbA := testReplica(t, srv, "lost:")
	b, _ := testReplica(t, srv, "lost:")
	var armed atomic.Bool
	rdbA.AddHook(lostReply{armed: &armed})
	calls := claimScripts{ok: make(chan struct{}, 1), failed: make(chan struct{}, 1), field: "g"}
	rdbA.AddHook(calls)
	ctx := context.Background()
	if err := a.Add(ctx, &session.Entry{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetChecked(ctx, "s", true, nil); err != nil { // loads the script (a lost reply would hide NOSCRIPT)
		t.Fatal(err)
	}
	armed.Store(true)
	if _, err := a.GetChecked(session.WithClaim(ctx, &session.Claim{Stream: true}), "s", true, nil); err == nil {
		t.Fatal("a lookup whose reply was lost succeeded")
	}
	armed.Store(false)
	// The claim the lost lookup took is released by replica a's pipe: until then replica b
	// is refused; each refusal waits for a's next script call about the claim.
	for {
		_, err := b.GetChecked(session.WithClaim(ctx, &session.Claim{Stream: true}), "s", true, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, session.ErrClaimed) {
			t.Fatal(err)
		}
		select {
		case <-calls.ok:
		case <-time.After(10 * time.Second):
			t.Fatal("the standalone stream a lookup whose reply was lost claimed is still refused on another replica after 10 s")
		}
	}
}

// startTestRedis starts a redis-server of the test's own (stopped when the test ends), or skips
// the test naming the package to install.
func startTestRedis(t *testing.T) *testutil.RedisServer {
	t.Helper()
	srv, err := testutil.StartRedis(testutil.NeedBinary(t, "redis-server", "redis-server"))
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// testReplica is one replica's session store on srv, with a client and a router of its own under
// prefix (all closed when the test ends), and that client.
func testReplica(t *testing.T, srv *testutil.RedisServer, prefix string) (*Sessions, redis.UniversalClient) {
	t.Helper()
	rdb, err := NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	nop := zerolog.Nop()
	r := NewRouter(rdb, Options{Prefix: prefix, Logger: &nop})
	t.Cleanup(func() { _ = r.Close() })
	s := NewSessions(r, SessionsOptions{})
	t.Cleanup(func() { _ = s.Close() })
	return s, rdb
}
