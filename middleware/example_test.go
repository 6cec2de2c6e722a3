package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/session"
)

// exampleCall is a tools/call request as a client posts it.
const exampleCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{}}}`

// do serves one POST of body through h and prints the status and the answer.
func do(h http.Handler, body string, header ...string) {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
}

// ok answers 200 with the method the decode layer parsed.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	msg, _ := middleware.MessageFrom(r.Context())
	fmt.Fprintf(w, "ok %s", msg.Method)
})

// A panic below Recover is a 500 with a JSON-RPC -32603 body; the panic is logged, never sent.
func ExampleRecover() {
	quiet := zerolog.Nop()
	h := middleware.Recover(middleware.RecoverOptions{Logger: &quiet})(
		middleware.Decode(middleware.DecodeOptions{})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic("secret detail")
		})))
	do(h, exampleCall)
	// Output:
	// 500 {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal server error"}}
}

// Decode reads the body once (bounded), parses it once and hands the message to the layers
// below; a body that is not JSON is refused with the status the transport requires.
func ExampleDecode() {
	h := middleware.Decode(middleware.DecodeOptions{MaxRequestBytes: 1 << 20})(ok)
	do(h, exampleCall)
	do(h, `{"jsonrpc":"2.0","id":1,"method":`)
	// Output:
	// 200 ok tools/call
	// 400 {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"Invalid JSON"}}
}

// OriginGuard protects against DNS rebinding: loopback hosts and AllowedHosts only, and an Origin
// must be the same origin or one of AllowedOrigins.
func ExampleOriginGuard() {
	h := middleware.OriginGuard(middleware.OriginGuardOptions{AllowedOrigins: []string{"https://app.example.com"}})(
		middleware.Decode(middleware.DecodeOptions{})(ok))
	do(h, exampleCall, "Origin", "https://app.example.com")
	do(h, exampleCall, "Origin", "https://evil.example")
	// Output:
	// 200 ok tools/call
	// 403 {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden: Invalid Origin header"}}
}

// EraRouter sends a 2026-07-28 request to the modern handler and everything else to the legacy
// one; it sits below Decode.
func ExampleEraRouter() {
	modern := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "modern") })
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "legacy") })
	h := middleware.Decode(middleware.DecodeOptions{})(middleware.EraRouter(middleware.EraRouterOptions{Modern: modern})(legacy))
	do(h, exampleCall, "MCP-Protocol-Version", "2025-11-25", "Mcp-Session-Id", "s-1")
	do(h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"MCP-Protocol-Version", "2026-07-28")
	// Output:
	// 200 legacy
	// 200 modern
}

// SessionValidator resolves the Mcp-Session-Id of legacy requests through the endpoint that owns
// the sessions: 400 without one (except initialize), 404 for an unknown one, 403 when the
// request's principal (here from the Principal layer) is not the one that opened the session.
func ExampleSessionValidator() {
	server := core.NewServer(core.Implementation{Name: "example", Version: "1.0.0"}, core.Options{})
	ep := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: session.NewMemory(session.MemoryOptions{})})
	defer ep.Close() // ends the sessions and the store
	user := func(r *http.Request) string { return r.Header.Get("X-User") }
	validated := func(next http.Handler) http.Handler {
		return middleware.Principal(middleware.PrincipalOptions{Resolve: user})(middleware.Decode(middleware.DecodeOptions{})(
			middleware.SessionValidator(middleware.SessionValidatorOptions{Sessions: ep})(next)))
	}
	// ada opens a session: initialize passes the validator, and the endpoint creates it.
	init := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	init.Header.Set("Content-Type", "application/json")
	init.Header.Set("X-User", "ada")
	opened := httptest.NewRecorder()
	validated(ep).ServeHTTP(opened, init)
	id := opened.Header().Get(middleware.HeaderSessionID)

	h := validated(ok)
	do(h, exampleCall, "Mcp-Session-Id", id, "X-User", "ada")
	do(h, exampleCall, "Mcp-Session-Id", id, "X-User", "bob")
	do(h, exampleCall, "Mcp-Session-Id", "nope")
	do(h, exampleCall)
	// Output:
	// 200 ok tools/call
	// 403 {"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Forbidden: session request validation failed"}}
	// 404 {"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Session not found"}}
	// 400 {"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Missing session ID"}}
}

// MirrorHeaders checks that the headers of a 2026-07-28 request say what its body says.
func ExampleMirrorHeaders() {
	h := middleware.Decode(middleware.DecodeOptions{})(middleware.MirrorHeaders(middleware.MirrorHeadersOptions{})(ok))
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	do(h, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "greet")
	do(h, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "other")
	// Output:
	// 200 ok tools/call
	// 400 {"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value 'other' does not match body value 'greet'"}}
}

// RequestLog writes one line per exchange: method, session fingerprint, status, sizes, duration;
// never bodies or secrets.
func ExampleRequestLog() {
	var lines strings.Builder
	logger := zerolog.New(&lines)
	h := middleware.RequestLog(middleware.RequestLogOptions{Logger: &logger})(middleware.Decode(middleware.DecodeOptions{})(ok))
	do(h, exampleCall)
	var line map[string]any
	_ = json.Unmarshal([]byte(lines.String()), &line)
	fmt.Println(line["mcp_method"], line["jsonrpc_id"], line["status"], line["level"])
	// Output:
	// 200 ok tools/call
	// tools/call 7 200 info
}

// Tracing starts one server span per exchange, named after the MCP method and target, with the
// MCP semantic-convention attributes.
func ExampleTracing() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())
	h := middleware.Tracing(middleware.TracingOptions{Observer: otelmcp.New(otelmcp.Options{TracerProvider: tp}), TracerProvider: tp})(middleware.Decode(middleware.DecodeOptions{})(ok))
	do(h, exampleCall)
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
	}
	// Output:
	// 200 ok tools/call
	// tools/call greet server
}

// SSEWriter frames, flushes and bounds the writes of one event stream.
func ExampleNewSSEWriter() {
	w := httptest.NewRecorder()
	sse := middleware.NewSSEWriter(w, middleware.SSEWriterOptions{})
	_ = sse.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
	_ = sse.WriteFinal([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	sse.Close()
	fmt.Println(w.Header().Get("Content-Type"), w.Header().Get("X-Accel-Buffering"))
	fmt.Print(w.Body.String())
	// Output:
	// text/event-stream no
	// data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}
	//
	// data: {"jsonrpc":"2.0","id":1,"result":{}}
}
