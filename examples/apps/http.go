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
	"github.com/mcpkit/mcpkit/middleware"
)

// handler returns the endpoint with the CORS layer in front: browser pages of the allowed
// origins (a web host) may call it; the Origin guard inside refuses every other origin.
func handler(s *core.Server, origins []string) (http.Handler, *mcphttp.Handler) {
	guard := middleware.OriginGuardOptions{AllowedOrigins: origins}
	h := mcphttp.New(s, mcphttp.Options{Origin: guard})
	return middleware.CORS(middleware.CORSOptions{Origins: guard})(h), h
}

// serveHTTP serves s at http://addr/mcp until ctx ends, then shuts down gracefully.
func serveHTTP(ctx context.Context, s *core.Server, addr string, origins []string) error {
	endpoint, h := handler(s, origins)
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	srv := mcphttp.NewHTTPServer(addr, mux, mcphttp.HTTPServerOptions{})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("apps: serving MCP at http://%s/mcp", ln.Addr()) // the port is bound: clients may connect
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
