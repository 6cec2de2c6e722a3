package redisstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
)

func quietLogger() zerolog.Logger { return zerolog.Nop() }

// probe is what the replicas' tools report to the test.
type probe struct {
	running   chan string   // a blocking tool started (its request id)
	cancelled chan error    // a blocking tool saw its context end (the cause)
	release   chan struct{} // lets the blocking tools finish
}

func newProbe() *probe {
	return &probe{running: make(chan string, 16), cancelled: make(chan error, 16), release: make(chan struct{})}
}

// replica is one process of the cluster: a core server and the default HTTP stack, every shared
// backend on the test's Redis under the test's prefix.
type replica struct {
	url      string
	server   *core.Server
	handler  *mcphttp.Handler
	router   *redisstore.Router
	sessions *redisstore.Sessions
	events   *redisstore.EventStore
}

// newReplica starts a replica behind a loopback HTTP server; everything stops with the test.
func newReplica(t *testing.T, rs *testutil.RedisServer, prefix string, so redisstore.SessionsOptions, p *probe, adjust ...func(*mcphttp.Options)) *replica {
	t.Helper()
	return newReplicaOn(t, newRouter(t, rs, prefix), so, p, adjust...)
}

// newReplicaOn is newReplica on a router of the test's.
func newReplicaOn(t *testing.T, router *redisstore.Router, so redisstore.SessionsOptions, p *probe, adjust ...func(*mcphttp.Options)) *replica {
	t.Helper()
	nop := quietLogger()
	s := core.NewServer(core.Implementation{Name: "replica", Version: "1"}, core.Options{
		Broadcaster:                  redisstore.NewBroadcaster(router),
		SubscribeHandler:             core.AcceptSubscription,
		RequestState:                 core.RequestStateOptions{Key: make([]byte, 32)},
		Logger:                       &nop,
		ServerToClientRequestTimeout: 5 * time.Second,
	})
	addTools(s, p)
	sessions := redisstore.NewSessions(router, so)
	events := redisstore.NewEventStore(router, redisstore.EventStoreOptions{})
	opts := mcphttp.Options{
		Store:        sessions,
		Callers:      redisstore.NewCaps(router),
		Resumability: mcphttp.ResumabilityOptions{Enabled: true, Store: events, RetryInterval: 10 * time.Millisecond},
	}
	for _, f := range adjust {
		f(&opts)
	}
	h := mcphttp.New(s, opts)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		_ = h.Close()
		hs.Close()
	})
	return &replica{url: hs.URL, server: s, handler: h, router: router, sessions: sessions, events: events}
}

func addTools(s *core.Server, p *probe) {
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&core.Tool{Name: "echo", InputSchema: []byte(obj)}, func(_ context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("echo " + string(req.Arguments)), nil
	})
	s.AddTool(&core.Tool{Name: "ask", InputSchema: []byte(obj)}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		res, err := req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 10,
			Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}})
		if err != nil {
			return nil, err
		}
		return core.TextResult("model " + res.Model), nil
	})
	s.AddTool(&core.Tool{Name: "block", InputSchema: []byte(obj)}, func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
		_ = req.Progress(1, 2, "started")
		p.running <- req.ID().String()
		select {
		case <-p.release:
			return core.TextResult("released"), nil
		case <-ctx.Done():
			p.cancelled <- context.Cause(ctx)
			return nil, ctx.Err()
		}
	})
	s.AddTool(&core.Tool{Name: "change", InputSchema: []byte(obj)}, func(ctx context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
		if err := s.NotifyToolsListChanged(ctx); err != nil {
			return nil, err
		}
		return core.TextResult("changed"), nil
	})
	s.AddResource(&core.Resource{URI: "test://doc", Name: "doc"}, func(_ context.Context, req *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: req.URI, Text: "doc"}}}, nil
	})
}

// client returns a test client of the replica speaking for the session of from (when given).
func (r *replica) client(from *testutil.Client) *testutil.Client {
	c := testutil.NewClient(r.url, nil)
	if from != nil {
		c.SessionID, c.ProtocolVersion = from.SessionID, from.ProtocolVersion
	}
	return c
}

// initialize opens a session on the replica, declaring sampling.
func (r *replica) initialize(t *testing.T) *testutil.Client {
	t.Helper()
	c := r.client(nil)
	rep := c.Post(t, testutil.Request(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"sampling": map[string]any{}},
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	}))
	if rep.Status != http.StatusOK {
		t.Fatalf("initialize: %d %s", rep.Status, rep.Body)
	}
	c.SessionID, c.ProtocolVersion = rep.Header.Get("Mcp-Session-Id"), "2025-11-25"
	if c.SessionID == "" {
		t.Fatalf("initialize gave no session: %s", rep.Body)
	}
	return c
}

// await waits for a value on ch, failing the test after a generous bound.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// nextMessage reads the next message event of a stream, skipping priming events.
func nextMessage(t *testing.T, sr *testutil.SSEReader) testutil.Event {
	t.Helper()
	for {
		ev, err := sr.NextMessage()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if ev.Data != "" {
			return ev
		}
	}
}
