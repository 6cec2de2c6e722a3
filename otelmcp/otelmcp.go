// Package otelmcp observes an MCP server with OpenTelemetry: a span per request, notification
// and server-to-client request, and the metrics of the OpenTelemetry MCP semantic conventions
// (mcp.server.operation.duration, mcp.server.session.duration, and mcp.client.operation.duration
// for the requests the server sends to clients).
//
// An *Observer is a core.Observer. Set it as core.Options.Observer and every transport reports
// through it: the stdio adapter as it serves each message, Streamable HTTP through the tracing
// layer (middleware.Tracing), which times the whole exchange and hands the operation to core to
// fill in. The two transports therefore produce the same spans and the same metrics.
//
// # What is recorded
//
// Spans are named "{mcp.method.name} {target}" (the tool name of tools/call, the prompt name of
// prompts/get; resource URIs only with Options.ResourceURIInSpanName), SERVER spans for what the
// server receives and CLIENT spans for what it sends. Their attributes: mcp.method.name,
// jsonrpc.request.id, mcp.session.id (legacy sessions only, never on 2026-07-28 requests),
// mcp.protocol.version, gen_ai.tool.name with gen_ai.operation.name=execute_tool,
// gen_ai.prompt.name, mcp.resource.uri, network.transport ("tcp", or "pipe" on stdio),
// network.protocol.name and network.protocol.version ("http", "1.1" on Streamable HTTP). A
// JSON-RPC error sets error.type and rpc.response.status_code to the code and the span status to
// Error with the JSON-RPC message; a tool result with isError: true sets error.type=tool_error.
// The parent is the W3C trace context in params._meta when present (then the ambient span, the
// HTTP request's, is linked), else the ambient context. Tool arguments and results are recorded
// only with Options.RecordContent.
//
// Metrics are histograms in seconds with the conventions' bucket boundaries (Buckets). They carry
// mcp.method.name, error.type, gen_ai.tool.name, gen_ai.prompt.name, rpc.response.status_code,
// mcp.protocol.version and the network attributes; mcp.resource.uri only with
// Options.ResourceURIOnMetrics. Nothing of high cardinality (request or session ids) is ever put
// on a metric.
//
// # Cost
//
// With no-op providers (noop.NewTracerProvider, the metric noop provider), and with the global
// providers while the program has set none (otel.SetTracerProvider, otel.SetMeterProvider), the
// observer does nothing and allocates nothing: it creates no spans. A global provider set later,
// even after New, is honoured from then on. Instruments that no reader or view wants are skipped before any
// attribute is built (Enabled), and span attributes are built only for recording spans.
package otelmcp

import (
	"context"
	"encoding/json"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/otelconv"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/mcpkit/mcpkit/otelmcp"

// Buckets are the explicit bucket boundaries, in seconds, of every duration histogram, as the
// MCP semantic conventions recommend.
var Buckets = otelconv.Buckets

// Metric names of the MCP semantic conventions (the kit declares each once, in one internal
// package the client and the HTTP layers share; these are their exported names).
const (
	MetricServerOperationDuration = otelconv.MetricServerOperationDuration
	MetricServerSessionDuration   = otelconv.MetricServerSessionDuration
	MetricClientOperationDuration = otelconv.MetricClientOperationDuration
	MetricClientSessionDuration   = otelconv.MetricClientSessionDuration
)

// Attribute keys of the OpenTelemetry MCP, GenAI, JSON-RPC, network and error conventions.
const (
	AttrMethodName          = otelconv.AttrMethodName
	AttrSessionID           = otelconv.AttrSessionID
	AttrProtocolVersion     = otelconv.AttrProtocolVersion
	AttrResourceURI         = otelconv.AttrResourceURI
	AttrRequestID           = otelconv.AttrRequestID
	AttrResponseStatusCode  = otelconv.AttrResponseStatusCode
	AttrToolName            = otelconv.AttrToolName
	AttrPromptName          = otelconv.AttrPromptName
	AttrOperationName       = otelconv.AttrOperationName
	AttrToolCallArguments   = otelconv.AttrToolCallArguments
	AttrToolCallResult      = otelconv.AttrToolCallResult
	AttrNetworkTransport    = otelconv.AttrNetworkTransport
	AttrNetworkProtocolName = otelconv.AttrNetworkProtocolName
	AttrNetworkProtocolVer  = otelconv.AttrNetworkProtocolVer
	AttrErrorType           = otelconv.AttrErrorType
)

// ErrorTypeToolError is the error.type of a tool result with isError: true.
const ErrorTypeToolError = otelconv.ErrorTypeToolError

// Options configure an Observer. The zero value uses the global providers and propagator
// (otel.GetTracerProvider, otel.GetMeterProvider, otel.GetTextMapPropagator, resolved when New
// runs) and records no content.
type Options struct {
	// TracerProvider makes the tracer. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter. Nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads the trace context of params._meta. Nil means otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
	// ResourceURIInSpanName appends the resource URI to the span names of resources/read,
	// resources/subscribe and resources/unsubscribe. False (the default) keeps span names
	// low-cardinality, as the conventions recommend; the URI is always a span attribute.
	ResourceURIInSpanName bool
	// ResourceURIOnMetrics adds mcp.resource.uri to the metrics (opt-in in the conventions:
	// URIs can be unbounded). False leaves it out.
	ResourceURIOnMetrics bool
	// RecordContent records tool arguments (gen_ai.tool.call.arguments) and tool results
	// (gen_ai.tool.call.result) on tools/call spans. False (the default) records neither: they
	// may hold personal or secret data.
	RecordContent bool
}

// Observer reports MCP operations as OpenTelemetry spans and metrics. It is a core.Observer; make
// one with New and share it (it is safe for concurrent use).
type Observer struct {
	opts   Options
	tp     trace.TracerProvider // the provider the tracer came from, never nil
	tracer trace.Tracer         // nil when tracing is off (a no-op provider)
	prop   propagation.TextMapPropagator
	// globalTracer and globalMeter are set when the tracer and the meter come from the global
	// providers as otel hands them out before a program sets its own: they then record only
	// once one is set (see TracingOff and MetricsOff).
	globalTracer, globalMeter bool

	serverOps, clientOps, sessions metric.Float64Histogram // nil when metrics are off
}

var _ core.Observer = (*Observer)(nil)

// New returns an Observer with the given options.
func New(opts Options) *Observer {
	o := &Observer{opts: opts, prop: opts.Propagator}
	if o.prop == nil {
		o.prop = otel.GetTextMapPropagator()
	}
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	o.tp = tp
	if _, off := tp.(tracenoop.TracerProvider); !off {
		o.tracer = tp.Tracer(ScopeName)
		o.globalTracer = otelconv.IsGlobalTracerProvider(tp)
	}
	mp := opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if _, off := mp.(metricnoop.MeterProvider); !off {
		o.globalMeter = otelconv.IsGlobalMeterProvider(mp)
		meter := mp.Meter(ScopeName)
		o.serverOps = histogram(meter, MetricServerOperationDuration,
			"MCP request or notification duration as observed on the receiver, from the time it was received until the result or acknowledgement is sent.")
		o.clientOps = histogram(meter, MetricClientOperationDuration,
			"Duration of an MCP request the server sent to the client, from the time it was sent until the response was received.")
		o.sessions = histogram(meter, MetricServerSessionDuration, "The duration of the MCP session as observed on the MCP server.")
	}
	return o
}

func histogram(meter metric.Meter, name, description string) metric.Float64Histogram {
	h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(description),
		metric.WithExplicitBucketBoundaries(Buckets...))
	if err != nil {
		otel.Handle(err)
	}
	return h
}

// Enabled reports whether the observer records anything now: false when both providers are
// no-op providers, or global providers while the program has set none. The HTTP tracing layer
// asks it for every exchange and steps aside while it is false, so that no-op providers add
// nothing to a request.
func (o *Observer) Enabled() bool {
	return o.activeTracer() != nil || (o.serverOps != nil && !(o.globalMeter && globalMeterUnset()))
}

// Tracer returns the observer's tracer, nil when tracing is off (now: see Enabled).
func (o *Observer) Tracer() trace.Tracer { return o.activeTracer() }

// TracerProvider returns the provider the observer's spans are made with: Options.TracerProvider,
// or the global provider New resolved when it was nil. The HTTP tracing layer
// (middleware.Tracing) makes the spans of exchanges that carry no MCP message (GET, DELETE,
// refusals before decoding) with it, so that one setting covers every span of an endpoint.
func (o *Observer) TracerProvider() trace.TracerProvider { return o.tp }

// activeTracer is the tracer while spans made with it can be recorded, else nil.
func (o *Observer) activeTracer() trace.Tracer {
	if o.globalTracer && globalTracerUnset() {
		return nil
	}
	return o.tracer
}

// TracingOff reports whether spans started through tp are recorded by nobody at this moment: tp
// is a no-op provider (trace/noop), or it is the global provider (otel.GetTracerProvider) and the
// program has not set one yet, or set a no-op one. It allocates nothing, so a layer can ask it
// for every request and step aside while it is true.
func TracingOff(tp trace.TracerProvider) bool { return otelconv.TracingOff(tp) }

// globalTracerUnset reports whether the global tracer provider is still otel's default (or a
// no-op provider was set).
func globalTracerUnset() bool { return otelconv.GlobalTracerUnset() }

// globalMeterUnset is globalTracerUnset for the meter provider.
func globalMeterUnset() bool { return otelconv.GlobalMeterUnset() }

// Propagator returns the propagator the observer reads trace context with.
func (o *Observer) Propagator() propagation.TextMapPropagator { return o.prop }

// StartOperation starts the operation's span (SERVER, or CLIENT for a request the server sends),
// timed from op.Start, and returns the context that carries it.
func (o *Observer) StartOperation(ctx context.Context, op *core.Operation) context.Context {
	tracer := o.activeTracer()
	if tracer == nil {
		return ctx
	}
	parent := ctx
	var links []trace.Link
	if op.TraceParent != "" {
		metaCtx := o.prop.Extract(ctx, metaCarrier{op})
		msc := trace.SpanContextFromContext(metaCtx)
		ambient := trace.SpanContextFromContext(ctx)
		if msc.IsValid() && !msc.Equal(ambient) {
			parent = metaCtx
			if ambient.IsValid() {
				links = []trace.Link{{SpanContext: ambient}}
			}
		}
	}
	kind := trace.SpanKindServer
	if op.Outgoing {
		kind = trace.SpanKindClient
	}
	ctx, span := tracer.Start(parent, o.spanName(op),
		trace.WithSpanKind(kind),
		trace.WithTimestamp(op.Start),
		trace.WithLinks(links...),
	)
	if span.IsRecording() {
		span.SetAttributes(o.spanAttributes(op)...)
	}
	return ctx
}

// EndOperation records the outcome on the span, ends it at op.End, and records the duration.
func (o *Observer) EndOperation(ctx context.Context, op *core.Operation) {
	if o.tracer != nil {
		span := trace.SpanFromContext(ctx)
		if span.IsRecording() {
			o.endSpan(span, op)
		}
	}
	h := o.serverOps
	if op.Outgoing {
		h = o.clientOps
	}
	if h == nil || !h.Enabled(ctx) {
		return
	}
	h.Record(ctx, op.End.Sub(op.Start).Seconds(), metric.WithAttributes(o.metricAttributes(op)...))
}

// SessionEnded records the session's duration.
func (o *Observer) SessionEnded(s *core.SessionReport) {
	ctx := context.Background()
	if o.sessions == nil || !o.sessions.Enabled(ctx) {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if s.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrProtocolVersion, s.ProtocolVersion))
	}
	attrs = appendTransport(attrs, s.Transport)
	o.sessions.Record(ctx, s.End.Sub(s.Start).Seconds(), metric.WithAttributes(attrs...))
}

func (o *Observer) spanName(op *core.Operation) string {
	if op.Target == "" {
		return op.Method
	}
	switch op.Method {
	case "tools/call", "prompts/get":
		return op.Method + " " + op.Target
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if o.opts.ResourceURIInSpanName {
			return op.Method + " " + op.Target
		}
	}
	return op.Method
}

func (o *Observer) spanAttributes(op *core.Operation) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, attribute.String(AttrMethodName, op.Method))
	switch id := op.RequestID.Raw().(type) {
	case int64:
		attrs = append(attrs, attribute.String(AttrRequestID, strconv.FormatInt(id, 10)))
	case string:
		attrs = append(attrs, attribute.String(AttrRequestID, id))
	}
	if op.SessionID != "" && !op.Modern {
		attrs = append(attrs, attribute.String(AttrSessionID, op.SessionID))
	}
	attrs = appendTarget(attrs, op, true)
	if op.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrProtocolVersion, op.ProtocolVersion))
	}
	if o.opts.RecordContent && op.Method == "tools/call" && !op.Outgoing {
		if args := toolArguments(op.Params); args != "" {
			attrs = append(attrs, attribute.String(AttrToolCallArguments, args))
		}
	}
	return appendTransport(attrs, op.Transport)
}

func (o *Observer) endSpan(span trace.Span, op *core.Operation) {
	if !op.Modern {
		// A legacy session's id and version are known at the end of initialize only.
		if op.SessionID != "" {
			span.SetAttributes(attribute.String(AttrSessionID, op.SessionID))
		}
		if op.ProtocolVersion != "" {
			span.SetAttributes(attribute.String(AttrProtocolVersion, op.ProtocolVersion))
		}
	}
	switch {
	case op.ErrorCode != 0:
		code := strconv.FormatInt(op.ErrorCode, 10)
		span.SetAttributes(attribute.String(AttrErrorType, code), attribute.String(AttrResponseStatusCode, code))
		span.SetStatus(codes.Error, op.ErrorMessage)
	case op.ErrorType != "":
		span.SetAttributes(attribute.String(AttrErrorType, op.ErrorType))
		span.SetStatus(codes.Error, op.ErrorMessage)
	case op.ToolError:
		span.SetAttributes(attribute.String(AttrErrorType, ErrorTypeToolError))
		span.SetStatus(codes.Error, "tool error")
	}
	if o.opts.RecordContent && op.Method == "tools/call" && !op.Outgoing && op.Result != nil {
		span.SetAttributes(attribute.String(AttrToolCallResult, string(op.Result)))
	}
	span.End(trace.WithTimestamp(op.End))
}

func (o *Observer) metricAttributes(op *core.Operation) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, attribute.String(AttrMethodName, op.Method))
	attrs = appendTarget(attrs, op, o.opts.ResourceURIOnMetrics)
	switch {
	case op.ErrorCode != 0:
		code := strconv.FormatInt(op.ErrorCode, 10)
		attrs = append(attrs, attribute.String(AttrErrorType, code), attribute.String(AttrResponseStatusCode, code))
	case op.ErrorType != "":
		attrs = append(attrs, attribute.String(AttrErrorType, op.ErrorType))
	case op.ToolError:
		attrs = append(attrs, attribute.String(AttrErrorType, ErrorTypeToolError))
	}
	if op.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrProtocolVersion, op.ProtocolVersion))
	}
	return appendTransport(attrs, op.Transport)
}

// appendTarget adds the attributes that name what the operation works on.
func appendTarget(attrs []attribute.KeyValue, op *core.Operation, uri bool) []attribute.KeyValue {
	if op.Target == "" {
		if op.Method == "tools/call" {
			attrs = append(attrs, attribute.String(AttrOperationName, otelconv.OperationExecuteTool))
		}
		return attrs
	}
	switch op.Method {
	case "tools/call":
		attrs = append(attrs, attribute.String(AttrToolName, op.Target), attribute.String(AttrOperationName, otelconv.OperationExecuteTool))
	case "prompts/get":
		attrs = append(attrs, attribute.String(AttrPromptName, op.Target))
	default:
		if uri {
			attrs = append(attrs, attribute.String(AttrResourceURI, op.Target))
		}
	}
	return attrs
}

func appendTransport(attrs []attribute.KeyValue, t core.Transport) []attribute.KeyValue {
	if t.Network != "" {
		attrs = append(attrs, attribute.String(AttrNetworkTransport, t.Network))
	}
	if t.Protocol != "" {
		attrs = append(attrs, attribute.String(AttrNetworkProtocolName, t.Protocol))
	}
	if t.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrNetworkProtocolVer, t.ProtocolVersion))
	}
	return attrs
}

// toolArguments returns the arguments member of tools/call params as JSON text, "" without one.
func toolArguments(params json.RawMessage) string {
	var p struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return string(p.Arguments)
}

// metaCarrier reads the W3C trace context members of params._meta.
type metaCarrier struct{ op *core.Operation }

func (c metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.op.TraceParent
	case "tracestate":
		return c.op.TraceState
	case "baggage":
		return c.op.Baggage
	}
	return ""
}

func (metaCarrier) Set(string, string) {}

func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, 3)
	for _, k := range [...]string{"traceparent", "tracestate", "baggage"} {
		if c.Get(k) != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
