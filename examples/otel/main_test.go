package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// TestHTTP: the example's wiring over Streamable HTTP gives the tool call a SERVER span with the
// tool's own span inside it, and the operation metric.
func TestHTTP(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	tel := &telemetry{tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}
	t.Cleanup(tel.shutdown)
	// The tool's own span comes from the global provider, as in main.
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tel.tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	h := mcphttp.New(newServer(tel.observer()), mcphttp.Options{})
	srv := httptest.NewServer(h)
	c := testutil.NewClient(srv.URL, srv.Client())
	c.Initialize(t)
	res := c.Call(t, 7, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}})
	if res.Error != nil {
		t.Fatalf("tools/call add: %+v", res.Error)
	}
	var out struct {
		StructuredContent struct {
			Sum float64 `json:"sum"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil || out.StructuredContent.Sum != 5 {
		t.Fatalf("add result %s (%v)", res.Result, err)
	}
	// Once the server is closed every handler has returned, so every span has ended.
	_ = h.Close()
	srv.Close()

	var server, child sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "tools/call add":
			server = s
		case "add numbers":
			child = s
		}
	}
	if server == nil || child == nil {
		t.Fatalf("spans: server %v, child %v", server, child)
	}
	if server.SpanKind() != trace.SpanKindServer {
		t.Fatalf("span kind %v, want server", server.SpanKind())
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range server.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	for key, want := range map[attribute.Key]string{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "add",
		"gen_ai.operation.name": "execute_tool",
		"jsonrpc.request.id":    "7",
		"mcp.session.id":        c.SessionID,
		"mcp.protocol.version":  c.ProtocolVersion,
		"network.transport":     "tcp",
		"network.protocol.name": "http",
	} {
		if got := attrs[key].AsString(); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if got := attrs["http.response.status_code"].AsInt64(); got != 200 {
		t.Errorf("http.response.status_code = %d, want 200", got)
	}
	if child.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Fatal("the tool's span is not a child of the server span")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names[m.Name] = true
		}
	}
	if !names[otelmcp.MetricServerOperationDuration] || !names[otelmcp.MetricServerSessionDuration] {
		t.Errorf("metrics %v, want the operation and session durations", names)
	}
}

// TestStdio runs the real binary with -stdio over pipes: stdout carries only the protocol, and the
// spans and the metrics (flushed when the input ends) are on stderr.
func TestStdio(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "otel")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the example: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-stdio")
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`,
	}, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	var ids []float64
	for sc.Scan() {
		var m struct {
			ID float64 `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout carries something other than JSON-RPC: %q", sc.Text())
		}
		ids = append(ids, m.ID)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("answers %v, want 1 and 2", ids)
	}
	logs := stderr.String()
	for _, want := range []string{`"tools/call add"`, `"pipe"`, otelmcp.MetricServerOperationDuration, otelmcp.MetricServerSessionDuration} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %s", want)
		}
	}
	if testing.Verbose() {
		_, _ = os.Stderr.WriteString(logs[:min(len(logs), 2000)])
	}
}
