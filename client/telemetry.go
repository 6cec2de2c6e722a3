package client

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/otelconv"
)

// ScopeName is the instrumentation scope of the client's spans and metrics.
const ScopeName = "github.com/mcpkit/mcpkit/client"

// Telemetry configures the client's OpenTelemetry instrumentation: one CLIENT span per call,
// named after the method and its target ("tools/call greet"), with the attributes of the MCP
// semantic conventions; the mcp.client.operation.duration histogram; and the trace context
// injected into params._meta, so the server's span continues the caller's trace.
type Telemetry struct {
	// TracerProvider creates the tracer. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider creates the meter. Nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator injects the trace context. Nil means otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
	// ResourceURIInSpanName names the spans of resources/read, resources/subscribe and
	// resources/unsubscribe after the URI too ("resources/read file:///a"); off by default, as
	// the conventions advise, since URIs make span names of unbounded cardinality.
	ResourceURIInSpanName bool
	// ResourceURIOnMetrics adds mcp.resource.uri to the operation metric (opt-in in the
	// conventions, for the same reason).
	ResourceURIOnMetrics bool
}

type telemetry struct {
	opts     Telemetry
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	duration metric.Float64Histogram
	session  metric.Float64Histogram
	started  time.Time
}

func newTelemetry(t Telemetry) *telemetry {
	tp := t.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := t.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	prop := t.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	tel := &telemetry{opts: t, tracer: tp.Tracer(ScopeName), prop: prop, started: time.Now()}
	meter := mp.Meter(ScopeName)
	if h, err := meter.Float64Histogram(otelconv.MetricClientSessionDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP session as observed on the MCP client."),
		metric.WithExplicitBucketBoundaries(otelconv.Buckets...)); err == nil {
		tel.session = h
	}
	h, err := meter.Float64Histogram(otelconv.MetricClientOperationDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request or notification as observed on the sender."),
		metric.WithExplicitBucketBoundaries(otelconv.Buckets...))
	if err == nil {
		tel.duration = h
	}
	return tel
}

// target is what a call works on: a tool, a prompt or a resource URI ("" for none).
type target struct {
	key   string // otelconv.AttrToolName, otelconv.AttrPromptName or otelconv.AttrResourceURI
	value string
}

func targetOf(method string, params map[string]any) target {
	switch method {
	case "tools/call":
		n, _ := params["name"].(string)
		return target{otelconv.AttrToolName, n}
	case "prompts/get":
		n, _ := params["name"].(string)
		return target{otelconv.AttrPromptName, n}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		u, _ := params["uri"].(string)
		return target{otelconv.AttrResourceURI, u}
	}
	return target{}
}

// appendTarget adds the attributes naming the call's target; the URI only with uri.
func appendTarget(attrs []attribute.KeyValue, method string, tg target, uri bool) []attribute.KeyValue {
	if method == "tools/call" {
		attrs = append(attrs, attribute.String(otelconv.AttrOperationName, otelconv.OperationExecuteTool))
	}
	if tg.value != "" && (tg.key != otelconv.AttrResourceURI || uri) {
		attrs = append(attrs, attribute.String(tg.key, tg.value))
	}
	return attrs
}

// appendPeer adds the transport's attributes: network.transport, network.protocol.name and
// server.address/port where the transport has them.
func appendPeer(attrs []attribute.KeyValue, c *Client) []attribute.KeyValue {
	if c.link == nil {
		return attrs
	}
	p := c.link.peer()
	if p.network != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrNetworkTransport, p.network))
	}
	if p.protocol != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrNetworkProtocolName, p.protocol))
	}
	if p.address != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrServerAddress, p.address))
		if p.port > 0 {
			attrs = append(attrs, attribute.Int(otelconv.AttrServerPort, p.port))
		}
	}
	return attrs
}

// start opens the call's CLIENT span, named "{method} {tool or prompt}" (the URI only with
// ResourceURIInSpanName).
func (t *telemetry) start(ctx context.Context, c *Client, method string, params map[string]any) (context.Context, trace.Span) {
	tg := targetOf(method, params)
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, attribute.String(otelconv.AttrMethodName, method))
	if c.version != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrProtocolVersion, c.version))
	}
	if c.link != nil && !c.modern {
		if sid := c.link.sessionID(); sid != "" {
			attrs = append(attrs, attribute.String(otelconv.AttrSessionID, sid))
		}
	}
	attrs = appendTarget(attrs, method, tg, true)
	attrs = appendPeer(attrs, c)
	name := method
	if tg.value != "" && (tg.key != otelconv.AttrResourceURI || t.opts.ResourceURIInSpanName) {
		name += " " + tg.value
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// requestID notes the JSON-RPC id of a request on the call's span (the last round's, with
// input_required retries).
func requestID(ctx context.Context, id jsonrpc.ID) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		s := id.String()
		if unq, err := strconv.Unquote(s); err == nil {
			s = unq
		}
		span.SetAttributes(attribute.String(otelconv.AttrRequestID, s))
	}
}

// errorType classifies a failed call for error.type: the JSON-RPC code, "timeout",
// "cancelled" or "_OTHER". code reports whether it is a JSON-RPC code.
func errorType(err error) (kind string, code bool) {
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		return strconv.FormatInt(werr.Code, 10), true
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", false
	case errors.Is(err, context.Canceled):
		return "cancelled", false
	}
	return "_OTHER", false
}

// end closes the span and records the duration, with the conventions' attributes of
// mcp.client.operation.duration.
func (t *telemetry) end(ctx context.Context, span trace.Span, c *Client, method string, params map[string]any, start time.Time, res any, err error) {
	ctx = context.WithoutCancel(ctx)
	metered := t.duration != nil && t.duration.Enabled(ctx)
	if !metered && !span.IsRecording() {
		span.End() // no-op providers: nothing to describe
		return
	}
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, attribute.String(otelconv.AttrMethodName, method))
	attrs = appendTarget(attrs, method, targetOf(method, params), t.opts.ResourceURIOnMetrics)
	version := c.version
	if r, ok := res.(*initializeResult); ok && err == nil {
		version = r.ProtocolVersion // settled by this very answer
	}
	if version != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrProtocolVersion, version))
		span.SetAttributes(attribute.String(otelconv.AttrProtocolVersion, version))
	}
	attrs = appendPeer(attrs, c)
	if r, ok := res.(*core.CallToolResult); ok && err == nil && r.IsError {
		attrs = append(attrs, attribute.String(otelconv.AttrErrorType, otelconv.ErrorTypeToolError))
		span.SetAttributes(attribute.String(otelconv.AttrErrorType, otelconv.ErrorTypeToolError))
		span.SetStatus(codes.Error, "tool error")
	}
	if err != nil {
		kind, code := errorType(err)
		attrs = append(attrs, attribute.String(otelconv.AttrErrorType, kind))
		span.SetAttributes(attribute.String(otelconv.AttrErrorType, kind))
		if code {
			attrs = append(attrs, attribute.String(otelconv.AttrResponseStatusCode, kind))
			span.SetAttributes(attribute.String(otelconv.AttrResponseStatusCode, kind))
		}
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	if metered {
		t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// sessionEnd records the session's duration when the client closes (error.type when the
// connection had failed before).
func (t *telemetry) sessionEnd(c *Client) {
	if t.session == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	if c.version != "" {
		attrs = append(attrs, attribute.String(otelconv.AttrProtocolVersion, c.version))
	}
	attrs = appendPeer(attrs, c)
	c.mu.Lock()
	lost := c.closeErr
	c.mu.Unlock()
	if lost != nil {
		kind, _ := errorType(lost)
		attrs = append(attrs, attribute.String(otelconv.AttrErrorType, kind))
	}
	t.session.Record(context.Background(), time.Since(t.started).Seconds(), metric.WithAttributes(attrs...))
}

// inject writes the trace context of ctx into a request's _meta (traceparent, tracestate).
// A traceparent the caller put there (WithMeta) is kept.
func (t *telemetry) inject(ctx context.Context, meta map[string]any) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	if _, ok := meta["traceparent"]; ok {
		return
	}
	t.prop.Inject(ctx, metaCarrier(meta))
}

// metaCarrier lets a propagator write into _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
