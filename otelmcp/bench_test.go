package otelmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// observers are the three costs a benchmark compares: nothing configured, no-op providers (must
// cost the same as nothing), and the SDK with a span recorder and a manual metric reader.
func observers() []struct {
	name string
	obs  func() core.Observer
} {
	return []struct {
		name string
		obs  func() core.Observer
	}{
		{"none", func() core.Observer { return nil }},
		{"noop", func() core.Observer {
			return otelmcp.New(otelmcp.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
		}},
		{"sdk", func() core.Observer {
			return otelmcp.New(otelmcp.Options{
				TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())),
				MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
			})
		}},
	}
}

const benchCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`

// BenchmarkCoreToolCall is the path of every transport without an HTTP layer (stdio): a decoded
// tools/call served by a session.
func BenchmarkCoreToolCall(b *testing.B) {
	for _, o := range observers() {
		b.Run(o.name, func(b *testing.B) {
			s := fixture(o.obs())
			ss := transport.NewSession(s, transport.SessionOptions{Transport: transport.Pipe})
			defer ss.Close()
			init, _ := transport.Core.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
			if resp := transport.Core.Handle(ss, context.Background(), init, nil); resp == nil || resp.Error != nil {
				b.Fatal(resp)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				msg, err := transport.Core.DecodeMessage([]byte(benchCall))
				if err != nil {
					b.Fatal(err)
				}
				if resp := transport.Core.Handle(ss, ctx, msg, nil); resp == nil || resp.Error != nil {
					b.Fatal(resp)
				}
			}
		})
	}
}

// BenchmarkHTTPToolCall is a stateless tools/call through the default HTTP stack, answered as
// JSON, in process.
func BenchmarkHTTPToolCall(b *testing.B) {
	for _, o := range observers()[1:] {
		b.Run(o.name, func(b *testing.B) {
			obs := o.obs()
			h := mcphttp.New(fixture(nil), mcphttp.Options{Stateless: true, JSONResponse: true, Observer: obs})
			defer h.Close()
			b.ReportAllocs()
			for b.Loop() {
				statelessCall(b, h)
			}
		})
	}
}

// statelessCall sends benchCall, a stateless 2025-11-25 tools/call, through h in process and
// fails unless it answers 200.
func statelessCall(tb testing.TB, h http.Handler) {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(benchCall))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		tb.Fatalf("tools/call: %d %s", w.Code, w.Body)
	}
}
