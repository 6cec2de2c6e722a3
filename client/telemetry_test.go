package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// recorder is a span recorder and a manual metric reader for one client.
type recorder struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	tel    client.Telemetry
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	r.tel = client.Telemetry{TracerProvider: r.tp, MeterProvider: mp, Propagator: propagation.TraceContext{}}
	return r
}

// histogram returns the named histogram, checking the conventions' unit and buckets.
func (r *recorder) histogram(t *testing.T, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sm.Scope.Name != client.ScopeName {
				t.Errorf("%s in scope %q, want %q", name, sm.Scope.Name, client.ScopeName)
			}
			if m.Unit != "s" {
				t.Errorf("%s has unit %q, want s", name, m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
			}
			for _, dp := range h.DataPoints {
				if !slices.Equal(dp.Bounds, otelmcp.Buckets) {
					t.Errorf("%s buckets = %v, want the conventions' %v", name, dp.Bounds, otelmcp.Buckets)
				}
			}
			return h.DataPoints
		}
	}
	t.Fatalf("no metric %s was recorded", name)
	return nil
}

func setMap(s attribute.Set) map[string]string {
	m := map[string]string{}
	for it := s.Iter(); it.Next(); {
		kv := it.Attribute()
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func kvMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// peerAttrs are the transport attributes each transport of transports() reports.
func peerAttrs(t *testing.T, name string, tr client.Transport) map[string]string {
	switch name {
	case "stdio":
		return map[string]string{"network.transport": "pipe"}
	case "http":
		u, err := url.Parse(tr.(*client.HTTPTransport).URL)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"network.transport": "tcp", "network.protocol.name": "http", "server.address": u.Hostname(), "server.port": u.Port()}
	}
	return map[string]string{}
}

// TestTelemetryMetrics checks the client metrics of the MCP semantic conventions on every
// transport and lifecycle: mcp.client.operation.duration with exactly the attributes the
// conventions list for each kind of call (no ids, no URI unless asked), and
// mcp.client.session.duration at Close.
func TestTelemetryMetrics(t *testing.T) {
	for _, name := range []string{"memory", "stdio", "http"} {
		for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
			t.Run(name+"/"+lc.String(), func(t *testing.T) {
				f := newFixture(t)
				rec := newRecorder(t)
				tr := transports(t, f)[name]()
				peer := peerAttrs(t, name, tr)
				c, err := client.Connect(context.Background(), tr, client.Options{Lifecycle: lc, Telemetry: rec.tel})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if _, err := c.CallTool(ctx, "add", addIn{A: 1, B: 2}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.CallTool(ctx, "fail", nil); err != nil {
					t.Fatal(err)
				}
				_, missErr := c.CallTool(ctx, "missing", nil)
				var werr *jsonrpc.Error
				if !errors.As(missErr, &werr) {
					t.Fatalf("unknown tool: %v", missErr)
				}
				if _, err := c.GetPrompt(ctx, "greet", map[string]string{"who": "x"}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.ReadResource(ctx, "test://a"); err != nil {
					t.Fatal(err)
				}
				if _, err := c.CallTool(ctx, "block", nil, client.WithTimeout(20*time.Millisecond)); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("timed out call: %v", err)
				}
				version := c.ProtocolVersion()
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}

				base := func(method string, extra map[string]string) map[string]string {
					m := map[string]string{"mcp.method.name": method, "mcp.protocol.version": version}
					maps.Copy(m, peer)
					maps.Copy(m, extra)
					return m
				}
				tool := func(n string, extra map[string]string) map[string]string {
					m := map[string]string{"gen_ai.tool.name": n, "gen_ai.operation.name": "execute_tool"}
					maps.Copy(m, extra)
					return base("tools/call", m)
				}
				code := fmt.Sprint(werr.Code)
				want := []map[string]string{
					tool("add", nil),
					tool("fail", map[string]string{"error.type": "tool_error"}),
					tool("missing", map[string]string{"error.type": code, "rpc.response.status_code": code}),
					tool("block", map[string]string{"error.type": "timeout"}),
					base("prompts/get", map[string]string{"gen_ai.prompt.name": "greet"}),
					base("resources/read", nil), // mcp.resource.uri is opt-in
				}
				if lc == client.Legacy {
					// The handshake completes before its metric is recorded: it carries the version.
					want = append(want, base("initialize", nil))
				} else {
					want = append(want, base("server/discover", nil))
				}
				points := rec.histogram(t, otelmcp.MetricClientOperationDuration)
				var got []map[string]string
				for _, p := range points {
					got = append(got, setMap(p.Attributes))
					if p.Count == 0 || p.Sum < 0 {
						t.Errorf("data point %v: count %d, sum %v", setMap(p.Attributes), p.Count, p.Sum)
					}
				}
				for _, w := range want {
					if !slices.ContainsFunc(got, func(g map[string]string) bool { return maps.Equal(g, w) }) {
						t.Errorf("no mcp.client.operation.duration point with exactly %v\nhave %v", w, got)
					}
				}
				for _, g := range got {
					for _, k := range []string{"mcp.session.id", "jsonrpc.request.id", "mcp.resource.uri"} {
						if _, ok := g[k]; ok {
							t.Errorf("operation metric carries %s: %v", k, g)
						}
					}
				}

				sessions := rec.histogram(t, "mcp.client.session.duration")
				wantSession := map[string]string{"mcp.protocol.version": version}
				maps.Copy(wantSession, peer)
				if len(sessions) != 1 || !maps.Equal(setMap(sessions[0].Attributes), wantSession) || sessions[0].Count != 1 {
					var have []map[string]string
					for _, p := range sessions {
						have = append(have, setMap(p.Attributes))
					}
					t.Errorf("mcp.client.session.duration = %v, want one point with %v", have, wantSession)
				}
			})
		}
	}
}

// TestTelemetryResourceURIOptIn: the URI goes into span names and metrics only when asked.
func TestTelemetryResourceURIOptIn(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		f := newFixture(t)
		rec := newRecorder(t)
		rec.tel.ResourceURIInSpanName, rec.tel.ResourceURIOnMetrics = optIn, optIn
		c, err := client.Connect(context.Background(), &client.InMemoryTransport{Server: f.server}, client.Options{Lifecycle: client.Legacy, Telemetry: rec.tel})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadResource(context.Background(), "test://a"); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		wantName := "resources/read"
		if optIn {
			wantName += " test://a"
		}
		var span sdktrace.ReadOnlySpan
		for _, s := range rec.spans.Ended() {
			if strings.HasPrefix(s.Name(), "resources/read") {
				span = s
			}
		}
		if span == nil || span.Name() != wantName {
			t.Fatalf("opt-in %v: span %v, want %q", optIn, span, wantName)
		}
		if got := kvMap(span.Attributes())["mcp.resource.uri"]; got != "test://a" {
			t.Errorf("span mcp.resource.uri = %q (it is always on spans)", got)
		}
		for _, p := range rec.histogram(t, otelmcp.MetricClientOperationDuration) {
			a := setMap(p.Attributes)
			if a["mcp.method.name"] != "resources/read" {
				continue
			}
			if _, has := a["mcp.resource.uri"]; has != optIn {
				t.Errorf("opt-in %v: metric attributes %v", optIn, a)
			}
		}
	}
}

// TestTelemetrySpans: one CLIENT span per call with the conventions' attributes, its trace
// context in the request's _meta (unless the caller put a traceparent there), the session id on
// legacy HTTP sessions only, and an Error status with error.type for failures.
func TestTelemetrySpans(t *testing.T) {
	for _, name := range []string{"memory", "http"} {
		for _, lc := range []client.Lifecycle{client.Legacy, client.Modern} {
			t.Run(name+"/"+lc.String(), func(t *testing.T) {
				rec := newRecorder(t)
				f := newFixture(t)
				parents := make(chan string, 4)
				f.server.AddTool(&core.Tool{Name: "trace", Description: "Reads the trace context.", InputSchema: json.RawMessage(`{"type":"object"}`)},
					func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
						parents <- string(req.Meta("traceparent"))
						return core.TextResult("ok"), nil
					})
				tr := transports(t, f)[name]()
				c, err := client.Connect(context.Background(), tr, client.Options{Lifecycle: lc, Telemetry: rec.tel})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, root := rec.tp.Tracer("test").Start(context.Background(), "root")
				if _, err := c.CallTool(ctx, "trace", nil); err != nil {
					t.Fatal(err)
				}
				injected := await(t, parents, "the tool to run")
				// A traceparent of the caller's own is kept as it is.
				const mine = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
				if _, err := c.CallTool(ctx, "trace", nil, client.WithMeta(core.Meta{"traceparent": mine})); err != nil {
					t.Fatal(err)
				}
				if got := await(t, parents, "the tool to run"); !strings.Contains(got, mine) {
					t.Errorf("the caller's traceparent was replaced: %s", got)
				}
				_, _ = c.CallTool(ctx, "missing", nil)
				if _, err := c.CallTool(ctx, "fail", nil); err != nil {
					t.Fatal(err)
				}
				root.End()

				var calls []sdktrace.ReadOnlySpan
				var failed, toolErr sdktrace.ReadOnlySpan
				for _, s := range rec.spans.Ended() {
					switch s.Name() {
					case "tools/call trace":
						calls = append(calls, s)
					case "tools/call missing":
						failed = s
					case "tools/call fail":
						toolErr = s
					}
				}
				if len(calls) != 2 || failed == nil || toolErr == nil {
					var names []string
					for _, s := range rec.spans.Ended() {
						names = append(names, s.Name())
					}
					t.Fatalf("spans: %q", names)
				}
				call := calls[0]
				if call.SpanKind().String() != "client" || call.Parent().SpanID() != root.SpanContext().SpanID() {
					t.Errorf("span kind %s, parent %v", call.SpanKind(), call.Parent())
				}
				want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "trace", "gen_ai.operation.name": "execute_tool",
					"mcp.protocol.version": c.ProtocolVersion()}
				maps.Copy(want, peerAttrs(t, name, tr))
				got := kvMap(call.Attributes())
				for k, v := range want {
					if got[k] != v {
						t.Errorf("span %s = %q, want %q (all: %v)", k, got[k], v, got)
					}
				}
				if got["jsonrpc.request.id"] == "" {
					t.Errorf("span without jsonrpc.request.id: %v", got)
				}
				if sid, legacyHTTP := got["mcp.session.id"], name == "http" && lc == client.Legacy; (sid != "") != legacyHTTP || (legacyHTTP && sid != c.SessionID()) {
					t.Errorf("mcp.session.id = %q on %s/%s (session %q)", sid, name, lc, c.SessionID())
				}
				wantParent := `"00-` + call.SpanContext().TraceID().String() + "-" + call.SpanContext().SpanID().String() + `-01"` // raw JSON
				if injected != wantParent {
					t.Errorf("traceparent at the server = %q, want the client span's %q", injected, wantParent)
				}
				fa := kvMap(failed.Attributes())
				if failed.Status().Code != codes.Error || fa["error.type"] == "" || fa["rpc.response.status_code"] != fa["error.type"] {
					t.Errorf("failed call: status %v, attributes %v", failed.Status(), fa)
				}
				if ta := kvMap(toolErr.Attributes()); toolErr.Status().Code != codes.Error || ta["error.type"] != "tool_error" {
					t.Errorf("tool error: status %v, attributes %v", toolErr.Status(), ta)
				}
			})
		}
	}
}
