package redisstore

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/session"
)

// lookupHook counts the session lookups go-redis sends alone and in pipelines, and holds the
// first lookup sent alone until release says so.
type lookupHook struct {
	alone, piped atomic.Int32
	first        atomic.Bool
	release      func()
}

func isLookup(cmd redis.Cmder) bool {
	args := cmd.Args()
	return len(args) > 1 && args[1] == getScript.Hash()
}

func (h *lookupHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lookupHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isLookup(cmd) {
			h.alone.Add(1)
			if h.first.CompareAndSwap(false, true) {
				h.release()
			}
		}
		return next(ctx, cmd)
	}
}

func (h *lookupHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if isLookup(cmd) {
				h.piped.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// On a Redis Cluster every lookup goes to its node alone: a pipeline answers when its slowest
// node does, so one node down would hold up the lookups of sessions on the others. The first
// lookup is held until each of the others reached Redis (alone, or in a pipeline) or queued.
func TestClusterLookupsGoAlone(t *testing.T) {
	seeds := SplitAddrs(os.Getenv("MCPKIT_REDIS_CLUSTER"))
	if len(seeds) == 0 {
		t.Skip("needs a Redis Cluster (MCPKIT_REDIS_CLUSTER, set by make cluster-test)")
	}
	rdb, err := NewClusterClient(seeds...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	nop := zerolog.Nop()
	r := NewRouter(rdb, Options{Prefix: "alone" + strconv.FormatInt(int64(os.Getpid()), 36) + ":", Logger: &nop})
	t.Cleanup(func() { _ = r.Close() })
	s := NewSessions(r, SessionsOptions{})
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	const n = 8
	for i := range n {
		if err := s.Add(ctx, &session.Entry{ID: "s" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := getScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	h := &lookupHook{}
	h.release = func() {
		for {
			s.mu.Lock()
			queued := len(s.lookups)
			s.mu.Unlock()
			if int(h.alone.Load()+h.piped.Load())+queued >= n {
				return // every lookup went out or is queued: piped tells which
			}
			runtime.Gosched()
		}
	}
	rdb.AddHook(h)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := s.GetChecked(ctx, "s"+strconv.Itoa(i), true, nil); err != nil {
				t.Errorf("lookup of s%d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if got := h.piped.Load(); got != 0 {
		t.Errorf("%d lookups went in a pipeline on a Cluster, want each alone", got)
	}
}
