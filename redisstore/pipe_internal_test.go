package redisstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// TestCloseFinishesQueuedLookups: Close waits for the pipe, which sends the lookups queued when
// the store closed and hands them their records; then the pipe is gone, and a lookup that
// passed the store's check before Close goes to Redis by itself.
func TestCloseFinishesQueuedLookups(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "close:")
	ctx := context.Background()
	ids := []string{"a", "b"}
	for _, id := range ids {
		if err := s.Add(ctx, &session.Entry{ID: id, Owner: id}); err != nil {
			t.Fatal(err)
		}
	}
	g, blocked := holdPipe(t, s, rdb, "blocker")
	answers := lookUpQueued(t, s, ids, 3)
	closed := make(chan struct{})
	go func() {
		_ = s.Close()
		close(closed)
	}()
	awaitClosed(t, s)
	select {
	case <-closed:
		t.Fatal("Close returned while the pipe still had lookups queued")
	default:
	}
	close(g.open)
	blocked()
	owners, errs := answers()
	await(t, closed, "Close")
	await(t, s.flushed, "the pipe's end")
	for i, id := range ids {
		if errs[i] != nil || owners[i] != id {
			t.Fatalf("lookup of %s queued at Close: owner %q, %v", id, owners[i], errs[i])
		}
	}
	var args [6]any
	args[0], args[1], args[2], args[3], args[4], args[5] = "a", int64(0), int64(0), "", "", ""
	if _, err := s.runLookup(ctx, "a", &args, "", ""); err != nil {
		t.Fatalf("a lookup after Close: %v", err)
	}
}

// awaitClosed waits until Close marked the store closed.
func awaitClosed(t *testing.T, s *Sessions) {
	t.Helper()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			s.mu.Lock()
			c := s.closed
			s.mu.Unlock()
			if c {
				return
			}
			runtime.Gosched()
		}
	}()
	await(t, ch, "the store closed")
}

// TestLookupsWhenRedisIsDown: with Redis gone, the lookups of a pipeline fail as a lone lookup
// does (the dial refused, wrapped as a lookup's error), each its own caller's, and none leaves a
// claim live on the replica.
func TestLookupsWhenRedisIsDown(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "down:")
	ctx := context.Background()
	ids := []string{"a", "b"}
	for _, id := range ids {
		if err := s.Add(ctx, &session.Entry{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := getScript.Load(ctx, rdb).Err(); err != nil { // the held lookup needs no EVAL once Redis is gone
		t.Fatal(err)
	}
	g, blocked := holdPipe(t, s, rdb, "blocker")
	h := &pipelines{}
	rdb.AddHook(h)
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.GetChecked(session.WithClaim(ctx, &session.Claim{Request: jsonrpc.IntID(4)}), id, true, nil)
		}()
	}
	awaitQueued(t, s, len(ids))
	srv.Stop()
	close(g.open)
	blocked()
	wg.Wait()
	if sent := h.take(); len(sent) == 0 {
		t.Fatal("the queued lookups did not go in a pipeline")
	}
	_, errs[len(ids)] = s.GetChecked(session.WithClaim(ctx, &session.Claim{Request: jsonrpc.IntID(5)}), "a", true, nil)
	for i, err := range errs {
		if !errors.Is(err, syscall.ECONNREFUSED) || !strings.HasPrefix(err.Error(), "redisstore: looking a session up: ") {
			t.Fatalf("lookup %d with Redis down: %v, want a lookup's error wrapping the refused dial", i, err)
		}
	}
	s.mu.Lock()
	live := len(s.claims)
	s.mu.Unlock()
	if live != 0 {
		t.Fatalf("%d claims live on the replica after failed lookups, want 0", live)
	}
}

type ctxKey struct{}

// seenValues records the value under ctxKey of the context of each command (alone or in a
// pipeline) naming arg.
type seenValues struct {
	arg  string
	mu   sync.Mutex
	lone []any
	pipe []any
}

func (h *seenValues) names(c redis.Cmder) bool {
	for _, a := range c.Args() {
		if a == any(h.arg) {
			return true
		}
	}
	return false
}

func (h *seenValues) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *seenValues) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.names(cmd) {
			h.mu.Lock()
			h.lone = append(h.lone, ctx.Value(ctxKey{}))
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}
func (h *seenValues) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if h.names(c) {
				h.mu.Lock()
				h.pipe = append(h.pipe, ctx.Value(ctxKey{}))
				h.mu.Unlock()
			}
		}
		return next(ctx, cmds)
	}
}

// TestLoneLookupOnItsCallersContext: a lookup that has the pipe to itself goes as one command on
// its caller's context (the values it carries), not in a pipeline.
func TestLoneLookupOnItsCallersContext(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "lone:")
	ctx := context.Background()
	if err := s.Add(ctx, &session.Entry{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	h := &seenValues{arg: "a"}
	rdb.AddHook(h)
	if _, err := s.GetChecked(context.WithValue(ctx, ctxKey{}, "mine"), "a", true, nil); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pipe) != 0 || len(h.lone) == 0 || slices.ContainsFunc(h.lone, func(v any) bool { return v != "mine" }) {
		t.Fatalf("a lone lookup: commands with values %v alone and %v in pipelines, want them alone with its caller's", h.lone, h.pipe)
	}
}
