package main

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

// serveHTTP serves s at http://addr/mcp until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, s *core.Server, addr string) error {
	h := mcphttp.New(s, mcphttp.Options{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := mcphttp.NewHTTPServer(addr, mux, mcphttp.HTTPServerOptions{})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("hello: serving MCP at http://%s/mcp", ln.Addr()) // the port is bound: clients may connect
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.Shutdown(shutdown)
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
