package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/session"
)

// BenchmarkStatefulToolsCall measures one legacy tools/call on an initialized session through the
// whole default stack, in process (server-side cost only), with the in-memory session store and
// with the Redis one (a real redis-server on loopback: one round trip per request).
func BenchmarkStatefulToolsCall(b *testing.B) {
	rs := needRedis(b)
	body := testutil.CallTool(1, "echo", map[string]any{"text": "hi"}, nil)
	for _, store := range []string{"memory", "redis"} {
		for _, mode := range []string{"json", "sse"} {
			b.Run(store+"/"+mode, func(b *testing.B) {
				h, sid := statefulHandler(b, rs, store, mode == "json")
				w := testutil.NewRecorder()
				req := testutil.PostRequest(body, sid)
				rd := strings.NewReader(body)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					w.Reset()
					rd.Reset(body)
					req.Body = io.NopCloser(rd)
					h.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Fatalf("status %d: %s", w.Status, w.Body.Bytes())
					}
				}
			})
		}
	}
}

// BenchmarkStatefulToolsCallParallel is BenchmarkStatefulToolsCall (SSE answers, as
// bench-peers' session workload) with 32 requests in flight on the session at once, each
// goroutine with a request id of its own: on Redis the lookups of concurrent requests share round
// trips (round-trips/op says how many a request cost, releases included).
func BenchmarkStatefulToolsCallParallel(b *testing.B) {
	rs := needRedis(b)
	for _, store := range []string{"memory", "redis"} {
		b.Run(store, func(b *testing.B) {
			h, sid := statefulHandler(b, rs, store, false)
			trips := &roundTrips{}
			if h.rdb != nil {
				h.rdb.AddHook(trips)
			}
			var ids atomic.Int64
			b.SetParallelism(16) // 32 goroutines on two cores
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				body := testutil.CallTool(int(ids.Add(1)), "echo", map[string]any{"text": "hi"}, nil)
				w := testutil.NewRecorder()
				req := testutil.PostRequest(body, sid)
				rd := strings.NewReader(body)
				for pb.Next() {
					w.Reset()
					rd.Reset(body)
					req.Body = io.NopCloser(rd)
					h.ServeHTTP(w, req)
					if w.Status != http.StatusOK {
						b.Errorf("status %d: %s", w.Status, w.Body.Bytes())
						return
					}
				}
			})
			b.ReportMetric(float64(trips.total())/float64(b.N), "round-trips/op")
		})
	}
}

// benchHandler is the endpoint of a stateful benchmark, and its Redis client (nil on the memory
// store).
type benchHandler struct {
	*mcphttp.Handler
	rdb redis.UniversalClient
}

// statefulHandler returns the default stack over the test tools with its sessions in store
// ("memory" or "redis", on rs), closed with the benchmark, and the id of a session initialized
// on it.
func statefulHandler(b *testing.B, rs *testutil.RedisServer, store string, json bool) (benchHandler, string) {
	b.Helper()
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{})
	addTools(s, newProbe())
	opts := mcphttp.Options{JSONResponse: json}
	var rdb redis.UniversalClient
	if store == "redis" {
		r := newRouter(b, rs, testPrefix())
		rdb = r.Client()
		opts.Store = redisstore.NewSessions(r, redisstore.SessionsOptions{})
	} else {
		opts.Store = session.NewMemory(session.MemoryOptions{})
	}
	h := mcphttp.New(s, opts)
	b.Cleanup(func() { _ = h.Close() })
	w := testutil.NewRecorder()
	h.ServeHTTP(w, testutil.PostRequest(testutil.Initialize(0, "2025-11-25"), ""))
	sid := w.Head.Get("Mcp-Session-Id")
	if w.Status != http.StatusOK || sid == "" {
		b.Fatalf("initialize: %d %s", w.Status, w.Body.Bytes())
	}
	return benchHandler{Handler: h, rdb: rdb}, sid
}

// listenConn opens a subscriptions/listen stream on addr over a raw connection and reads up to
// its acknowledgement.
func listenConn(tb testing.TB, addr string, id int) (net.Conn, *bufio.Reader) {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	body := testutil.ModernRequest(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: %s\r\n"+
		"MCP-Protocol-Version: %s\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		addr, testutil.AcceptBoth, testutil.ModernVersion, len(body), body)
	br := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("listen %d: %v %v", id, resp, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("listen %d: %v", id, err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			return conn, br
		}
	}
}

// fanoutStreams is how many listen streams BenchmarkListenFanoutReplicas opens.
var fanoutStreams = 1000

// BenchmarkListenFanoutReplicas measures one change published on one replica reaching 1000
// listen streams spread over three replicas sharing a Redis broadcaster (real loopback HTTP
// clients): publish-ns is what Publish costs the publisher, the iteration time is until every
// client read the change.
func BenchmarkListenFanoutReplicas(b *testing.B) {
	rs := needRedis(b)
	n := fanoutStreams
	prefix := testPrefix()
	var servers []*core.Server
	var addrs []string
	for range 3 {
		r := newRouter(b, rs, prefix)
		nop := quietLogger()
		s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{Broadcaster: redisstore.NewBroadcaster(r), Logger: &nop})
		addTools(s, newProbe()) // tools, so that tools/list_changed is offered
		h := mcphttp.New(s, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: n, KeepAlive: -1}})
		srv := httptest.NewServer(h)
		b.Cleanup(func() {
			_ = h.Close()
			srv.Close()
		})
		servers = append(servers, s)
		addrs = append(addrs, srv.Listener.Addr().String())
	}
	var got sync.WaitGroup
	conns := make([]net.Conn, n)
	for i := range conns {
		conn, br := listenConn(b, addrs[i%3], i)
		conns[i] = conn
		go func() {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "data: ") && strings.Contains(line, "list_changed") {
					got.Done()
				}
			}
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var publish time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got.Add(n)
		t0 := time.Now()
		if err := servers[0].NotifyToolsListChanged(context.Background()); err != nil {
			b.Fatal(err)
		}
		publish += time.Since(t0)
		got.Wait()
	}
	b.ReportMetric(float64(publish.Nanoseconds())/float64(b.N), "publish-ns")
}
