package middleware

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/otelmcp"
)

const (
	metaTraceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaSpanID   = "00f067aa0ba902b7"
	headTraceID  = "0af7651916cd43dd8448eb211c80319c"
	headSpanID   = "b7ad6b7169203331"
	metaParent   = "00-" + metaTraceID + "-" + metaSpanID + "-01"
	headerParent = "00-" + headTraceID + "-" + headSpanID + "-01"
)

// traced is a tracing test rig: the layers under test, a span recorder, and a channel that
// yields once per exchange after the tracing layer returned (so its span has ended).
type traced struct {
	url      string
	rec      *tracetest.SpanRecorder
	finished chan struct{}
	handler  chan handlerView
}

// handlerView is what the innermost handler saw.
type handlerView struct {
	span  trace.SpanContext
	start time.Time
}

func newTraced(t *testing.T, opts TracingOptions, inner http.HandlerFunc) *traced {
	t.Helper()
	return newTracedURI(t, opts, inner, false)
}

// newTracedURI is newTraced with the observer's ResourceURIInSpanName set to uri (when opts has
// no Observer, the one built here reports to the recorder).
func newTracedURI(t *testing.T, opts TracingOptions, inner http.HandlerFunc, uri bool) *traced {
	t.Helper()
	tr := &traced{rec: tracetest.NewSpanRecorder(), finished: make(chan struct{}, 4), handler: make(chan handlerView, 4)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tr.rec))
	opts.TracerProvider = tp
	opts.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	if opts.Observer == nil {
		opts.Observer = otelmcp.New(otelmcp.Options{TracerProvider: tp, Propagator: opts.Propagator, ResourceURIInSpanName: uri})
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.handler <- handlerView{span: trace.SpanContextFromContext(r.Context()), start: ExchangeFrom(r.Context()).Start()}
		if inner != nil {
			inner(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	quiet := zerolog.New(io.Discard)
	stack := Recover(RecoverOptions{Logger: &quiet})(Tracing(opts)(OriginGuard(OriginGuardOptions{})(Decode(DecodeOptions{})(h))))
	signal := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { tr.finished <- struct{}{} }()
		stack.ServeHTTP(w, r)
	})
	tr.url = newServer(t, signal).URL
	return tr
}

// only waits for the exchange to finish and returns its one span.
func (tr *traced) only(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	<-tr.finished
	spans := tr.rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans ended, want 1", len(spans))
	}
	return spans[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		g, ok := got[attribute.Key(k)]
		switch {
		case v == nil:
			if ok {
				t.Errorf("attribute %s = %v, want it absent", k, g.String())
			}
		case !ok:
			t.Errorf("attribute %s missing", k)
		case g.AsInterface() != v:
			t.Errorf("attribute %s = %#v, want %#v", k, g.AsInterface(), v)
		}
	}
}

func tracedPost(t *testing.T, url, body string, headers map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	status, _, _ := do(t, http.DefaultClient, req)
	return status
}

func TestTracingToolsCallMetaParentBeatsHeader(t *testing.T) {
	tr := newTraced(t, TracingOptions{}, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` +
		`"_meta":{"traceparent":"` + metaParent + `","tracestate":"rojo=1"}}}`
	status := tracedPost(t, tr.url, body, map[string]string{
		"traceparent":          headerParent,
		"Mcp-Session-Id":       "sess-1",
		"MCP-Protocol-Version": "2025-11-25",
	})
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	s := tr.only(t)
	view := <-tr.handler
	if s.Name() != "tools/call echo" {
		t.Errorf("name %q", s.Name())
	}
	if s.SpanKind() != trace.SpanKindServer {
		t.Errorf("kind %v", s.SpanKind())
	}
	if got := s.Parent(); got.TraceID().String() != metaTraceID || got.SpanID().String() != metaSpanID || !got.IsRemote() {
		t.Errorf("parent %v, want the _meta traceparent", got)
	}
	if s.Parent().TraceState().Get("rojo") != "1" {
		t.Errorf("tracestate from _meta lost: %v", s.Parent().TraceState())
	}
	if links := s.Links(); len(links) != 1 || links[0].SpanContext.TraceID().String() != headTraceID {
		t.Errorf("links %v, want one to the HTTP header context", links)
	}
	if !view.span.Equal(s.SpanContext()) {
		t.Errorf("handler context carries %v, want the span %v", view.span, s.SpanContext())
	}
	if !s.StartTime().Equal(view.start) {
		t.Errorf("span starts at %v, want the exchange entry %v", s.StartTime(), view.start)
	}
	wantAttrs(t, s, map[string]any{
		"mcp.method.name":           "tools/call",
		"gen_ai.tool.name":          "echo",
		"gen_ai.operation.name":     "execute_tool",
		"jsonrpc.request.id":        "1",
		"mcp.session.id":            "sess-1",
		"mcp.protocol.version":      "2025-11-25",
		"network.transport":         "tcp",
		"network.protocol.name":     "http",
		"network.protocol.version":  "1.1",
		"http.request.method":       "POST",
		"http.response.status_code": int64(200),
		"error.type":                nil,
		"gen_ai.prompt.name":        nil,
	})
	if s.Status().Code == codes.Error {
		t.Errorf("status %v", s.Status())
	}
}

func TestTracingHeaderParentWithoutMeta(t *testing.T) {
	tr := newTraced(t, TracingOptions{}, nil)
	body := `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1}}}`
	tracedPost(t, tr.url, body, map[string]string{"traceparent": headerParent})
	s := tr.only(t)
	<-tr.handler
	if got := s.Parent(); got.TraceID().String() != headTraceID || got.SpanID().String() != headSpanID {
		t.Errorf("parent %v, want the header traceparent", got)
	}
	if len(s.Links()) != 0 {
		t.Errorf("links %v", s.Links())
	}
	wantAttrs(t, s, map[string]any{"jsonrpc.request.id": "abc", "mcp.session.id": nil, "mcp.protocol.version": nil})
}

func TestTracingInvalidMetaParentFallsBackToHeader(t *testing.T) {
	tr := newTraced(t, TracingOptions{}, nil)
	body := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"traceparent":"garbage"}}}`
	tracedPost(t, tr.url, body, map[string]string{"traceparent": headerParent})
	s := tr.only(t)
	<-tr.handler
	if s.Parent().TraceID().String() != headTraceID {
		t.Errorf("parent %v, want the header traceparent", s.Parent())
	}
	if s.Name() != "ping" {
		t.Errorf("name %q", s.Name())
	}
}

func TestTracingTargets(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		uri        bool
		span       string
		want       map[string]any
	}{
		{"prompt", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review"}}`, false,
			"prompts/get review", map[string]any{"gen_ai.prompt.name": "review", "gen_ai.tool.name": nil, "gen_ai.operation.name": nil}},
		{"resource default", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a.txt"}}`, false,
			"resources/read", map[string]any{"mcp.resource.uri": "file:///a.txt"}},
		{"resource opted in", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a.txt"}}`, true,
			"resources/subscribe file:///a.txt", map[string]any{"mcp.resource.uri": "file:///a.txt"}},
		{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false,
			"tools/list", map[string]any{"gen_ai.tool.name": nil, "gen_ai.operation.name": nil}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false,
			"notifications/initialized", map[string]any{"jsonrpc.request.id": nil}},
		{"protocol from _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false,
			"tools/list", map[string]any{"mcp.protocol.version": "2026-07-28"}},
		{"odd member types ignored", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"_meta":[]}}`, false,
			"tools/call", map[string]any{"gen_ai.tool.name": nil, "gen_ai.operation.name": "execute_tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracedURI(t, TracingOptions{}, nil, tc.uri)
			tracedPost(t, tr.url, tc.body, nil)
			s := tr.only(t)
			<-tr.handler
			if s.Name() != tc.span {
				t.Errorf("name %q, want %q", s.Name(), tc.span)
			}
			wantAttrs(t, s, tc.want)
		})
	}
}

func TestTracingWithoutMessage(t *testing.T) {
	tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
	req, _ := http.NewRequest(http.MethodGet, tr.url, nil)
	req.Header.Set("traceparent", headerParent)
	req.Header.Set("Mcp-Session-Id", "sess-9")
	do(t, http.DefaultClient, req)
	s := tr.only(t)
	view := <-tr.handler
	if s.Name() != "GET" || s.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q kind %v", s.Name(), s.SpanKind())
	}
	if s.Parent().TraceID().String() != headTraceID {
		t.Errorf("parent %v", s.Parent())
	}
	if !s.StartTime().Equal(view.start) {
		t.Errorf("start %v, want entry %v", s.StartTime(), view.start)
	}
	wantAttrs(t, s, map[string]any{
		"http.request.method":       "GET",
		"http.response.status_code": int64(405),
		"mcp.session.id":            "sess-9",
		"mcp.method.name":           nil,
		"error.type":                nil,
	})
}

func TestTracingErrors(t *testing.T) {
	t.Run("refused before decoding", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, nil)
		req, _ := http.NewRequest(http.MethodPost, tr.url, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "text/plain")
		do(t, http.DefaultClient, req)
		s := tr.only(t)
		if s.Name() != "POST" {
			t.Errorf("name %q", s.Name())
		}
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(415), "error.type": "-32600", "rpc.response.status_code": "-32600"})
		if s.Status().Code != codes.Error || s.Status().Description != msgUnsupportedMediaType {
			t.Errorf("status %v", s.Status())
		}
	})
	t.Run("forbidden host", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, nil)
		req, _ := http.NewRequest(http.MethodPost, tr.url, strings.NewReader(`{}`))
		req.Host = "evil.example"
		do(t, http.DefaultClient, req)
		s := tr.only(t)
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(403), "error.type": "-32600"})
	})
	t.Run("JSON-RPC error from the endpoint", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) {
			ExchangeFrom(r.Context()).SetErrorCode(-32602)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`)
		})
		tracedPost(t, tr.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, nil)
		s := tr.only(t)
		<-tr.handler
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(200), "error.type": "-32602", "rpc.response.status_code": "-32602"})
		if s.Status().Code != codes.Error {
			t.Errorf("status %v", s.Status())
		}
	})
	t.Run("server error status", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		tracedPost(t, tr.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
		s := tr.only(t)
		<-tr.handler
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(503), "error.type": "503"})
		if s.Status().Code != codes.Error {
			t.Errorf("status %v", s.Status())
		}
	})
	t.Run("client error status is not a span error", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
		})
		tracedPost(t, tr.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
		s := tr.only(t)
		<-tr.handler
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(404), "error.type": nil})
		if s.Status().Code == codes.Error {
			t.Errorf("status %v", s.Status())
		}
	})
	t.Run("panic", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) { panic("boom") })
		if status := tracedPost(t, tr.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil); status != 500 {
			t.Fatalf("status %d", status)
		}
		s := tr.only(t)
		<-tr.handler
		wantAttrs(t, s, map[string]any{"http.response.status_code": int64(500), "error.type": "panic"})
		if s.Status().Code != codes.Error {
			t.Errorf("status %v", s.Status())
		}
	})
	t.Run("session id assigned by the response", func(t *testing.T) {
		tr := newTraced(t, TracingOptions{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Mcp-Session-Id", "new-session")
		})
		tracedPost(t, tr.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil)
		s := tr.only(t)
		<-tr.handler
		wantAttrs(t, s, map[string]any{"mcp.session.id": "new-session"})
	})
}

func TestTracingGlobalDefaults(t *testing.T) {
	// The zero options use the global (no-op by default) provider: the layer still serves.
	url := newServer(t, Tracing(TracingOptions{Observer: otelmcp.New(otelmcp.Options{})})(Decode(DecodeOptions{})(okHandler))).URL
	if status, _, body := post(t, url, "application/json", toolsCall); status != 200 || body != "ok" {
		t.Fatalf("%d %q", status, body)
	}
}

func TestRequestLogCarriesTraceID(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	lines := make(lineWriter, 4)
	logger := zerolog.New(lines)
	h := Tracing(TracingOptions{Observer: otelmcp.New(otelmcp.Options{TracerProvider: tp}), TracerProvider: tp})(RequestLog(RequestLogOptions{Logger: &logger})(Decode(DecodeOptions{})(okHandler)))
	url := newServer(t, h).URL
	post(t, url, "application/json", toolsCall)
	got := parseLine(t, <-lines)
	if len(got["trace_id"]) != 34 { // a quoted 32-digit hex id
		t.Errorf("trace_id = %s", got["trace_id"])
	}
}

func TestTracingMountedInsideDecode(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	seen := make(chan trace.SpanContext, 1)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- trace.SpanContextFromContext(r.Context())
	})
	done := make(chan struct{}, 1)
	h := Decode(DecodeOptions{})(Tracing(TracingOptions{Observer: otelmcp.New(otelmcp.Options{TracerProvider: tp}), TracerProvider: tp})(inner))
	url := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		h.ServeHTTP(w, r)
	})).URL
	post(t, url, "application/json", toolsCall)
	<-done
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Name() != "tools/call echo" {
		t.Fatalf("spans %v", spans)
	}
	if sc := <-seen; !sc.Equal(spans[0].SpanContext()) {
		t.Errorf("handler context carries %v", sc)
	}
}
