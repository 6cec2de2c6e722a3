package mcphttp

import (
	"net"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/middleware"
)

// Defaults of HTTPServerOptions.
const (
	// DefaultReadHeaderTimeout is how long a client may take to send its request headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long an idle keep-alive connection stays open.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes bounds the size of a request's headers.
	DefaultMaxHeaderBytes = 64 << 10
)

// HTTPServerOptions configure NewHTTPServer. The zero value is the recommended setting for an MCP
// endpoint with long-lived SSE streams.
type HTTPServerOptions struct {
	// ReadHeaderTimeout bounds the time to read a request's headers. Zero means
	// DefaultReadHeaderTimeout (10 s); negative turns it off.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that carries no request for this long. Zero
	// means DefaultIdleTimeout (2 minutes); negative turns it off.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request headers, in bytes. Zero means DefaultMaxHeaderBytes
	// (64 KiB); negative is invalid.
	MaxHeaderBytes int
}

// HTTPServer is an *http.Server configured for an MCP endpoint, whose Serve and ListenAndServe
// watch request framing (see middleware.GuardFraming). Everything else is the embedded server's:
// Shutdown, Close, RegisterOnShutdown and the fields, which may still be adjusted before serving.
type HTTPServer struct {
	*http.Server
}

// NewHTTPServer returns a server for h on addr with the settings an MCP endpoint needs:
//   - ReadHeaderTimeout and IdleTimeout as in opts (10 s and 2 minutes by default), so a client
//     can hold a connection neither with slow headers nor idle between requests;
//   - no ReadTimeout and no WriteTimeout: they would cut long-lived SSE streams. The body read
//     is bounded per request by the decode layer (Options.BodyReadTimeout, 30 s), and every
//     write to a client by the SSE writer (Options.WriteTimeout, 30 s);
//   - MaxHeaderBytes as in opts (64 KiB by default);
//   - a ConnContext that lets the decode layer refuse requests framed both by Content-Length
//     and by Transfer-Encoding on the connections Serve and ListenAndServe accept.
//
// Serve TLS by wrapping a TLS listener's decrypted connections with middleware.GuardFraming and
// calling Serve, or accept ServeTLS without the framing guard. NewHTTPServer panics when
// opts.MaxHeaderBytes is negative.
func NewHTTPServer(addr string, h http.Handler, opts HTTPServerOptions) *HTTPServer {
	if opts.MaxHeaderBytes < 0 {
		panic("mcphttp: HTTPServerOptions.MaxHeaderBytes must not be negative")
	}
	return &HTTPServer{Server: &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: durationOr(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       durationOr(opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    intOr(opts.MaxHeaderBytes, DefaultMaxHeaderBytes),
		ConnContext:       middleware.FramingConnContext,
	}}
}

// Serve accepts connections on l, watching their framing, and serves them (see
// http.Server.Serve).
func (s *HTTPServer) Serve(l net.Listener) error {
	return s.Server.Serve(middleware.GuardFraming(l))
}

// ListenAndServe listens on TCP at Addr (":http" when empty) and calls Serve.
func (s *HTTPServer) ListenAndServe() error {
	addr := s.Addr
	if addr == "" {
		addr = ":http"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// durationOr maps the option rule onto an http.Server field: zero takes def, negative turns it
// off (net/http's zero).
func durationOr(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func intOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
