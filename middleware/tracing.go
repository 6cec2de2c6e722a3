package middleware

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
)

// TracerName is the instrumentation scope name of the spans the Tracing layer starts.
const TracerName = "github.com/mcpkit/mcpkit/middleware"

// TracingOptions configures the Tracing layer. The zero value uses the global tracer provider and
// propagator (otel.GetTracerProvider, otel.GetTextMapPropagator; both follow a provider or
// propagator installed later) and keeps span names low-cardinality.
type TracingOptions struct {
	// TracerProvider creates the tracer. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator extracts the parent context from params._meta and from the HTTP headers. Nil
	// means otel.GetTextMapPropagator() (which propagates nothing until one is installed).
	Propagator propagation.TextMapPropagator
	// ResourceURIInSpanName appends the resource URI to the span name of resources/read,
	// resources/subscribe and resources/unsubscribe ("resources/read file:///a.txt"). False (the
	// default) leaves it out, as the MCP semantic conventions recommend, because URIs make span
	// names high-cardinality; the URI is always recorded as mcp.resource.uri.
	ResourceURIInSpanName bool
}

// Attribute keys of the OpenTelemetry MCP, GenAI, RPC, network, HTTP and error conventions.
const (
	attrMCPMethod       = "mcp.method.name"
	attrMCPSession      = "mcp.session.id"
	attrMCPProtocol     = "mcp.protocol.version"
	attrMCPResourceURI  = "mcp.resource.uri"
	attrJSONRPCID       = "jsonrpc.request.id"
	attrRPCStatusCode   = "rpc.response.status_code"
	attrToolName        = "gen_ai.tool.name"
	attrPromptName      = "gen_ai.prompt.name"
	attrOperationName   = "gen_ai.operation.name"
	attrNetTransport    = "network.transport"
	attrNetProtoName    = "network.protocol.name"
	attrNetProtoVersion = "network.protocol.version"
	attrHTTPMethod      = "http.request.method"
	attrHTTPStatus      = "http.response.status_code"
	attrErrorType       = "error.type"
)

// metaProtocolVersion is the params._meta member of the 2026-07-28 envelope naming the protocol
// version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// Tracing returns the layer that records one OpenTelemetry SERVER span per HTTP exchange, timed
// from when the exchange entered the layer.
//
// When the decode layer (further in) decodes a JSON-RPC message, the span starts right then, so
// that handlers' contexts carry it. It is named "{mcp.method.name} {target}" (the tool name for
// tools/call, the prompt name for prompts/get, nothing for other methods) and carries the
// attributes of the OpenTelemetry MCP conventions: mcp.method.name, jsonrpc.request.id,
// mcp.session.id, mcp.protocol.version (header MCP-Protocol-Version, else the _meta claim),
// gen_ai.tool.name with gen_ai.operation.name=execute_tool, gen_ai.prompt.name,
// mcp.resource.uri, network.transport=tcp, network.protocol.name=http,
// network.protocol.version and http.request.method. Its parent is the W3C trace context carried
// in params._meta (traceparent, tracestate, baggage) when present, as MCP recommends, with the
// HTTP-level context linked; otherwise the context in the HTTP headers (or the one already in the
// request context).
//
// When no message is decoded (GET, DELETE, or a request refused before decoding) the span is
// recorded after the chain returns, named by the HTTP method ("GET"), parented from the headers.
//
// At the end the span gets http.response.status_code, and, when the exchange failed, error.type
// and status Error: a JSON-RPC error recorded in the Exchange (SetError / SetErrorCode, which
// every layer of this package and the endpoint call) gives error.type and
// rpc.response.status_code as the code ("-32602"); otherwise a status of 500 or more gives the
// status ("503"); a panic gives "panic".
func Tracing(opts TracingOptions) func(http.Handler) http.Handler {
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := opts.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	tracer := tp.Tracer(TracerName)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r, ex := ensureExchange(r)
			t := &traceState{
				sw:      statusWriter{ResponseWriter: w},
				tracer:  tracer,
				prop:    prop,
				opts:    &opts,
				req:     r,
				ex:      ex,
				started: ex.Start(),
			}
			if m := ex.Message(); m != nil {
				// Mounted inside the decode layer: the message is already known.
				if ctx := t.onMessage(r.Context(), m); ctx != r.Context() {
					r = r.WithContext(ctx)
					t.req = r
				}
			} else {
				ex.OnMessage(t.onMessage)
			}
			completed := false
			defer func() { t.finish(completed) }()
			next.ServeHTTP(&t.sw, r)
			completed = true
		})
	}
}

// traceState is the per-exchange state of the tracing layer, allocated once.
type traceState struct {
	sw      statusWriter
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	opts    *TracingOptions
	req     *http.Request
	ex      *Exchange
	started time.Time
	span    trace.Span
	session bool // mcp.session.id was set at start
}

// onMessage is the Exchange hook: it starts the MCP span as soon as the message is known.
func (t *traceState) onMessage(ctx context.Context, m *core.Message) context.Context {
	if t.span != nil {
		return ctx
	}
	info := inspectMessage(m)
	r := t.req
	headerCtx := t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	parent := headerCtx
	var links []trace.Link
	if info.traceparent != "" {
		metaCtx := t.prop.Extract(ctx, &info)
		msc := trace.SpanContextFromContext(metaCtx)
		if msc.IsValid() && !msc.Equal(trace.SpanContextFromContext(ctx)) {
			parent = metaCtx
			if hsc := trace.SpanContextFromContext(headerCtx); hsc.IsValid() && !hsc.Equal(msc) {
				links = append(links, trace.Link{SpanContext: hsc})
			}
		}
	}

	name := m.Method
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, attribute.String(attrMCPMethod, m.Method))
	switch id := m.ID.Raw().(type) {
	case int64:
		attrs = append(attrs, attribute.String(attrJSONRPCID, strconv.FormatInt(id, 10)))
	case string:
		attrs = append(attrs, attribute.String(attrJSONRPCID, id))
	}
	switch m.Method {
	case "tools/call":
		if info.name != "" {
			name += " " + info.name
			attrs = append(attrs, attribute.String(attrToolName, info.name))
		}
		attrs = append(attrs, attribute.String(attrOperationName, "execute_tool"))
	case "prompts/get":
		if info.name != "" {
			name += " " + info.name
			attrs = append(attrs, attribute.String(attrPromptName, info.name))
		}
	case "resources/read", "resources/subscribe", "resources/unsubscribe", "notifications/resources/updated":
		if info.uri != "" {
			if t.opts.ResourceURIInSpanName && m.Method != "notifications/resources/updated" {
				name += " " + info.uri
			}
			attrs = append(attrs, attribute.String(attrMCPResourceURI, info.uri))
		}
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		attrs = append(attrs, attribute.String(attrMCPProtocol, v))
	} else if info.protocolVersion != "" {
		attrs = append(attrs, attribute.String(attrMCPProtocol, info.protocolVersion))
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		attrs = append(attrs, attribute.String(attrMCPSession, sid))
		t.session = true
	}
	attrs = appendHTTPAttrs(attrs, r)

	ctx, t.span = t.tracer.Start(parent, name,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(t.started),
		trace.WithAttributes(attrs...),
		trace.WithLinks(links...),
	)
	t.ex.spanContext = t.span.SpanContext()
	return ctx
}

// finish records the outcome and ends the span, starting an HTTP-level one if no message was
// decoded. completed is false when the chain panicked.
func (t *traceState) finish(completed bool) {
	r := t.req
	span := t.span
	if span == nil {
		attrs := make([]attribute.KeyValue, 0, 6)
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			attrs = append(attrs, attribute.String(attrMCPSession, sid))
			t.session = true
		}
		attrs = appendHTTPAttrs(attrs, r)
		parent := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		_, span = t.tracer.Start(parent, r.Method,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithTimestamp(t.started),
			trace.WithAttributes(attrs...),
		)
	}
	if !t.session {
		sid := t.sw.Header().Get("Mcp-Session-Id")
		if sid == "" {
			sid = t.ex.SessionID()
		}
		if sid != "" {
			span.SetAttributes(attribute.String(attrMCPSession, sid))
		}
	}
	status := t.sw.statusOr(http.StatusOK)
	if !completed && !t.sw.started() {
		status = http.StatusInternalServerError // what the recover layer answers
	}
	span.SetAttributes(attribute.Int(attrHTTPStatus, status))
	code, msg, hasErr := t.ex.JSONRPCError()
	switch {
	case !completed:
		span.SetAttributes(attribute.String(attrErrorType, "panic"))
		span.SetStatus(codes.Error, "handler panicked")
	case hasErr:
		c := strconv.FormatInt(code, 10)
		span.SetAttributes(attribute.String(attrErrorType, c), attribute.String(attrRPCStatusCode, c))
		span.SetStatus(codes.Error, msg)
	case status >= 500:
		span.SetAttributes(attribute.String(attrErrorType, strconv.Itoa(status)))
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

func appendHTTPAttrs(attrs []attribute.KeyValue, r *http.Request) []attribute.KeyValue {
	version := ""
	switch {
	case r.ProtoMajor == 2:
		version = "2"
	case r.ProtoMajor == 3:
		version = "3"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		version = "1.0"
	case r.ProtoMajor == 1:
		version = "1.1"
	}
	transport := "tcp"
	if r.ProtoMajor == 3 {
		transport = "quic"
	}
	attrs = append(attrs,
		attribute.String(attrNetTransport, transport),
		attribute.String(attrNetProtoName, "http"),
		attribute.String(attrHTTPMethod, r.Method),
	)
	if version != "" {
		attrs = append(attrs, attribute.String(attrNetProtoVersion, version))
	}
	return attrs
}

// paramsInfo is what the tracing layer reads from a message's params: the target name or URI
// and the _meta trace context and protocol claim. It is also the TextMapCarrier over _meta.
type paramsInfo struct {
	name, uri                        string
	traceparent, tracestate, baggage string
	protocolVersion                  string
}

// Get returns the _meta trace-context member with the given key.
func (p *paramsInfo) Get(key string) string {
	switch key {
	case "traceparent":
		return p.traceparent
	case "tracestate":
		return p.tracestate
	case "baggage":
		return p.baggage
	}
	return ""
}

// Set is a no-op: the carrier is read-only.
func (p *paramsInfo) Set(string, string) {}

// Keys lists the trace-context members present.
func (p *paramsInfo) Keys() []string {
	keys := make([]string, 0, 3)
	for _, k := range [...]string{"traceparent", "tracestate", "baggage"} {
		if p.Get(k) != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

type paramsProbe struct {
	Name jsontext.Value `json:"name"`
	URI  jsontext.Value `json:"uri"`
	Meta jsontext.Value `json:"_meta"`
}

type metaProbe struct {
	Traceparent     jsontext.Value `json:"traceparent"`
	Tracestate      jsontext.Value `json:"tracestate"`
	Baggage         jsontext.Value `json:"baggage"`
	ProtocolVersion jsontext.Value `json:"io.modelcontextprotocol/protocolVersion"`
}

// inspectMessage reads what the span needs from the decoded message: the target and the _meta
// members the decoder already picked out, so the params are not parsed again.
func inspectMessage(m *core.Message) paramsInfo {
	if !m.Parsed {
		return inspectParams(m.Params)
	}
	return paramsInfo{
		name:            m.Name,
		uri:             m.URI,
		traceparent:     jsonString(m.MetaValue("traceparent")),
		tracestate:      jsonString(m.MetaValue("tracestate")),
		baggage:         jsonString(m.MetaValue("baggage")),
		protocolVersion: jsonString(m.MetaValue(core.MetaProtocolVersion)),
	}
}

// inspectParams reads the members the span needs from params (a message that was not produced
// by core.DecodeMessage); anything malformed is ignored.
func inspectParams(params []byte) paramsInfo {
	var info paramsInfo
	if jsontext.Value(params).Kind() != '{' {
		return info
	}
	var p paramsProbe
	if json.Unmarshal(params, &p) != nil {
		return info
	}
	info.name = jsonString(p.Name)
	info.uri = jsonString(p.URI)
	if p.Meta.Kind() == '{' {
		var m metaProbe
		if json.Unmarshal(p.Meta, &m) == nil {
			info.traceparent = jsonString(m.Traceparent)
			info.tracestate = jsonString(m.Tracestate)
			info.baggage = jsonString(m.Baggage)
			info.protocolVersion = jsonString(m.ProtocolVersion)
		}
	}
	return info
}

// jsonString returns the string a JSON string value holds, or "" for any other value.
func jsonString(v []byte) string {
	if jsontext.Value(v).Kind() != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}
