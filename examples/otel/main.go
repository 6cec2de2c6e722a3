// Command otel serves the hello-style server over HTTP with OpenTelemetry tracing exported to
// stdout: one SERVER span per exchange, named after the MCP method and target
// ("tools/call add"), with the MCP semantic-convention attributes.
//
//	go run ./examples/otel -addr 127.0.0.1:8082
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// AddInput is the add tool's arguments.
type AddInput struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// AddOutput is the add tool's result.
type AddOutput struct {
	Sum float64 `json:"sum"`
}

func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "otel-example", Version: "1.0.0"}, core.Options{})
	core.AddTool(s, &core.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *core.ToolRequest, in AddInput) (*core.CallToolResult, AddOutput, error) {
			// The handler's context carries the server span: child spans nest under it.
			_, span := otel.Tracer("otel-example").Start(ctx, "add numbers")
			defer span.End()
			return nil, AddOutput{Sum: in.A + in.B}, nil
		})
	return s
}

func newTracerProvider() (*sdktrace.TracerProvider, error) {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stdout), stdouttrace.WithPrettyPrint())
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), nil
}

func newHandler(s *core.Server, tp trace.TracerProvider) *mcphttp.Handler {
	return mcphttp.New(s, mcphttp.Options{TracerProvider: tp})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	flag.Parse()
	tp, err := newTracerProvider()
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	otel.SetTracerProvider(tp)
	// W3C trace context from HTTP headers and from params._meta.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := newHandler(newServer(), tp)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := mcphttp.NewHTTPServer(*addr, mux, mcphttp.HTTPServerOptions{})
	go func() {
		<-ctx.Done()
		// The MCP handler first: it ends its long-lived streams, which srv.Shutdown waits for.
		down, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(down)
		_ = srv.Shutdown(down)
	}()
	log.Printf("otel example: MCP at http://%s/mcp, spans on stdout", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		_ = h.Close()
		log.Print(err)
	}
}
