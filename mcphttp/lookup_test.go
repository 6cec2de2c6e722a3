package mcphttp_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/session"
)

// recordStore is a Memory store that, like a shared store, answers the id "elsewhere" (a session
// another replica created) with its record only.
type recordStore struct {
	*session.Memory
}

func (s recordStore) GetChecked(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (*session.Entry, error) {
	if id == "elsewhere" {
		if rec, err := s.Memory.GetChecked(ctx, id, touch, allow); err == nil {
			return rec, nil // held since
		}
		rec := &session.Entry{ID: id, State: &core.SessionState{Initialized: true, ProtocolVersion: "2025-11-25"}}
		if allow != nil && !allow(rec) {
			return rec, session.ErrRefused
		}
		return rec, nil
	}
	return s.Memory.GetChecked(ctx, id, touch, allow)
}

// holdingStore adds session.Holder: it adopts what the endpoint builds, once.
type holdingStore struct {
	recordStore
	mu    sync.Mutex
	held  map[string]session.Live
	holds int
}

func (s *holdingStore) Hold(ctx context.Context, l session.Live) (session.Live, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := l.Entry().ID
	if h := s.held[id]; h != nil {
		return h, nil
	}
	s.holds++
	if s.held == nil {
		s.held = map[string]session.Live{}
	}
	s.held[id] = l
	if id != "elsewhere" {
		return l, nil // a session the endpoint created: Add stored its record
	}
	return l, s.Memory.Add(ctx, l.Entry())
}

var _ session.Holder = (*holdingStore)(nil)

// The endpoint owns the in-process sessions: the record of a session another replica created is
// rebuilt by the endpoint (once) and handed to a store that can hold it; a store that cannot
// gets a 503 for it, never a session half made.
func TestEndpointRebuildsRecords(t *testing.T) {
	t.Run("holder", func(t *testing.T) {
		store := &holdingStore{recordStore: recordStore{session.NewMemory(session.MemoryOptions{})}}
		f := newFixture(t, mcphttp.Options{Store: store})
		c := f.client()
		c.SessionID = "elsewhere"
		for i := range 3 {
			wantResult(t, c.Call(t, i+1, "ping", nil), strconv.Itoa(i+1))
		}
		if store.holds != 1 {
			t.Fatalf("%d sessions held, want 1 (rebuilt once)", store.holds)
		}
	})
	t.Run("no holder", func(t *testing.T) {
		store := recordStore{session.NewMemory(session.MemoryOptions{})}
		f := newFixture(t, mcphttp.Options{Store: store})
		f.raw(t, http.MethodPost, ping, "Accept", testutil.AcceptBoth, "Mcp-Session-Id", "elsewhere").
			WantError(t, http.StatusServiceUnavailable, -32603, "Service unavailable: session store error", `"p-1"`)
	})
}
