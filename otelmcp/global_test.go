package otelmcp_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// The global providers, before a program sets any, record nothing: an observer and an HTTP stack
// built on them create no span and allocate nothing for it. Once the program sets a provider, the
// same observer and stack (built before) record as usual. This is the only test of the package
// that touches the process-wide providers; it sets them once and for good.
func TestGlobalProvidersUnsetThenSet(t *testing.T) {
	if !otelmcp.TracingOff(otel.GetTracerProvider()) {
		t.Skip("the global tracer provider was set earlier in this process (a repeated run)")
	}
	obs := otelmcp.New(otelmcp.Options{})
	if obs.Enabled() || obs.Tracer() != nil {
		t.Fatal("an observer on unset global providers reports itself enabled")
	}
	ctx := context.Background()
	op := &core.Operation{Method: "tools/call", Target: "greet"}
	if got := obs.StartOperation(ctx, op); got != ctx {
		t.Fatal("StartOperation on unset global providers returned a new context")
	}
	if n := testing.AllocsPerRun(100, func() {
		obs.EndOperation(obs.StartOperation(ctx, op), op)
	}); n != 0 {
		t.Fatalf("an operation on unset global providers allocates %v times", n)
	}
	h := mcphttp.New(fixture(nil), mcphttp.Options{Stateless: true, JSONResponse: true})
	defer h.Close()
	call := func() { statelessCall(t, h) }
	call()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	if otelmcp.TracingOff(otel.GetTracerProvider()) || !obs.Enabled() || obs.Tracer() == nil {
		t.Fatal("the observer stays off once the global providers are set")
	}
	call()
	ended := spans.Ended()
	if len(ended) != 1 || ended[0].Name() != "tools/call greet" || ended[0].SpanKind() != trace.SpanKindServer {
		t.Fatalf("spans after the providers were set: %v", ended)
	}
	var method bool
	for _, a := range ended[0].Attributes() {
		method = method || (a.Key == "http.request.method" && a.Value.AsString() == http.MethodPost)
	}
	if !method {
		t.Errorf("the span has no http.request.method: the tracing layer did not take part (%v)", ended[0].Attributes())
	}
	var count uint64
	for _, p := range (&telemetry{reader: reader}).histogram(t, otelmcp.MetricServerOperationDuration) {
		count += p.Count
	}
	if count != 1 {
		t.Errorf("%s recorded %d operations, want 1", otelmcp.MetricServerOperationDuration, count)
	}
}
