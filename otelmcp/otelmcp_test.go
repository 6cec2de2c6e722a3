package otelmcp_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/stdio"
)

// telemetry is an in-memory span recorder and a manual metric reader behind one observer.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	obs    *otelmcp.Observer
}

func newTelemetry(t *testing.T, opts otelmcp.Options) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	if opts.Propagator == nil {
		opts.Propagator = propagation.TraceContext{}
	}
	tel.obs = otelmcp.New(opts)
	return tel
}

// span returns the one ended span with this name, failing the test when there is not exactly one.
func (tel *telemetry) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range tel.spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("%d spans named %q; ended spans: %q", len(found), name, names)
	}
	return found[0]
}

// histogram returns the data points of the named histogram.
func (tel *telemetry) histogram(t *testing.T, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("%s has unit %q, want s", name, m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
			}
			return h.DataPoints
		}
	}
	return nil
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// wantAttrs checks that got has every key of want with its value ("*" means any value), and
// none of the keys in absent.
func wantAttrs(t *testing.T, what string, got map[string]string, want map[string]string, absent ...string) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: attribute %s missing (have %v)", what, k, got)
		case v != "*" && g != v:
			t.Errorf("%s: %s = %q, want %q", what, k, g, v)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("%s: attribute %s = %q must not be there", what, k, v)
		}
	}
}

type greetIn struct {
	Name string `json:"name"`
}

// fixture is a server with a tool, a failing tool, a sampling tool, a prompt and a resource,
// observed by obs.
func fixture(obs core.Observer) *core.Server {
	s := core.NewServer(core.Implementation{Name: "observed", Version: "1"}, core.Options{Observer: obs})
	core.AddTool(s, &core.Tool{Name: "greet"}, func(_ context.Context, _ *core.ToolRequest, in greetIn) (*core.CallToolResult, any, error) {
		return core.TextResult("Hello, " + in.Name), nil, nil
	})
	core.AddTool(s, &core.Tool{Name: "fail"}, func(context.Context, *core.ToolRequest, struct{}) (*core.CallToolResult, any, error) {
		return nil, nil, errors.New("the disk is full")
	})
	core.AddTool(s, &core.Tool{Name: "sample"}, func(ctx context.Context, req *core.ToolRequest, _ struct{}) (*core.CallToolResult, any, error) {
		res, err := req.CreateMessage(ctx, &core.CreateMessageParams{MaxTokens: 10,
			Messages: []core.SamplingMessage{{Role: "user", Content: core.ContentList{core.Text("hi")}}}})
		if err != nil {
			return nil, nil, err
		}
		return core.TextResult(res.Model), nil, nil
	})
	s.AddPrompt(&core.Prompt{Name: "hello"}, func(context.Context, *core.PromptRequest) (*core.GetPromptResult, error) {
		return &core.GetPromptResult{Messages: []core.PromptMessage{{Role: "user", Content: core.Text("hello")}}}, nil
	})
	s.AddResource(&core.Resource{URI: "file:///a.txt", Name: "a"}, func(context.Context, *core.ResourceRequest) (*core.ReadResourceResult, error) {
		return &core.ReadResourceResult{Contents: []core.ResourceContents{{URI: "file:///a.txt", Text: "a"}}}, nil
	})
	return s
}

var sampling = func(context.Context, *core.CreateMessageParams) (*core.CreateMessageResult, error) {
	return &core.CreateMessageResult{Role: "assistant", Content: core.ContentList{core.Text("ok")}, Model: "m1"}, nil
}

// transportCase connects a client of the lifecycle to the fixture over one transport; the
// returned function closes the client and waits until the server side is over.
type transportCase struct {
	name string
	// network attributes every span and operation metric must carry.
	network map[string]string
	connect func(t *testing.T, obs core.Observer, lc client.Lifecycle) (*client.Client, func())
}

var transports = []transportCase{
	{
		name:    "http",
		network: map[string]string{"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1"},
		connect: func(t *testing.T, obs core.Observer, lc client.Lifecycle) (*client.Client, func()) {
			h := mcphttp.New(fixture(obs), mcphttp.Options{})
			srv := httptest.NewServer(h)
			c, err := client.Connect(context.Background(), &client.HTTPTransport{URL: srv.URL, DisableStandaloneStream: true},
				client.Options{Lifecycle: lc, Sampling: sampling})
			if err != nil {
				t.Fatal(err)
			}
			return c, func() {
				_ = c.Close() // a legacy session is deleted: it ends on the server
				srv.Close()
				_ = h.Close()
			}
		},
	},
	{
		name:    "stdio",
		network: map[string]string{"network.transport": "pipe"},
		connect: func(t *testing.T, obs core.Observer, lc client.Lifecycle) (*client.Client, func()) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- stdio.Serve(context.Background(), fixture(obs), stdio.Options{In: inR, Out: outW})
				_ = outW.Close()
			}()
			c, err := client.Connect(context.Background(), &client.IOTransport{Reader: outR, Writer: inW},
				client.Options{Lifecycle: lc, Sampling: sampling})
			if err != nil {
				t.Fatal(err)
			}
			return c, func() {
				_ = c.Close() // closes the server's input: the process session ends
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}
		},
	},
}

func TestLegacyOperations(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t, otelmcp.Options{})
			c, closeAll := tc.connect(t, tel.obs, client.Legacy)
			ctx := context.Background()
			if _, err := c.CallTool(ctx, "greet", map[string]any{"name": "Ada"}); err != nil {
				t.Fatal(err)
			}
			if res, err := c.CallTool(ctx, "fail", map[string]any{}); err != nil || !res.IsError {
				t.Fatalf("fail: %v, %+v", err, res)
			}
			if _, err := c.CallTool(ctx, "nope", map[string]any{}); err == nil {
				t.Fatal("an unknown tool succeeded")
			}
			if _, err := c.GetPrompt(ctx, "hello", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ReadResource(ctx, "file:///a.txt"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(ctx, "sample", map[string]any{}); err != nil {
				t.Fatal(err)
			}
			closeAll()

			session := "*"
			absentOnAll := []string{}
			if tc.name == "stdio" {
				absentOnAll = append(absentOnAll, "mcp.session.id", "network.protocol.name")
			}
			common := func(method string) map[string]string {
				m := map[string]string{"mcp.method.name": method, "mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "*"}
				if tc.name == "http" {
					m["mcp.session.id"] = session
				}
				for k, v := range tc.network {
					m[k] = v
				}
				return m
			}

			init := tel.span(t, "initialize")
			if init.SpanKind() != trace.SpanKindServer {
				t.Errorf("initialize is a %v span", init.SpanKind())
			}
			wantAttrs(t, "initialize", attrs(init.Attributes()), common("initialize"), absentOnAll...)

			greet := tel.span(t, "tools/call greet")
			want := common("tools/call")
			want["gen_ai.tool.name"], want["gen_ai.operation.name"] = "greet", "execute_tool"
			wantAttrs(t, "greet", attrs(greet.Attributes()), want, append([]string{"error.type", "gen_ai.tool.call.arguments"}, absentOnAll...)...)
			if greet.Status().Code != codes.Unset || greet.SpanKind() != trace.SpanKindServer {
				t.Errorf("greet: status %v, kind %v", greet.Status(), greet.SpanKind())
			}

			fail := tel.span(t, "tools/call fail")
			wantAttrs(t, "fail", attrs(fail.Attributes()), map[string]string{"error.type": "tool_error"}, "rpc.response.status_code")
			if fail.Status().Code != codes.Error {
				t.Errorf("a tool error has status %v", fail.Status())
			}

			nope := tel.span(t, "tools/call nope")
			wantAttrs(t, "unknown tool", attrs(nope.Attributes()), map[string]string{"error.type": "-32602", "rpc.response.status_code": "-32602"})
			if nope.Status().Code != codes.Error || nope.Status().Description == "" {
				t.Errorf("a protocol error has status %+v, want Error with the JSON-RPC message", nope.Status())
			}

			prompt := tel.span(t, "prompts/get hello")
			want = common("prompts/get")
			want["gen_ai.prompt.name"] = "hello"
			wantAttrs(t, "prompt", attrs(prompt.Attributes()), want, absentOnAll...)

			read := tel.span(t, "resources/read")
			want = common("resources/read")
			want["mcp.resource.uri"] = "file:///a.txt"
			wantAttrs(t, "resource", attrs(read.Attributes()), want, absentOnAll...)

			// The sampling request the tool sent is a CLIENT span inside the tool's span.
			sample := tel.span(t, "tools/call sample")
			create := tel.span(t, "sampling/createMessage")
			if create.SpanKind() != trace.SpanKindClient {
				t.Errorf("sampling/createMessage is a %v span, want client", create.SpanKind())
			}
			if create.Parent().SpanID() != sample.SpanContext().SpanID() {
				t.Error("the sampling span is not a child of the tool call's span")
			}
			wantAttrs(t, "sampling", attrs(create.Attributes()), map[string]string{"mcp.method.name": "sampling/createMessage", "jsonrpc.request.id": "*"})

			// Metrics: one series per method and outcome, with the conventions' buckets and
			// nothing of high cardinality.
			points := tel.histogram(t, otelmcp.MetricServerOperationDuration)
			if len(points) == 0 {
				t.Fatal("no mcp.server.operation.duration")
			}
			var sawGreet, sawToolError, sawProtocolError bool
			for _, p := range points {
				if !slices.Equal(p.Bounds, otelmcp.Buckets) {
					t.Errorf("bounds %v, want %v", p.Bounds, otelmcp.Buckets)
				}
				a := attrs(p.Attributes.ToSlice())
				wantAttrs(t, "metric", a, tc.network, "jsonrpc.request.id", "mcp.session.id", "mcp.resource.uri")
				switch {
				case a["gen_ai.tool.name"] == "greet" && a["error.type"] == "":
					sawGreet = p.Count == 1
				case a["gen_ai.tool.name"] == "fail" && a["error.type"] == "tool_error":
					sawToolError = true
				case a["gen_ai.tool.name"] == "nope" && a["rpc.response.status_code"] == "-32602":
					sawProtocolError = true
				}
			}
			if !sawGreet || !sawToolError || !sawProtocolError {
				t.Errorf("operation series: greet %v, tool error %v, protocol error %v", sawGreet, sawToolError, sawProtocolError)
			}
			if cp := tel.histogram(t, otelmcp.MetricClientOperationDuration); len(cp) != 1 || attrs(cp[0].Attributes.ToSlice())["mcp.method.name"] != "sampling/createMessage" {
				t.Errorf("mcp.client.operation.duration: %+v", cp)
			}

			// The session opened by initialize ended with the client.
			sessions := tel.histogram(t, otelmcp.MetricServerSessionDuration)
			if len(sessions) != 1 || sessions[0].Count != 1 || !slices.Equal(sessions[0].Bounds, otelmcp.Buckets) {
				t.Fatalf("mcp.server.session.duration: %+v", sessions)
			}
			wantAttrs(t, "session metric", attrs(sessions[0].Attributes.ToSlice()), map[string]string{"mcp.protocol.version": "2025-11-25"}, "mcp.session.id")
		})
	}
}

func TestModernOperations(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t, otelmcp.Options{RecordContent: true})
			c, closeAll := tc.connect(t, tel.obs, client.Modern)
			if _, err := c.CallTool(context.Background(), "greet", map[string]any{"name": "Ada"}); err != nil {
				t.Fatal(err)
			}
			closeAll()
			greet := tel.span(t, "tools/call greet")
			want := map[string]string{"mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28",
				"gen_ai.tool.name": "greet", "gen_ai.tool.call.arguments": `{"name":"Ada"}`, "gen_ai.tool.call.result": "*"}
			for k, v := range tc.network {
				want[k] = v
			}
			wantAttrs(t, "modern greet", attrs(greet.Attributes()), want, "mcp.session.id")
			if s := tel.histogram(t, otelmcp.MetricServerSessionDuration); len(s) != 0 && tc.name == "http" {
				t.Errorf("a 2026-07-28 request opened a session: %+v", s)
			}
		})
	}
}

// TestParentFromMeta: the trace context in params._meta is the parent; the HTTP request's is
// linked.
func TestParentFromMeta(t *testing.T) {
	tel := newTelemetry(t, otelmcp.Options{})
	h := mcphttp.New(fixture(tel.obs), mcphttp.Options{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	const metaParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const headerParent = "00-11111111111111111111111111111111-2222222222222222-01"
	tr := &client.HTTPTransport{URL: srv.URL, DisableStandaloneStream: true, Header: map[string][]string{"Traceparent": {headerParent}}}
	c, err := client.Connect(context.Background(), tr, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(context.Background(), "greet", map[string]any{"name": "Ada"},
		client.WithMeta(core.Meta{"traceparent": metaParent})); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	span := tel.span(t, "tools/call greet")
	if got := span.Parent().TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("parent trace %s, want the one in _meta", got)
	}
	links := span.Links()
	if len(links) != 1 || links[0].SpanContext.TraceID().String() != "11111111111111111111111111111111" {
		t.Errorf("links %+v, want the HTTP request's context", links)
	}
	init := tel.span(t, "initialize")
	if init.Parent().TraceID().String() != "11111111111111111111111111111111" || len(init.Links()) != 0 {
		t.Errorf("without _meta the parent is the HTTP headers' context: parent %v, links %v", init.Parent(), init.Links())
	}
}
