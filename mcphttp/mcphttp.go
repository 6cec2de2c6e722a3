// Package mcphttp serves MCP over Streamable HTTP as an ordinary net/http handler built from the
// layers of package middleware.
//
// New composes the default stack:
//
//	recover -> tracing -> request log -> origin/host guard -> method + Accept
//	        -> body limit + decode -> era router
//	           legacy: protocol-version check -> session validator -> SSE streams
//	                   -> endpoint (legacy POST: JSON or SSE; GET stream; DELETE)
//	           modern: mirror-header checks (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*)
//	                   -> SSE streams
//	                   -> modern handler (2026-07-28 POST: JSON, or SSE carrying the request's
//	                      notifications live; subscriptions/listen streams)
//
// The era router (middleware.EraRouter) sends each request to the lifecycle it belongs to, by its
// MCP-Protocol-Version header first and its shape second: one endpoint serves stateful sessions
// (initialize, Mcp-Session-Id) and stateless 2026-07-28 requests side by side. The modern branch
// shares the endpoint's lifetime (ModernOptions.Lifetime: Close cancels its requests, Shutdown
// waits for them); Close ends the listen streams gracefully first.
//
// Each layer answers its own failures with the status and JSON-RPC error the protocol requires,
// and each check of a request has exactly one of them as its owner: the endpoint, the modern
// handler and the listen handler repeat none of the layers' checks, and read the message Decode
// decoded (a POST that reaches them without one is answered 500); their event streams are the SSE
// layer's (middleware.SSE, with Options.KeepAlive and WriteTimeout), which ends each stream when
// its handler returns. Every layer New composes is exported, so a stack assembled by hand is
// exactly the default one:
//
//	store := session.NewMemory(session.MemoryOptions{})
//	obs := otelmcp.New(otelmcp.Options{})
//	ep := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: store, Observer: obs})
//	defer ep.Close()
//	listeners := mcphttp.NewListeners(server, mcphttp.ListenersOptions{})
//	defer listeners.Close()
//	modern := mcphttp.NewModern(server, mcphttp.ModernOptions{ChangeNotifications: true, Listen: listeners, Lifetime: ep})
//	h := middleware.Recover(middleware.RecoverOptions{})(
//		middleware.Tracing(middleware.TracingOptions{Observer: obs})(
//			middleware.OriginGuard(middleware.OriginGuardOptions{})(
//				myAuth( // the team's own authentication; it names the caller with core.WithPrincipal
//					middleware.MethodAccept(middleware.MethodAcceptOptions{})(
//						middleware.Decode(middleware.DecodeOptions{})(
//							middleware.EraRouter(middleware.EraRouterOptions{
//								Modern: middleware.MirrorHeaders(middleware.MirrorHeadersOptions{Server: server})(
//									middleware.SSE(middleware.SSEOptions{KeepAlive: -1})(modern)),
//							})(
//								middleware.ProtocolVersion(middleware.ProtocolVersionOptions{})(
//									middleware.SessionValidator(middleware.SessionValidatorOptions{Sessions: ep})(
//										middleware.SSE(middleware.SSEOptions{})(ep))))))))))
//
// The endpoint never holds a lock shared with other sessions while it writes to a client, and
// every write has a deadline (WriteTimeout). Messages for a session's GET stream (broadcasts,
// session-level server-to-client requests) are queued and written by that stream's own handler,
// so whoever sends them never waits on the client; a client that falls StreamQueueSize messages
// behind loses the stream and re-opens it. A request's progress, log messages and
// server-to-client requests are written on the request's own stream, by its own handler. A
// client that stops reading therefore holds up only its own streams, for at most WriteTimeout.
//
// Options.Resumability makes legacy request streams resumable (the 2025-11-25 transport's
// "Resumability and Redelivery"): a priming event and a retry field open each request stream,
// messages carry ids of the form "<stream>-<n>" and are kept in a session.EventStore (bounded; forgotten
// once the response reached the client, and when the session ends), a GET with Last-Event-ID
// replays the rest of that stream of that session, and a handler may close its connection early
// with core.Call.CloseStream so the client polls. See ResumabilityOptions.
package mcphttp

import (
	"context"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/session"
)

// Options configure the default stack. The zero value is the secure default: sessions with a
// 30-minute idle timeout and at most 10000 of them, 4 MiB request bodies, DNS-rebinding
// protection allowing loopback hosts only, SSE responses with keepalive comments, tracing through
// the global OpenTelemetry provider, no request log.
type Options struct {
	// Stateless serves every POST on its own short-lived session: no Mcp-Session-Id, GET and
	// DELETE answer 405, and handlers cannot send requests to the client.
	Stateless bool
	// JSONResponse answers requests with one JSON object instead of an SSE stream.
	JSONResponse bool

	// MaxRequestBytes bounds a request body. Zero means 4 MiB; bigger bodies get 413.
	MaxRequestBytes int64
	// BodyReadTimeout bounds the time a request body may take to arrive once its headers did.
	// Zero means 30 s (middleware.DefaultBodyReadTimeout); past it the client gets 408 and the
	// connection is closed. Negative turns the bound off.
	BodyReadTimeout time.Duration
	// Origin configures the Host and Origin checks (AllowedHosts, AllowedOrigins). The zero value
	// allows loopback hosts and same-origin requests only.
	Origin middleware.OriginGuardOptions

	// Store holds sessions. Nil means an in-memory store built from Sessions. Close and Shutdown
	// close it. Ignored in stateless mode.
	Store session.Store
	// Sessions configure the default in-memory store (idle timeout, cap, reap interval); ignored
	// when Store is set.
	Sessions session.MemoryOptions
	// Principal names who is calling, once per request (for example the subject an existing
	// authentication layer put in the request's context); "" means nobody. The endpoint stores
	// it with core.WithPrincipal, and that one principal is what everything tied to a caller
	// reads: a legacy session answers only the principal that opened it (403 otherwise; an
	// authenticated principal never matches a session opened by nobody, nor the reverse), listen
	// ids are scoped per principal, a requestState is sealed for it, a task is owned by it. Nil
	// uses the principal already in the request's context (set by an auth layer in front, such
	// as package auth), or nobody.
	Principal func(r *http.Request) string
	// MaxSessionsPerCaller caps the sessions one caller (its principal, else its remote
	// address: see CallerKey) may hold at once; past it initialize answers 429. Zero means
	// DefaultMaxSessionsPerCaller (1000); negative removes the cap.
	MaxSessionsPerCaller int
	// Callers keeps the per-caller counts of MaxSessionsPerCaller, Listen.MaxStreamsPerCaller and
	// Resumability.MaxCallsPerCaller in a store the replicas share (redisstore.NewCaps), so that a
	// caller's share holds across replicas instead of per process; it takes the place of
	// Listen.Callers. Nil counts them in each process.
	Callers CallerCounter

	// KeepAlive is the interval of keepalive comments on the legacy SSE streams (request streams
	// and the GET stream: the SSE layer in front of the endpoint); 2026-07-28 request streams
	// carry none. Zero means 30 s; negative turns them off.
	KeepAlive time.Duration
	// WriteTimeout bounds each write to a client (the SSE layers' streams, and the listen streams
	// unless Listen.WriteTimeout is set). Zero means 30 s; negative turns it off.
	WriteTimeout time.Duration

	// Resumability turns on resumable SSE streams for legacy requests: a priming event and a
	// retry field open each request stream, messages carry event ids and are kept (bounded) until
	// delivered, a GET with Last-Event-ID replays what a client missed, and handlers may close
	// their stream early (core.Call.CloseStream). The zero value keeps it off. See
	// ResumabilityOptions. New panics when it is enabled with Stateless.
	Resumability ResumabilityOptions

	// Logger receives what the stack logs at error level (a recovered panic with its value and
	// stack) and, with LogRequests, the request log. Nil means zerolog's global logger
	// (github.com/rs/zerolog/log.Logger, stderr unless the program changed it); a pointer to
	// zerolog.Nop() silences it. Handler errors are logged by the server: core.Options.Logger,
	// of the same type.
	Logger *zerolog.Logger
	// LogRequests adds the request log: one line per exchange on Logger at info level (method,
	// session fingerprint, status, duration, bytes; never bodies or secrets). Off by default.
	LogRequests bool
	// Observer receives every MCP operation and the end of every legacy session (see
	// core.Observer). Nil means the server's (core.Options.Observer) when it has one, otherwise an
	// otelmcp.Observer on TracerProvider and MeterProvider, so that HTTP and stdio report the same
	// spans and metrics.
	Observer core.Observer
	// TracerProvider makes the tracer of the spans of exchanges without an MCP message (GET,
	// DELETE, refusals before decoding), and of the default observer's spans when Observer is nil
	// and the server has none. Nil means the observer's provider when it has one (an
	// otelmcp.Observer: giving the provider to otelmcp.New is enough for every span), else the
	// global provider.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter of the operation and session metrics when Observer is nil and
	// the server has none. Nil means the global provider.
	MeterProvider metric.MeterProvider
	// OnPanic is told about a recovered panic (the client gets a 500).
	OnPanic func(r *http.Request, v any)

	// MaxRequestNotifications bounds the notifications one 2026-07-28 request may send (its
	// SSE stream). Zero means 1000; past it notify calls report the notification was dropped.
	MaxRequestNotifications int
	// Listen configures subscriptions/listen (stream cap, keepalive, write timeout). A zero
	// Listen.WriteTimeout takes WriteTimeout.
	Listen ListenersOptions
	// DisableListen turns subscriptions/listen off (for hosts that buffer responses): the method
	// then answers 404 -32601, and server/discover stops advertising listChanged and subscribe
	// to 2026-07-28 clients.
	DisableListen bool
}

// Handler is the composed endpoint: an http.Handler that owns goroutines (the session reaper,
// stream writers) and state (sessions, listen streams). Keep the value New returns and call
// Close or Shutdown when the server stops:
//
//	h := mcphttp.New(server, mcphttp.Options{})
//	defer h.Close()
//	mux.Handle("/mcp", h)
//
// Only New makes a usable Handler: the methods of a zero Handler panic with a message saying so.
type Handler struct {
	stack     http.Handler
	endpoint  *Endpoint
	store     session.Store
	listeners *Listeners
}

const msgZeroHandler = "mcphttp: Handler used without New (build it with mcphttp.New)"

// built panics when h was not made by New.
func (h *Handler) built() {
	if h == nil || h.endpoint == nil {
		panic(msgZeroHandler)
	}
}

// New returns the Streamable HTTP endpoint for s with the default layers. Mount it at your MCP
// path (for example /mcp) in any router, and Close or Shutdown it when the server stops. It
// panics when s is nil or an option is invalid, naming the option.
func New(s *core.Server, opts Options) *Handler {
	if s == nil {
		panic("mcphttp: New needs a *core.Server")
	}
	opts.validate()
	store := opts.Store
	switch {
	case opts.Stateless:
		store = nil // never used, never closed by this handler
	case store == nil:
		store = session.NewMemory(opts.Sessions)
	}
	obs := opts.Observer
	if obs == nil {
		obs = transport.Core.Observer(s)
	}
	if obs == nil {
		obs = otelmcp.New(otelmcp.Options{TracerProvider: opts.TracerProvider, MeterProvider: opts.MeterProvider})
	}
	ep := NewEndpoint(s, EndpointOptions{
		Observer:             obs,
		Stateless:            opts.Stateless,
		JSONResponse:         opts.JSONResponse,
		Store:                store,
		Resumability:         opts.Resumability,
		MaxSessionsPerCaller: opts.MaxSessionsPerCaller,
		Callers:              opts.Callers,
	})
	var listeners *Listeners
	if !opts.DisableListen {
		lo := opts.Listen
		if lo.WriteTimeout == 0 {
			lo.WriteTimeout = opts.WriteTimeout
		}
		if opts.Callers != nil {
			lo.Callers = opts.Callers
		}
		listeners = NewListeners(s, lo)
	}
	modern := NewModern(s, ModernOptions{
		MaxNotifications:    opts.MaxRequestNotifications,
		ChangeNotifications: listeners != nil,
		Listen:              listeners,
		Lifetime:            ep,
	})
	// The layers, innermost first; each check has one of them as its only owner. Each handler
	// that streams has an SSE layer right in front of it.
	legacySSE, modernSSE := opts.sse()
	h := middleware.SSE(legacySSE)(ep)
	if !opts.Stateless {
		h = middleware.SessionValidator(middleware.SessionValidatorOptions{Sessions: ep})(h)
	}
	h = middleware.ProtocolVersion(middleware.ProtocolVersionOptions{Stateless: opts.Stateless})(h)
	h = middleware.EraRouter(middleware.EraRouterOptions{
		Modern: middleware.MirrorHeaders(middleware.MirrorHeadersOptions{Server: s})(
			middleware.SSE(modernSSE)(modern)),
	})(h)
	h = middleware.Decode(middleware.DecodeOptions{MaxRequestBytes: opts.MaxRequestBytes, BodyReadTimeout: opts.BodyReadTimeout})(h)
	h = middleware.MethodAccept(middleware.MethodAcceptOptions{Stateless: opts.Stateless, JSONResponse: opts.JSONResponse})(h)
	if opts.Principal != nil {
		h = middleware.Principal(middleware.PrincipalOptions{Resolve: opts.Principal})(h)
	}
	h = middleware.OriginGuard(opts.Origin)(h)
	if opts.LogRequests {
		logger := opts.Logger
		if logger == nil {
			logger = &log.Logger
		}
		h = middleware.RequestLog(middleware.RequestLogOptions{Logger: logger})(h)
	}
	h = middleware.Tracing(middleware.TracingOptions{Observer: obs, TracerProvider: opts.TracerProvider})(h)
	h = middleware.Recover(middleware.RecoverOptions{Logger: opts.Logger, OnPanic: opts.OnPanic})(h)
	return &Handler{stack: h, endpoint: ep, store: store, listeners: listeners}
}

// ServeHTTP serves one exchange through the composed stack.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.built()
	h.stack.ServeHTTP(w, r)
}

// Endpoint returns the bare endpoint inside the stack.
func (h *Handler) Endpoint() *Endpoint {
	h.built()
	return h.endpoint
}

// Store returns the session store (nil in stateless mode).
func (h *Handler) Store() session.Store {
	h.built()
	return h.store
}

// Close ends every session and stream and cancels requests in flight; new requests get 503.
func (h *Handler) Close() error {
	h.built()
	h.closeListeners()
	return h.endpoint.Close()
}

// closeListeners ends the listen streams gracefully first, so their last frame is the listen
// result and not a cut connection.
func (h *Handler) closeListeners() {
	if h.listeners != nil {
		h.listeners.Close()
	}
}

// Listeners returns the subscriptions/listen registry, or nil when listen is turned off.
func (h *Handler) Listeners() *Listeners {
	h.built()
	return h.listeners
}

// Shutdown is Close, then waits for the requests in flight to leave, or for ctx to end.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.built()
	h.closeListeners()
	return h.endpoint.Shutdown(ctx)
}

// sse returns the options of the SSE layers in front of the legacy endpoint and of the 2026-07-28
// handler: the same write timeout; keepalive comments on the legacy streams only (a 2026-07-28
// request's stream carries its call's notifications and ends with its response).
func (o Options) sse() (legacy, modern middleware.SSEOptions) {
	return middleware.SSEOptions{KeepAlive: o.KeepAlive, WriteTimeout: o.WriteTimeout},
		middleware.SSEOptions{KeepAlive: -1, WriteTimeout: o.WriteTimeout}
}

// validate panics, naming the option, on values New cannot work with. The layers and building
// blocks check the rest of their own options (naming them as they know them).
func (o Options) validate() {
	nonNegative := func(name string, v int64) {
		if v < 0 {
			panic("mcphttp: Options." + name + " must be >= 0")
		}
	}
	nonNegative("MaxRequestBytes", o.MaxRequestBytes)
	nonNegative("MaxRequestNotifications", int64(o.MaxRequestNotifications))
	nonNegative("Listen.MaxStreams", int64(o.Listen.MaxStreams))
	if o.Stateless && o.Resumability.Enabled {
		panic("mcphttp: Options.Resumability cannot be enabled with Stateless (a stateless endpoint has no session to resume on)")
	}
}
