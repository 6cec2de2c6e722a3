package mcphttp_test

import (
	"bufio"
	"bytes"
	"context"
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
			w := &flushWriter{h: http.Header{}}
			h.ServeHTTP(w, newBenchRequest(testutil.Initialize(0, "2025-11-25"), ""))
			sid := w.h.Get("Mcp-Session-Id")
			if w.status != http.StatusOK || sid == "" {
				b.Fatalf("initialize: %d %s", w.status, w.buf.Bytes())
			}
			req := newBenchRequest(body, sid)
			w.reset()
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK || !bytes.Contains(w.buf.Bytes(), []byte(`"hi"`)) {
				b.Fatalf("tools/call: %d %s", w.status, w.buf.Bytes())
			}
			rd := strings.NewReader(body)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w.reset()
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d: %s", w.status, w.buf.Bytes())
				}
			}
		})
	}
}

func newBenchRequest(body, sid string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", testutil.AcceptBoth)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return req
}

// flushWriter is a reusable in-memory ResponseWriter that supports Flush and write deadlines.
type flushWriter struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (w *flushWriter) Header() http.Header { return w.h }

func (w *flushWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *flushWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(p)
}

func (w *flushWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
}

// SetWriteDeadline accepts deadlines, as net/http's own ResponseWriter does, so the SSE writer
// takes the same path as on a real connection.
func (w *flushWriter) SetWriteDeadline(time.Time) error { return nil }

func (w *flushWriter) reset() {
	clear(w.h)
	w.status = 0
	w.buf.Reset()
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
		w := &flushWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK || !bytes.Contains(w.buf.Bytes(), []byte(`"hi"`)) || w.h.Get("Content-Type") != "application/json" {
			b.Fatalf("tools/call: %d %s", w.status, w.buf.Bytes())
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			w.reset()
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("status %d: %s", w.status, w.buf.Bytes())
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
	// The body is chunked: read lines until the acknowledgement's data line.
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

// heapAndStacks returns the bytes of heap objects in use and of goroutine stacks, after a
// garbage collection.
func heapAndStacks() (heap, stacks uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// BenchmarkListenIdleMemory reports what one idle subscriptions/listen stream costs: the growth
// of the heap and of goroutine stacks (and the number of goroutines) per stream while N streams
// are open over loopback. The clients are raw connections with a 1 KiB read buffer, so nearly
// all of it is the server's side: net/http's connection state and buffers, the request, the
// handler goroutine and its background reader, and the kit's stream state.
func BenchmarkListenIdleMemory(b *testing.B) {
	const n = 1000
	for b.Loop() {
		h := mcphttp.New(newServer(newTools()), mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: n, KeepAlive: -1}})
		srv := httptest.NewServer(h)
		addr := srv.Listener.Addr().String()
		// Warm up: one stream opened and closed, so lazily built state is not counted.
		conn, _ := rawListen(b, addr, -1)
		conn.Close()
		heap0, stack0 := heapAndStacks()
		g0 := runtime.NumGoroutine()
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i], _ = rawListen(b, addr, i)
		}
		heap1, stack1 := heapAndStacks()
		g1 := runtime.NumGoroutine()
		if l := h.Listeners().Len(); l != n {
			b.Fatalf("%d streams open", l)
		}
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/n, "heapB/stream")
		b.ReportMetric(float64(int64(stack1)-int64(stack0))/n, "stackB/stream")
		b.ReportMetric(float64(g1-g0)/n, "goroutines/stream")
		for _, c := range conns {
			c.Close()
		}
		h.Close()
		srv.Close()
	}
}

// BenchmarkListenFanout measures one change published to 1000 open listen streams over loopback:
// the time from Publish until every stream's client has read the frame (ns/op), and the time
// Publish itself takes (publish-ns, which never waits on a client).
func BenchmarkListenFanout(b *testing.B) {
	const n = 1000
	s := newServer(newTools())
	h := mcphttp.New(s, mcphttp.Options{Listen: mcphttp.ListenersOptions{MaxStreams: n, KeepAlive: -1}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	addr := srv.Listener.Addr().String()
	var got sync.WaitGroup
	conns := make([]net.Conn, n)
	for i := range conns {
		conn, br := rawListen(b, addr, i)
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
		s.NotifyToolsListChanged(context.Background())
		publish += time.Since(t0)
		got.Wait()
	}
	b.ReportMetric(float64(publish.Nanoseconds())/float64(b.N), "publish-ns")
}
