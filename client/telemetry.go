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
	"github.com/mcpkit/mcpkit/otelmcp"
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
}

// Attribute keys and metric names: the conventions the server side reports with (otelmcp).
const (
	attrMethod    = otelmcp.AttrMethodName
	attrProtocol  = otelmcp.AttrProtocolVersion
	attrSession   = otelmcp.AttrSessionID
	attrRequestID = otelmcp.AttrRequestID
	attrToolName  = otelmcp.AttrToolName
	attrOperation = otelmcp.AttrOperationName
	attrPrompt    = otelmcp.AttrPromptName
	attrResource  = otelmcp.AttrResourceURI
	attrErrorType = otelmcp.AttrErrorType
	attrRPCStatus = otelmcp.AttrResponseStatusCode

	metricSessionDuration = "mcp.client.session.duration"
)

type telemetry struct {
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
	tel := &telemetry{tracer: tp.Tracer(ScopeName), prop: prop, started: time.Now()}
	meter := mp.Meter(ScopeName)
	if h, err := meter.Float64Histogram(metricSessionDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP session as observed on the MCP client."),
		metric.WithExplicitBucketBoundaries(otelmcp.Buckets...)); err == nil {
		tel.session = h
	}
	h, err := meter.Float64Histogram(otelmcp.MetricClientOperationDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request or notification as observed on the sender."),
		metric.WithExplicitBucketBoundaries(otelmcp.Buckets...))
	if err == nil {
		tel.duration = h
	}
	return tel
}

// start opens the call's CLIENT span.
func (t *telemetry) start(ctx context.Context, c *Client, method string, params map[string]any) (context.Context, trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attribute.String(attrMethod, method))
	if c.version != "" {
		attrs = append(attrs, attribute.String(attrProtocol, c.version))
	}
	if c.link != nil {
		if sid := c.link.sessionID(); sid != "" {
			attrs = append(attrs, attribute.String(attrSession, sid))
		}
	}
	name := method
	switch method {
	case "tools/call":
		if n, _ := params["name"].(string); n != "" {
			attrs = append(attrs, attribute.String(attrToolName, n), attribute.String(attrOperation, "execute_tool"))
			name += " " + n
		}
	case "prompts/get":
		if n, _ := params["name"].(string); n != "" {
			attrs = append(attrs, attribute.String(attrPrompt, n))
			name += " " + n
		}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if u, _ := params["uri"].(string); u != "" {
			attrs = append(attrs, attribute.String(attrResource, u))
			name += " " + u
		}
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// requestID notes the JSON-RPC id of a request on the call's span (the last round's, with
// input_required retries).
func requestID(ctx context.Context, id core.ID) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		s := id.String()
		if unq, err := strconv.Unquote(s); err == nil {
			s = unq
		}
		span.SetAttributes(attribute.String(attrRequestID, s))
	}
}

// end closes the span and records the duration.
func (t *telemetry) end(ctx context.Context, span trace.Span, c *Client, method string, start time.Time, res any, err error) {
	attrs := []attribute.KeyValue{attribute.String(attrMethod, method)}
	if c.version != "" {
		attrs = append(attrs, attribute.String(attrProtocol, c.version))
	}
	if r, ok := res.(*core.CallToolResult); ok && err == nil && r.IsError {
		attrs = append(attrs, attribute.String(attrErrorType, otelmcp.ErrorTypeToolError))
		span.SetAttributes(attribute.String(attrErrorType, otelmcp.ErrorTypeToolError))
		span.SetStatus(codes.Error, "tool error")
	}
	if err != nil {
		kind := "_OTHER"
		var werr *core.Error
		switch {
		case errors.As(err, &werr):
			kind = strconv.FormatInt(werr.Code, 10)
			span.SetAttributes(attribute.String(attrRPCStatus, kind))
		case errors.Is(err, context.DeadlineExceeded):
			kind = "timeout"
		case errors.Is(err, context.Canceled):
			kind = "cancelled"
		}
		attrs = append(attrs, attribute.String(attrErrorType, kind))
		span.SetAttributes(attribute.String(attrErrorType, kind))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	if t.duration != nil {
		t.duration.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// sessionEnd records the session's duration when the client closes.
func (t *telemetry) sessionEnd(c *Client) {
	if t.session == nil {
		return
	}
	attrs := []attribute.KeyValue{}
	if c.version != "" {
		attrs = append(attrs, attribute.String(attrProtocol, c.version))
	}
	t.session.Record(context.Background(), time.Since(t.started).Seconds(), metric.WithAttributes(attrs...))
}

// inject writes the trace context of ctx into a request's _meta (traceparent, tracestate).
func (t *telemetry) inject(ctx context.Context, meta map[string]any) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
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
