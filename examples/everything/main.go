// Command everything is the conformance fixture of the kit: a server that offers the tools,
// resources, prompts and completions the official MCP conformance suite calls, with the exact
// results the suite expects.
//
//	go run ./examples/everything                          # Streamable HTTP on 127.0.0.1:3000, endpoint /mcp
//	go run ./examples/everything -http 127.0.0.1:8080     # another address
//	go run ./examples/everything -stdio                   # newline-delimited JSON-RPC on stdin/stdout
//
// The HTTP endpoint keeps the kit's default DNS-rebinding protection, which accepts loopback
// hosts only: bind it to a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/stdio"
)

// shutdownTimeout bounds the graceful shutdown of the HTTP server.
const shutdownTimeout = 5 * time.Second

// newServer builds the fixture server with everything registered. The order of registration is
// the order of the listings: the trivial entries come first, because some scenarios use the
// first listed tool or resource.
func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "mcpkit-everything", Version: "1.0.0"}, core.Options{
		SubscribeHandler:  core.AcceptSubscription,
		CompletionHandler: complete,
	})
	addTools(s)
	addResources(s)
	addPrompts(s)
	addTaskTools(s)
	addSkills(s)
	addInteropTools(s)
	return s
}

func main() {
	addr := flag.String("http", "127.0.0.1:3000", "serve Streamable HTTP on this address (endpoint /mcp)")
	useStdio := flag.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := newServer()
	if *useStdio {
		if err := serveStdio(ctx, s); err != nil {
			fmt.Fprintln(os.Stderr, "everything:", err)
			os.Exit(1)
		}
		return
	}
	if err := serveHTTP(ctx, s, *addr); err != nil {
		log.Fatalf("everything: %v", err)
	}
}

// serveStdio serves s on stdin and stdout until the input ends or ctx ends (a signal).
func serveStdio(ctx context.Context, s *core.Server) error {
	if err := stdio.Serve(ctx, s, stdio.Options{}); err != nil {
		return err
	}
	return nil
}

// newHandler returns the HTTP handler of the fixture: the kit's endpoint, at /mcp and at /.
func newHandler(s *core.Server) (http.Handler, *mcphttp.Handler) {
	// Resumable request streams: the suite's server-sse-polling scenario checks the priming
	// event, the retry field and the replay after test_reconnection closes its stream.
	h := mcphttp.New(s, mcphttp.Options{Resumability: mcphttp.ResumabilityOptions{Enabled: true}})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	return mux, h
}

// serveHTTP serves s on addr until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, s *core.Server, addr string) error {
	mux, h := newHandler(s)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := mcphttp.NewHTTPServer("", mux, mcphttp.HTTPServerOptions{})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("everything: serving MCP at http://%s/mcp", ln.Addr())

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Printf("everything: shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// The endpoint first: it ends the long-lived SSE streams, which http.Server.Shutdown would
	// otherwise wait for.
	_ = h.Shutdown(shutdown)
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
