package middleware_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// BenchmarkLayers measures the layers of the default stack alone, in the default order, around a
// handler that answers at once with a fixed JSON body: what the layers cost a tools/call of each
// lifecycle (the legacy one as a stateless endpoint serves it), without core. The request and the
// response writer are reused; the harness allocates the body reader's NopCloser only.
func BenchmarkLayers(b *testing.B) {
	type echoIn struct {
		Text string `json:"text"`
	}
	s := core.NewServer(core.Implementation{Name: "bench", Version: "1"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "echo"}, func(_ context.Context, _ *core.ToolRequest, in echoIn) (*core.CallToolResult, echoIn, error) {
		return nil, in, nil
	})
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	final := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := middleware.MessageFrom(r.Context()); !ok {
			http.Error(w, "undecoded", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(answer)
	})
	modern := middleware.MirrorHeaders(middleware.MirrorHeadersOptions{Server: s})(middleware.SSE(middleware.SSEOptions{KeepAlive: -1})(final))
	legacy := middleware.ProtocolVersion(middleware.ProtocolVersionOptions{Stateless: true})(middleware.SSE(middleware.SSEOptions{})(final))
	h := middleware.EraRouter(middleware.EraRouterOptions{Modern: modern})(legacy)
	h = middleware.Decode(middleware.DecodeOptions{})(h)
	h = middleware.MethodAccept(middleware.MethodAcceptOptions{Stateless: true})(h)
	h = middleware.OriginGuard(middleware.OriginGuardOptions{})(h)
	h = middleware.Tracing(middleware.TracingOptions{Observer: otelmcp.New(otelmcp.Options{})})(h)
	h = middleware.Recover(middleware.RecoverOptions{})(h)

	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
	}{
		{"stateless", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`,
			map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{"modern", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rd := strings.NewReader(tc.body)
			w := &benchWriter{h: http.Header{}}
			serve := func() {
				clear(w.h)
				w.status = 0
				rd.Reset(tc.body)
				req.Body = io.NopCloser(rd)
				req.ContentLength = int64(len(tc.body))
				h.ServeHTTP(w, req)
			}
			serve()
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

// benchWriter is a reusable ResponseWriter that keeps nothing of the body and, like net/http's,
// flushes and sets deadlines (the decode layer bounds the body's read with one).
type benchWriter struct {
	h      http.Header
	status int
}

func (w *benchWriter) Header() http.Header { return w.h }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

func (w *benchWriter) Flush() { w.WriteHeader(http.StatusOK) }

func (w *benchWriter) SetReadDeadline(time.Time) error { return nil }

func (w *benchWriter) SetWriteDeadline(time.Time) error { return nil }
