package mcphttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
