package redisstore_test

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/redisstore"
)

// TestRedisDownAndBack: with Redis stopped, requests that need it get 503 with a JSON-RPC error
// body (initialize, requests naming a session) and nothing panics; once the same server is back
// (empty: persistence is off), service resumes by itself on the same replica.
func TestRedisDownAndBack(t *testing.T) {
	rs := ownRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	ca.Call(t, 1, "ping", nil)
	before := runtime.NumGoroutine()

	rs.Stop()
	for i := range 2 {
		rep := ca.Post(t, testutil.Request(2, "ping", nil))
		rep.WantError(t, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service unavailable: session store error", "2")
		rep = a.client(nil).Post(t, testutil.Initialize(3, "2025-11-25"))
		rep.WantError(t, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service unavailable: the session could not be stored", "3")
		if err := a.server.NotifyToolsListChanged(context.Background()); err == nil {
			t.Fatalf("round %d: a broadcast with Redis down reported no error", i)
		}
	}

	if err := rs.Restart(); err != nil {
		t.Fatal(err)
	}
	// The old session died with the data set; a new one works, through a new connection.
	var c *testutil.Client
	for range 200 {
		rep := a.client(nil).Post(t, testutil.Initialize(4, "2025-11-25"))
		if rep.Status == http.StatusOK {
			c = a.client(nil)
			c.SessionID, c.ProtocolVersion = rep.Header.Get("Mcp-Session-Id"), "2025-11-25"
			break
		}
		time.Sleep(10 * time.Millisecond) // go-redis reconnects on its own schedule
	}
	if c == nil {
		t.Fatal("service did not resume after Redis came back")
	}
	if w := c.Call(t, 5, "tools/call", map[string]any{"name": "echo"}); w.Error != nil {
		t.Fatalf("tools/call after the outage: %+v", w.Error)
	}
	ca.Post(t, testutil.Request(6, "ping", nil)).WantError(t, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "Session not found", "6")
	// The broadcast path recovered too (the pub/sub connection re-subscribed).
	for range 200 {
		if a.server.NotifyToolsListChanged(context.Background()) == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.server.NotifyToolsListChanged(context.Background()); err != nil {
		t.Fatalf("broadcast after the outage: %v", err)
	}
	// Nothing piled up: the outage left no goroutines behind (a margin for the client's pool).
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Errorf("goroutines: %d before the outage, %d after", before, after)
	}
}

// TestRedisSlow: a Redis that does not answer in time is the same 503, within the timeout.
func TestRedisSlow(t *testing.T) {
	rs := ownRedis(t)
	prefix := testPrefix()
	a := newReplica(t, rs, prefix, redisstore.SessionsOptions{}, newProbe())
	ca := a.initialize(t)
	// CLIENT PAUSE holds every client's commands on the server for the given time.
	admin := newClient(t, rs)
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "CLIENT", "UNPAUSE")
	start := time.Now()
	rep := ca.Post(t, testutil.Request(1, "ping", nil))
	rep.WantError(t, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service unavailable: session store error", "1")
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("the request waited %v for a paused Redis (timeout 2 s)", d)
	}
}

// TestTasksDuringOutage: with Redis stopped, every task request (creating one, tasks/get,
// tasks/update, tasks/cancel) gets 503 with -32603 "Service unavailable", as legacy sessions
// do, not a 200 with an internal error. Before, they were answered 200.
func TestTasksDuringOutage(t *testing.T) {
	rs := ownRedis(t)
	ev := &taskEvents{started: make(chan string, 4), ended: make(chan error, 4)}
	a := newTaskReplica(t, rs, testPrefix(), "a", ev)
	id := a.ok(t, "tools/call", map[string]any{"name": "confirm"})["taskId"].(string)
	await(t, ev.started, "the handler to start")
	rs.Stop()
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}
	for i, c := range []struct {
		method string
		params map[string]any
	}{
		{"tools/call", map[string]any{"name": "confirm"}},
		{"tasks/get", map[string]any{"taskId": id}},
		{"tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"k": map[string]any{"action": "decline"}}}},
		{"tasks/cancel", map[string]any{"taskId": id}},
	} {
		c.params["_meta"] = testutil.Envelope(testutil.ModernVersion, caps)
		rep := a.client.Do(t, a.client.NewModernPost(context.Background(), testutil.ModernRequest(i+1, c.method, c.params)))
		rep.WantError(t, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "Service unavailable", strconv.Itoa(i+1))
	}
}
