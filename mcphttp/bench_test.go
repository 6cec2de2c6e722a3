package mcphttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// BenchmarkToolsCall measures one tools/call POST on an initialized session through the whole
// default stack (recover, tracing with the global no-op provider, origin guard, Accept check,
// decode, version check, session validator, endpoint, core dispatch), in JSON and SSE mode.
//
//   - loopback: a real HTTP/1.1 exchange over 127.0.0.1 with keep-alive (client and server
//     costs both counted);
//   - inprocess: the handler called directly with a reusable ResponseWriter that supports Flush
//     (server-side cost only).
func BenchmarkToolsCall(b *testing.B) {
	body := testutil.CallTool(1, "echo", map[string]any{"text": "hi"}, nil)
	for _, mode := range []struct {
		name string
		opts mcphttp.Options
	}{
		{"json", mcphttp.Options{JSONResponse: true}},
		{"sse", mcphttp.Options{}},
	} {
		b.Run(mode.name+"/loopback", func(b *testing.B) {
			h := mcphttp.New(newServer(newTools()), mode.opts)
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.Close()
			c := testutil.NewClient(srv.URL, srv.Client())
			c.Initialize(b)
			if rep := c.Post(b, body); rep.Status != http.StatusOK || !bytes.Contains(rep.Body, []byte(`"hi"`)) {
				b.Fatalf("tools/call: %d %s", rep.Status, rep.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := c.HTTP.Do(c.NewPost(b.Context(), body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
		b.Run(mode.name+"/inprocess", func(b *testing.B) {
			h := mcphttp.New(newServer(newTools()), mode.opts)
			defer h.Close()
			// Initialize through the handler itself.
			w := testutil.NewRecorder()
			h.ServeHTTP(w, testutil.PostRequest(testutil.Initialize(0, "2025-11-25"), ""))
			sid := w.Head.Get("Mcp-Session-Id")
			if w.Status != http.StatusOK || sid == "" {
				b.Fatalf("initialize: %d %s", w.Status, w.Body.Bytes())
			}
			req := testutil.PostRequest(body, sid)
			w.Reset()
			h.ServeHTTP(w, req)
			if w.Status != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"hi"`)) {
				b.Fatalf("tools/call: %d %s", w.Status, w.Body.Bytes())
			}
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

// BenchmarkModernToolsCall measures one 2026-07-28 tools/call (envelope in _meta, mirror headers,
// no session) through the whole default stack: recover, tracing with the global no-op provider,
// origin guard, Accept check, decode, era router, mirror-header checks, the modern handler and
// core dispatch on an ephemeral session. The answer is one JSON object.
func BenchmarkModernToolsCall(b *testing.B) {
	body := testutil.ModernRequest(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	b.Run("inprocess", func(b *testing.B) {
		h := mcphttp.New(newServer(newTools()), mcphttp.Options{})
		defer h.Close()
		c := testutil.NewClient("http://127.0.0.1/mcp", nil)
		req := c.NewModernPost(context.Background(), body)
		req.RemoteAddr = "127.0.0.1:1234"
		rd := strings.NewReader(body)
		req.Body = io.NopCloser(rd)
		w := testutil.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Status != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"hi"`)) || w.Head.Get("Content-Type") != "application/json" {
			b.Fatalf("tools/call: %d %s", w.Status, w.Body.Bytes())
		}
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
	b.Run("loopback", func(b *testing.B) {
		h := mcphttp.New(newServer(newTools()), mcphttp.Options{})
		srv := httptest.NewServer(h)
		defer srv.Close()
		defer h.Close()
		c := testutil.NewClient(srv.URL, srv.Client())
		if rep := c.PostModern(b, body); rep.Status != http.StatusOK || !bytes.Contains(rep.Body, []byte(`"hi"`)) {
			b.Fatalf("tools/call: %d %s", rep.Status, rep.Body)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			resp, err := c.HTTP.Do(c.NewModernPost(b.Context(), body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

// rawListen opens a listen stream on a raw loopback connection and reads up to the end of the
// acknowledgement frame. It returns the connection and the reader positioned after it.
func rawListen(tb testing.TB, addr string, id int) (net.Conn, *bufio.Reader) {
	tb.Helper()
	conn, br, err := dialListen(addr, id)
	if err != nil {
		tb.Fatal(err)
	}
	return conn, br
}

// dialListen is rawListen returning its error (for goroutines other than the test's).
func dialListen(addr string, id int) (net.Conn, *bufio.Reader, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	body := testutil.ModernRequest(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: %s\r\n"+
		"MCP-Protocol-Version: %s\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s",
		addr, testutil.AcceptBoth, testutil.ModernVersion, len(body), body)
	br := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("listen %d: %w", id, err)
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, nil, fmt.Errorf("listen %d: status %d", id, resp.StatusCode)
	}
	// The body is chunked: read lines until the acknowledgement's data line.
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("listen %d: %w", id, err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			return conn, br, nil
		}
	}
}

// heapAndStacks returns the bytes of heap objects in use and of goroutine stacks, after a
// garbage collection (which also shrinks the stacks that can be shrunk).
func heapAndStacks() (heap, stacks uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// benchListen is the listen configuration of the listen benchmarks: n streams from one caller
// (loopback), so the per-caller cap is off.
func benchListen(n int, keepAlive time.Duration) mcphttp.Options {
	return mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: n, MaxStreamsPerCaller: -1, KeepAlive: keepAlive}}
}

// bareStream is the reference for "the connection": a bare net/http handler that answers any
// POST with an event stream, writes one frame naming the acknowledgement, and waits for the
// client to go away. What an idle listen stream costs beyond it is the kit's.
func bareStream(w http.ResponseWriter, r *http.Request, wait func()) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "data: {\"method\":\"notifications/subscriptions/acknowledged\"}\n\n")
	_ = http.NewResponseController(w).Flush()
	wait()
}

// idleStreams opens n listen streams on addr and reports their cost per stream: heap and stack
// growth and goroutines. open is how many streams the server says are open.
func idleStreams(b *testing.B, addr string, n int, open func() int) (conns []net.Conn) {
	// Warm up: one stream opened and closed, so lazily built state is not counted.
	conn, _ := rawListen(b, addr, -1)
	conn.Close()
	heap0, stack0 := heapAndStacks()
	g0 := runtime.NumGoroutine()
	conns = make([]net.Conn, n)
	for i := range conns {
		conns[i], _ = rawListen(b, addr, i)
	}
	heap1, stack1 := heapAndStacks()
	g1 := runtime.NumGoroutine()
	if l := open(); l != n {
		b.Fatalf("%d streams open", l)
	}
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(n), "heapB/stream")
	b.ReportMetric(float64(int64(stack1)-int64(stack0))/float64(n), "stackB/stream")
	b.ReportMetric(float64(int64(heap1+stack1)-int64(heap0+stack0))/float64(n), "B/stream")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/stream")
	return conns
}

// BenchmarkListenIdleMemory reports what one idle subscriptions/listen stream costs: the growth
// of the heap and of goroutine stacks (and the number of goroutines) per stream while 1000
// streams are open over loopback. The clients are raw connections with a 1 KiB read buffer, so
// nearly all of it is the server's side: net/http's connection state and buffers, the request,
// the handler goroutine and its background reader, and the kit's stream state. "bare" is the
// same over a bare net/http streaming handler (the connection alone); "kit" and "kit-keepalive"
// (the default 15 s keepalive armed) minus "bare" is what the kit adds per stream.
func BenchmarkListenIdleMemory(b *testing.B) {
	const n = 1000
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			var open sync.WaitGroup
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				open.Add(1)
				defer open.Done()
				bareStream(w, r, func() { <-r.Context().Done() })
			}))
			conns := idleStreams(b, srv.Listener.Addr().String(), n, func() int { return n })
			for _, c := range conns {
				c.Close()
			}
			srv.Close()
		}
	})
	for _, mode := range []struct {
		name      string
		keepAlive time.Duration
	}{{"kit", -1}, {"kit-keepalive", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				h := mcphttp.New(newServer(newTools()), benchListen(n, mode.keepAlive))
				srv := httptest.NewServer(h)
				conns := idleStreams(b, srv.Listener.Addr().String(), n, h.Listeners().Len)
				for _, c := range conns {
					c.Close()
				}
				h.Close()
				srv.Close()
			}
		})
	}
}

// fanoutClients reads every stream of conns on its own goroutine and calls got.Done for each
// frame that carries a list change. The reader allocates nothing per frame, so the figure is
// the server's rather than the harness's.
func fanoutClients(conns []net.Conn, readers []*bufio.Reader, got *sync.WaitGroup) {
	marker := []byte("list_changed")
	for _, br := range readers {
		go func() {
			for {
				line, err := br.ReadSlice('\n')
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
					return
				}
				if bytes.HasPrefix(line, []byte("data: ")) && bytes.Contains(line, marker) {
					got.Done()
				}
			}
		}()
	}
}

// measureFanout publishes b.N changes, one at a time, each awaited until all n clients read it:
// ns/op is from publish to the last client's read; publish-ns is what publish itself took;
// cpu-ns is the CPU time the process spent per change, server and clients together (on a
// machine shared with other work it is steadier than the wall time).
func measureFanout(b *testing.B, n int, got *sync.WaitGroup, publish func()) {
	var took time.Duration
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		got.Add(n)
		t0 := time.Now()
		publish()
		took += time.Since(t0)
		got.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "publish-ns")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns")
}

// openStreams opens n listen streams on addr and starts their readers.
func openStreams(b *testing.B, addr string, n int, got *sync.WaitGroup) []net.Conn {
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	for i := range conns {
		conns[i], readers[i] = rawListen(b, addr, i)
	}
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	fanoutClients(conns, readers, got)
	return conns
}

// BenchmarkListenFanout measures one change published to 1000 open listen streams over loopback:
// the time from publish until every stream's client has read the frame (ns/op), and the time
// publish itself takes (publish-ns, which never waits on a client). "bare" is the floor of this
// machine: bare net/http handlers, woken together by one closed channel, each writing the same
// pre-encoded frame and flushing it; "kit" is Server.NotifyToolsListChanged through the default
// stack.
func BenchmarkListenFanout(b *testing.B) {
	const n = 1000
	b.Run("bare", func(b *testing.B) {
		var mu sync.Mutex
		next := make(chan struct{})
		frame := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{}}\n\n")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			mu.Lock()
			wait := next
			mu.Unlock()
			bareStream(w, r, func() {
				for {
					select {
					case <-wait:
					case <-r.Context().Done():
						return
					}
					mu.Lock()
					wait = next
					mu.Unlock()
					_, _ = w.Write(frame)
					_ = rc.Flush()
				}
			})
		}))
		b.Cleanup(srv.Close) // after the streams' clients are gone (cleanups run last first)
		var got sync.WaitGroup
		openStreams(b, srv.Listener.Addr().String(), n, &got)
		measureFanout(b, n, &got, func() {
			mu.Lock()
			close(next)
			next = make(chan struct{})
			mu.Unlock()
		})
	})
	b.Run("kit", func(b *testing.B) {
		s := newServer(newTools())
		h := mcphttp.New(s, benchListen(n, -1))
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		b.Cleanup(func() { _ = h.Close() })
		var got sync.WaitGroup
		openStreams(b, srv.Listener.Addr().String(), n, &got)
		measureFanout(b, n, &got, func() { s.NotifyToolsListChanged(context.Background()) })
	})
}

// BenchmarkSessionMemory reports what one idle legacy session costs the server: n sessions are
// opened through the default stack in process (initialize, then notifications/initialized), and
// the live heap growth is divided by n. The session's clientInfo and capabilities are the small
// ones a typical client sends.
func BenchmarkSessionMemory(b *testing.B) {
	const n = 5000
	for b.Loop() {
		h := mcphttp.New(newServer(newTools()), mcphttp.Options{JSONResponse: true, MaxSessionsPerCaller: -1})
		initialize := testutil.Initialize(0, "2025-11-25")
		initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		open := func() string {
			w := testutil.NewRecorder()
			h.ServeHTTP(w, testutil.PostRequest(initialize, ""))
			sid := w.Head.Get("Mcp-Session-Id")
			if w.Status != http.StatusOK || sid == "" {
				b.Fatalf("initialize: %d %s", w.Status, w.Body.Bytes())
			}
			w.Reset()
			h.ServeHTTP(w, testutil.PostRequest(initialized, sid))
			if w.Status != http.StatusAccepted {
				b.Fatalf("notifications/initialized: %d %s", w.Status, w.Body.Bytes())
			}
			return sid
		}
		open() // lazily built state is not counted
		ids := make([]string, n)
		heap0, _ := heapAndStacks()
		for i := range ids {
			ids[i] = open()
		}
		heap1, _ := heapAndStacks()
		// The ids are the client's; what they take is not the server's.
		idBytes := 0
		for _, id := range ids {
			idBytes += len(id)
		}
		b.ReportMetric(float64(int64(heap1)-int64(heap0)-int64(idBytes))/n, "B/session")
		runtime.KeepAlive(ids)
		h.Close()
	}
}
