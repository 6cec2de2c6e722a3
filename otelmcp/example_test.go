package otelmcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
)

// One observer, set on the server, reports every transport: here Streamable HTTP, whose spans
// (the MCP operations, and the HTTP-level GET stream and DELETE of the session) all come from the provider
// given to New. A program gives New its SDK provider (with an exporter) instead of the recorder.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	obs := otelmcp.New(otelmcp.Options{TracerProvider: tp})
	s := core.NewServer(core.Implementation{Name: "traced", Version: "1.0.0"}, core.Options{Observer: obs})
	s.AddTool(&core.Tool{Name: "greet"}, func(context.Context, *core.ToolRequest) (*core.CallToolResult, error) {
		return core.TextResult("Hello!"), nil
	})
	h := mcphttp.New(s, mcphttp.Options{}) // takes the server's observer
	srv := httptest.NewServer(h)

	ctx := context.Background()
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: srv.URL}, client.Options{Lifecycle: client.Legacy})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "greet", nil); err != nil {
		log.Fatal(err)
	}
	c.Close()   // DELETEs the session
	srv.Close() // waits for the handlers, so every span has ended
	_ = h.Close()

	var lines []string
	for _, span := range rec.Ended() {
		lines = append(lines, span.SpanKind().String()+" "+span.Name())
	}
	slices.Sort(lines) // the GET stream and the DELETE that ends it finish in either order
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// server DELETE
	// server GET
	// server initialize
	// server notifications/initialized
	// server tools/call greet
}
