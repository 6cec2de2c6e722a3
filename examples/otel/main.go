// Command otel serves a small server with OpenTelemetry spans and metrics (the MCP semantic
// conventions: a SERVER span per message named after the method and target, "tools/call add",
// and the mcp.server.operation.duration and mcp.server.session.duration histograms), over either
// transport, through one otelmcp.Observer.
//
//	go run ./examples/otel -addr 127.0.0.1:8082   # Streamable HTTP; spans and metrics on stdout
//	go run ./examples/otel -stdio                 # stdio; spans and metrics on stderr
//
// Over stdio, stdout is the protocol channel: the exporters write to stderr, and the metrics are
// flushed when the input ends.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/stdio"
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

func newServer(obs core.Observer) *core.Server {
	s := core.NewServer(core.Implementation{Name: "otel-example", Version: "1.0.0"}, core.Options{Observer: obs})
	core.AddTool(s, &core.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *core.ToolRequest, in AddInput) (*core.CallToolResult, AddOutput, error) {
			// The handler's context carries the server span: child spans nest under it.
			_, span := otel.Tracer("otel-example").Start(ctx, "add numbers")
			defer span.End()
			return nil, AddOutput{Sum: in.A + in.B}, nil
		})
	return s
}

// telemetry is the example's tracer and meter providers, exporting to w.
type telemetry struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

func newTelemetry(w io.Writer) (*telemetry, error) {
	texp, err := stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
	if err != nil {
		return nil, err
	}
	mexp, err := stdoutmetric.New(stdoutmetric.WithWriter(w), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return nil, err
	}
	return &telemetry{
		tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(texp)),
		// Metrics are exported every 10 s and once more at shutdown.
		mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, sdkmetric.WithInterval(10*time.Second)))),
	}, nil
}

// observer is what every transport reports through.
func (t *telemetry) observer() *otelmcp.Observer {
	return otelmcp.New(otelmcp.Options{TracerProvider: t.tp, MeterProvider: t.mp, Propagator: propagation.TraceContext{}})
}

// shutdown flushes the spans and metrics not exported yet.
func (t *telemetry) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.tp.Shutdown(ctx)
	_ = t.mp.Shutdown(ctx)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "listen address of Streamable HTTP")
	useStdio := flag.Bool("stdio", false, "serve stdio instead of HTTP (spans and metrics go to stderr)")
	flag.Parse()
	out := io.Writer(os.Stdout)
	if *useStdio {
		out = os.Stderr // stdout is the protocol channel
	}
	tel, err := newTelemetry(out)
	if err != nil {
		log.Fatal(err)
	}
	defer tel.shutdown()
	// The tool's own span uses the global provider.
	otel.SetTracerProvider(tel.tp)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer(tel.observer())
	if *useStdio {
		if err := stdio.Serve(ctx, s, stdio.Options{}); err != nil {
			log.Print(err)
		}
		return
	}
	h := mcphttp.New(s, mcphttp.Options{}) // takes the server's observer
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
	log.Printf("otel example: MCP at http://%s/mcp, spans and metrics on stdout", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		_ = h.Close()
		log.Print(err)
	}
}
