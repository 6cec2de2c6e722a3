package main

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

func TestToolCallSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	// The tool's own span comes from the global provider, as in main.
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	h := newHandler(newServer(), tp)
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
	if server == nil {
		names := []string{}
		for _, s := range rec.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("no \"tools/call add\" span among %q", names)
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
	} {
		if got := attrs[key].AsString(); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if got := attrs["http.response.status_code"].AsInt64(); got != 200 {
		t.Errorf("http.response.status_code = %d, want 200", got)
	}
	if child == nil {
		t.Fatal("the tool's own span is missing")
	}
	if child.Parent().SpanID() != server.SpanContext().SpanID() || child.SpanContext().TraceID() != server.SpanContext().TraceID() {
		t.Fatal("the tool's span is not a child of the server span")
	}
}
