// Package clustertest holds the scenarios of the cluster test (scripts/cluster.sh, make
// cluster-test): three replicas of examples/everything sharing one Redis behind nginx. The
// script starts them and passes their addresses; without it every test here skips.
package clustertest

import (
	"context"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// cluster is what the script started.
type cluster struct {
	proxy    string
	replicas []string
	pids     []int
}

func setup(t *testing.T) *cluster {
	t.Helper()
	proxy := os.Getenv("MCPKIT_CLUSTER_PROXY")
	if proxy == "" {
		t.Skip("run by scripts/cluster.sh (make cluster-test), which starts the cluster")
	}
	c := &cluster{proxy: proxy, replicas: strings.Fields(os.Getenv("MCPKIT_CLUSTER_REPLICAS"))}
	for _, p := range strings.Fields(os.Getenv("MCPKIT_CLUSTER_PIDS")) {
		pid, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("MCPKIT_CLUSTER_PIDS: %v", err)
		}
		c.pids = append(c.pids, pid)
	}
	if len(c.replicas) != 3 || len(c.pids) != 3 {
		t.Fatalf("want three replicas and their pids, got %q and %v", c.replicas, c.pids)
	}
	return c
}

// httpClient bounds every request of the scenarios.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// initialize opens a session at url, declaring sampling.
func initialize(t *testing.T, url string) *testutil.Client {
	t.Helper()
	c := testutil.NewClient(url, httpClient)
	rep := c.Post(t, testutil.Request(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"sampling": map[string]any{}},
		"clientInfo":      map[string]any{"name": "cluster-test", "version": "1"},
	}))
	if rep.Status != http.StatusOK {
		t.Fatalf("initialize at %s: %d %s", url, rep.Status, rep.Body)
	}
	c.SessionID, c.ProtocolVersion = rep.Header.Get("Mcp-Session-Id"), "2025-11-25"
	c.Post(t, testutil.Notification("notifications/initialized", nil))
	return c
}

// as returns a client of url speaking for c's session.
func as(c *testutil.Client, url string) *testutil.Client {
	o := testutil.NewClient(url, httpClient)
	o.SessionID, o.ProtocolVersion = c.SessionID, c.ProtocolVersion
	return o
}

// next reads the next message event of a stream, skipping priming events, within a bound.
func next(t *testing.T, sr *testutil.SSEReader) testutil.Event {
	t.Helper()
	type res struct {
		ev  testutil.Event
		err error
	}
	ch := make(chan res, 1)
	go func() {
		for {
			ev, err := sr.NextMessage()
			if err != nil || ev.Data != "" {
				ch <- res{ev, err}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading a stream: %v", r.err)
		}
		return r.ev
	case <-time.After(20 * time.Second):
		t.Fatal("timed out reading a stream")
		return testutil.Event{}
	}
}

// TestClusterProxySession: a session opened through the proxy serves a run of requests, each
// picked round-robin, so the session is served by every replica in turn.
func TestClusterProxySession(t *testing.T) {
	c := setup(t)
	s := initialize(t, c.proxy)
	for i := range 9 {
		w := s.Call(t, i+1, "tools/call", map[string]any{"name": "test_simple_text"})
		if w.Error != nil {
			t.Fatalf("call %d through the proxy: %+v", i, w.Error)
		}
	}
}

// TestClusterSamplingAnswer: a session initialized through replica 1 serves a tools/call whose
// sampling request is answered by a POST to replica 2; the answer reaches the handler on 1.
func TestClusterSamplingAnswer(t *testing.T) {
	c := setup(t)
	s1 := initialize(t, c.replicas[0])
	s2 := as(s1, c.replicas[1])
	resp := s1.Open(t, s1.NewPost(context.Background(), testutil.CallTool(1, "test_sampling", map[string]any{"prompt": "2+2?"}, nil)))
	defer resp.Body.Close()
	sr := testutil.NewSSEReader(resp.Body)
	req := testutil.DecodeWire(t, []byte(next(t, sr).Data))
	if req.Method != "sampling/createMessage" {
		t.Fatalf("replica 1 sent %s first", req.Method)
	}
	answer := testutil.Result(req.ID, map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "four"}})
	if rep := s2.Post(t, answer); rep.Status != http.StatusAccepted {
		t.Fatalf("replica 2 took the answer with %d %s", rep.Status, rep.Body)
	}
	for {
		w := testutil.DecodeWire(t, []byte(next(t, sr).Data))
		if w.Method != "" {
			continue
		}
		if w.Error != nil || !strings.Contains(string(w.Result), "LLM response: four") {
			t.Fatalf("tools/call answered %s", w.Result)
		}
		return
	}
}

// TestClusterStreams: a listen stream and a legacy GET stream held by replica 1 receive a change
// triggered through replica 2.
func TestClusterStreams(t *testing.T) {
	c := setup(t)
	s1 := initialize(t, c.replicas[0])
	get := s1.Open(t, s1.NewRequest(context.Background(), http.MethodGet))
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET on replica 1: %d", get.StatusCode)
	}
	l := testutil.NewClient(c.replicas[0], httpClient)
	listen := l.Open(t, l.NewModernPost(context.Background(), testutil.ModernRequest(1, "subscriptions/listen",
		map[string]any{"notifications": map[string]any{"toolsListChanged": true}})))
	defer listen.Body.Close()
	lr := testutil.NewSSEReader(listen.Body)
	if ack := testutil.DecodeWire(t, []byte(next(t, lr).Data)); ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen on replica 1 began with %s", ack.Method)
	}
	s2 := as(s1, c.replicas[1])
	if w := s2.Call(t, 2, "tools/call", map[string]any{"name": "test_trigger_tool_change"}); w.Error != nil {
		t.Fatalf("the change through replica 2: %+v", w.Error)
	}
	if ev := next(t, lr); !strings.Contains(ev.Data, "notifications/tools/list_changed") {
		t.Fatalf("the listen stream got %s", ev.Data)
	}
	if ev := next(t, testutil.NewSSEReader(get.Body)); !strings.Contains(ev.Data, "notifications/tools/list_changed") {
		t.Fatalf("the GET stream got %s", ev.Data)
	}
}

// TestClusterZKillReplica runs last (the Z): replica 1 is killed while one of its resumable
// streams is open. Only what was in flight there is lost: the session goes on through the other
// replicas and the proxy, and the cut stream is replayed on replica 2 with Last-Event-ID.
func TestClusterZKillReplica(t *testing.T) {
	c := setup(t)
	s1 := initialize(t, c.replicas[0])
	resp := s1.Open(t, s1.NewPost(context.Background(), testutil.CallTool(1, "test_tool_with_progress", map[string]any{}, "tok")))
	sr := testutil.NewSSEReader(resp.Body)
	first := next(t, sr)
	if !strings.Contains(first.Data, "notifications/progress") || first.ID == "" {
		t.Fatalf("first event %+v", first)
	}
	if err := syscall.Kill(c.pids[0], syscall.SIGKILL); err != nil {
		t.Fatalf("killing replica 1: %v", err)
	}
	resp.Body.Close()
	gone(t, c.replicas[0])
	stream, _, _ := strings.Cut(first.ID, "-")

	s2 := as(s1, c.replicas[1])
	req := s2.NewRequest(context.Background(), http.MethodGet)
	req.Header.Set("Last-Event-ID", stream+"-0")
	replay := s2.Open(t, req)
	if replay.StatusCode != http.StatusOK {
		t.Fatalf("the replay on replica 2: %d", replay.StatusCode)
	}
	// What replica 1 stored before it died comes first (replica 2 then follows the stream in
	// the store; it never gets its response, so the client gives up on it here).
	ev := next(t, testutil.NewSSEReader(replay.Body))
	replay.Body.Close()
	if ev.ID != first.ID || !strings.Contains(ev.Data, "notifications/progress") {
		t.Fatalf("replica 2 replayed %+v, want %s", ev, first.ID)
	}
	// The session lives on: directly and through the proxy (which skips the dead upstream).
	if w := as(s1, c.replicas[2]).Call(t, 2, "ping", nil); w.Error != nil {
		t.Fatalf("ping on replica 3: %+v", w.Error)
	}
	p := as(s1, c.proxy)
	for i := range 6 {
		if w := p.Call(t, 10+i, "tools/call", map[string]any{"name": "test_simple_text"}); w.Error != nil {
			t.Fatalf("call %d through the proxy after the kill: %+v", i, w.Error)
		}
	}
	// And new sessions open through the proxy.
	initialize(t, c.proxy).Call(t, 1, "ping", nil)
}

// gone waits until nothing listens at url's address any more: a killed process's listening socket
// goes some moments after kill returns, and the kernel accepts connections on it (then resets
// them: a 502 through the proxy) until it does.
func gone(t *testing.T, url string) {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections after the kill", u.Host)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
