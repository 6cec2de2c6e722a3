package redisstore

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// twice sends the first command (or pipeline) naming field to Redis twice, the first reply
// thrown away: what go-redis does when a reply is lost to a connection error it retries.
type twice struct {
	field string
	done  atomic.Bool
}

func (h *twice) names(cmd redis.Cmder) bool { return slices.Contains(cmd.Args(), any(h.field)) }

func (h *twice) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *twice) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.names(cmd) && h.done.CompareAndSwap(false, true) {
			_ = next(ctx, cmd)
		}
		return next(ctx, cmd)
	}
}

func (h *twice) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, h.names) && h.done.CompareAndSwap(false, true) {
			_ = next(ctx, cmds)
		}
		return next(ctx, cmds)
	}
}

// A lookup whose script Redis ran twice (the first reply lost, the command sent again) finds
// the claim held under its own token: the request holds it, it is not refused as claimed.
func TestRetriedLookupKeepsItsClaim(t *testing.T) {
	srv := startTestRedis(t)
	s, rdb := testReplica(t, srv, "retried:")
	ctx := context.Background()
	if err := s.Add(ctx, &session.Entry{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := getScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	c := &session.Claim{Request: jsonrpc.IntID(5)}
	h := &twice{field: claimField(c)}
	rdb.AddHook(h)
	if _, err := s.GetChecked(session.WithClaim(ctx, c), "s", true, nil); err != nil {
		t.Fatalf("a lookup Redis ran twice: %v", err)
	}
	if !h.done.Load() {
		t.Fatal("the lookup never named its claim's field")
	}
	if !c.Held() {
		t.Fatal("the request does not hold its claim")
	}
}
