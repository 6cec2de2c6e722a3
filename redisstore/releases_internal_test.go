package redisstore

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/session"
)

// pipelines counts the pipelines of scripts a client sends.
type pipelines struct{ n int }

func (h *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			h.n++
		}
		return next(ctx, cmds)
	}
}

// TestReleasesRideAndBatch: a queued release rides the next lookup of its session (no round
// trip of its own); the flusher sends the releases of several sessions in one pipeline; a
// release Redis failed is queued again and sent with the next flush.
func TestReleasesRideAndBatch(t *testing.T) {
	bin := testutil.NeedBinary(t, "redis-server", "redis-server")
	srv, err := testutil.StartRedis(bin)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	defer srv.Close()
	rdb, err := NewClient(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	nop := zerolog.Nop()
	r := NewRouter(rdb, Options{Prefix: "rel:", Logger: &nop})
	defer r.Close()
	s := NewSessions(r, SessionsOptions{})
	defer s.Close()
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
	// queue queues a release as ReleaseClaim does, without waking the flusher.
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
	queue("b", claim("b"))
	queue("c", claim("c"))
	s.sendQueued()
	if held("b") || held("c") || h.n != 1 {
		t.Fatalf("after a flush: b held %v, c held %v, %d pipelines (want 1)", held("b"), held("c"), h.n)
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
