package middleware

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/otelconv"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// TracerName is the instrumentation scope name of the spans the Tracing layer starts.
const TracerName = "github.com/mcpkit/mcpkit/middleware"

// Attribute keys of the HTTP-level spans (the MCP ones are the observer's).
const (
	attrMCPSession      = otelconv.AttrSessionID
	attrRPCStatusCode   = otelconv.AttrResponseStatusCode
	attrNetTransport    = otelconv.AttrNetworkTransport
	attrNetProtoName    = otelconv.AttrNetworkProtocolName
	attrNetProtoVersion = otelconv.AttrNetworkProtocolVer
	attrErrorType       = otelconv.AttrErrorType
	attrHTTPMethod      = otelconv.AttrHTTPRequestMethod
	attrHTTPStatus      = otelconv.AttrHTTPResponseStatus
)

// TracingOptions configures the Tracing layer. Observer is required; the other fields' zero
// values use the observer's tracer provider and propagator when it has them (as otelmcp.Observer
// has), else the global ones (otel.GetTracerProvider, otel.GetTextMapPropagator).
type TracingOptions struct {
	// Observer receives every MCP operation the layer sees: an otelmcp.Observer for the MCP
	// semantic conventions (mcphttp.New builds one when it is given none). Tracing panics when it
	// is nil. Give the layer the same observer as core.Options.Observer so that HTTP and stdio
	// report through one instance.
	Observer core.Observer
	// TracerProvider creates the tracer of the spans of exchanges that carry no MCP message
	// (GET, DELETE, refusals before decoding). Nil means the observer's, when it has one (a
	// TracerProvider() method, as otelmcp.Observer has: the provider given to otelmcp.New is
	// then enough for every span), else otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator extracts the parent context from the HTTP headers. Nil means the observer's
	// when it has one (a Propagator() method, as otelmcp.Observer has), else
	// otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
}

// Tracing returns the layer that reports every HTTP exchange to OpenTelemetry, timed from when
// the exchange entered the layer.
//
// An exchange that carries a JSON-RPC message becomes a core.Operation, started through the
// observer (TracingOptions.Observer) as soon as the decode layer (further in) decodes the message,
// so that handlers' contexts carry its span, and handed to core in the request context
// (core.WithOperation): core fills in the outcome (the JSON-RPC error, a tool's isError) and the
// layer ends the operation once the answer is written. The span and the metrics are therefore the
// ones stdio produces for the same message (see package otelmcp for names and attributes), plus
// network.protocol.name=http, network.protocol.version, http.request.method and
// http.response.status_code. The parent is the W3C trace context in params._meta when present,
// with the HTTP headers' context linked; otherwise the context in the HTTP headers (or the one
// already in the request context). A request refused by a layer before core serves it still gets
// error.type and rpc.response.status_code from the JSON-RPC error the layer recorded in the
// Exchange (SetError / SetErrorCode, which every layer of this package and the endpoint call).
//
// An exchange without a message (GET, DELETE, a request refused before decoding) is recorded as a
// SERVER span named by the HTTP method ("GET"), parented from the headers; a status of 500 or
// more gives error.type the status, and a panic gives "panic".
//
// While nothing would be recorded (no-op providers, or the global providers before the program
// sets one) the layer steps aside: it creates no span, no Exchange and no context, and allocates
// nothing. A global provider set after the layer was built is used from the next exchange on.
func Tracing(opts TracingOptions) func(http.Handler) http.Handler {
	if opts.Observer == nil {
		panic("middleware: TracingOptions.Observer is required (otelmcp.New builds one)")
	}
	tp := opts.TracerProvider
	if p, ok := opts.Observer.(interface{ TracerProvider() trace.TracerProvider }); ok && tp == nil {
		tp = p.TracerProvider() // the observer's spans and the layer's come from one provider
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := opts.Propagator
	if p, ok := opts.Observer.(interface {
		Propagator() propagation.TextMapPropagator
	}); ok && prop == nil {
		prop = p.Propagator() // the headers are read as the observer reads params._meta
	}
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	obs := opts.Observer
	var tracer trace.Tracer
	if _, off := tp.(tracenoop.TracerProvider); !off {
		tracer = tp.Tracer(TracerName)
	}
	enabled, knows := obs.(interface{ Enabled() bool })
	if knows && !enabled.Enabled() && tracer == nil {
		// No-op providers: nothing would be recorded, so the layer adds nothing to a request.
		return func(next http.Handler) http.Handler { return next }
	}
	// off reports whether nothing would be recorded for this exchange: the observer is disabled
	// and the layer's own tracer records nothing (the global providers before a program sets
	// one). It is asked per exchange, so that a provider set after the layer was built counts.
	off := func() bool { return knows && !enabled.Enabled() && (tracer == nil || otelconv.TracingOff(tp)) }
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if off() {
				next.ServeHTTP(w, r)
				return
			}
			r, ex := ensureExchange(r)
			t := &traceState{
				sw:      statusWriter{ResponseWriter: w},
				tracer:  tracer,
				obs:     obs,
				prop:    prop,
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

// traceState is the per-exchange state of the tracing layer, allocated once (the operation
// included).
type traceState struct {
	sw      statusWriter
	tracer  trace.Tracer
	obs     core.Observer
	prop    propagation.TextMapPropagator
	req     *http.Request
	ex      *Exchange
	started time.Time
	op      core.Operation
	opCtx   context.Context // the context StartOperation returned; nil until then
	// spanContext is the span started for the message, which the Exchange points to.
	spanContext trace.SpanContext
}

// onMessage is the Exchange hook: it starts the operation as soon as the message is known.
func (t *traceState) onMessage(ctx context.Context, m *jsonrpc.Message) context.Context {
	if t.opCtx != nil || m.IsResponse() {
		// A client's answer to a server request is part of that request's CLIENT span, not an
		// operation: it is recorded as an HTTP exchange.
		return ctx
	}
	r := t.req
	op := &t.op
	transport.Core.SetMessage(op, m)
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		op.ProtocolVersion = v
	}
	if !op.Modern {
		op.SessionID = r.Header.Get("Mcp-Session-Id")
	}
	op.Transport = httpTransport(r)
	op.Start = t.started
	ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx = t.obs.StartOperation(ctx, op)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String(attrHTTPMethod, r.Method))
		t.spanContext = span.SpanContext()
		t.ex.spanContext = &t.spanContext
	}
	t.opCtx = ctx
	return transport.Core.WithOperation(ctx, op)
}

// finish ends the operation with the exchange's outcome, or records an HTTP-level span when no
// message was decoded. completed is false when the chain panicked.
func (t *traceState) finish(completed bool) {
	status := t.sw.statusOr(http.StatusOK)
	if !completed && !t.sw.started() {
		status = http.StatusInternalServerError // what the recover layer answers
	}
	if t.opCtx == nil {
		t.finishHTTP(status, completed)
		return
	}
	// What the exchange knows is read now (the response writer is not used once the chain has
	// returned); it is applied when the operation ends, which is later when core is still
	// serving a request that outlives its exchange (a resumable stream's).
	sid := t.sw.Header().Get("Mcp-Session-Id")
	if sid == "" {
		sid = t.ex.SessionID()
	}
	code, msg, refused := t.ex.JSONRPCError()
	op := &t.op
	transport.Core.Release(op, func() {
		op.End = time.Now() // the answer is written
		if op.SessionID == "" && !op.Modern {
			op.SessionID = sid // initialize: the session id is known once the endpoint answered
		}
		if refused && op.ErrorCode == 0 {
			op.ErrorCode, op.ErrorMessage = code, msg // refused by a layer before (or instead of) core
		}
		switch {
		case !completed:
			op.ErrorType, op.ErrorMessage = "panic", "handler panicked"
		case op.ErrorCode == 0 && op.ErrorType == "" && status >= 500:
			op.ErrorType = strconv.Itoa(status)
		}
		if span := trace.SpanFromContext(t.opCtx); span.IsRecording() {
			span.SetAttributes(attribute.Int(attrHTTPStatus, status))
		}
		t.obs.EndOperation(t.opCtx, op)
	})
}

// finishHTTP records the span of an exchange that carried no MCP message.
func (t *traceState) finishHTTP(status int, completed bool) {
	if t.tracer == nil {
		return
	}
	r := t.req
	parent := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	_, span := t.tracer.Start(parent, r.Method,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(t.started),
	)
	if !span.IsRecording() {
		span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, 7)
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		if sid = t.sw.Header().Get("Mcp-Session-Id"); sid == "" {
			sid = t.ex.SessionID()
		}
	}
	if sid != "" {
		attrs = append(attrs, attribute.String(attrMCPSession, sid))
	}
	attrs = appendHTTPAttrs(attrs, r)
	attrs = append(attrs, attribute.Int(attrHTTPStatus, status))
	code, msg, hasErr := t.ex.JSONRPCError()
	switch {
	case !completed:
		attrs = append(attrs, attribute.String(attrErrorType, "panic"))
		span.SetStatus(codes.Error, "handler panicked")
	case hasErr:
		c := strconv.FormatInt(code, 10)
		attrs = append(attrs, attribute.String(attrErrorType, c), attribute.String(attrRPCStatusCode, c))
		span.SetStatus(codes.Error, msg)
	case status >= 500:
		attrs = append(attrs, attribute.String(attrErrorType, strconv.Itoa(status)))
		span.SetStatus(codes.Error, "")
	}
	span.SetAttributes(attrs...)
	span.End()
}

// httpTransport describes the HTTP request's transport in the terms of the network attributes.
func httpTransport(r *http.Request) core.Transport {
	t := core.Transport{Network: "tcp", Protocol: "http"}
	switch {
	case r.ProtoMajor == 2:
		t.ProtocolVersion = "2"
	case r.ProtoMajor == 3:
		t.Network, t.ProtocolVersion = "quic", "3"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		t.ProtocolVersion = "1.0"
	case r.ProtoMajor == 1:
		t.ProtocolVersion = "1.1"
	}
	return t
}

func appendHTTPAttrs(attrs []attribute.KeyValue, r *http.Request) []attribute.KeyValue {
	t := httpTransport(r)
	attrs = append(attrs,
		attribute.String(attrNetTransport, t.Network),
		attribute.String(attrNetProtoName, t.Protocol),
		attribute.String(attrHTTPMethod, r.Method),
	)
	if t.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(attrNetProtoVersion, t.ProtocolVersion))
	}
	return attrs
}
