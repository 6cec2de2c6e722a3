package mcphttp_test

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/otelmcp"
	"github.com/mcpkit/mcpkit/session"
)

// A hand-assembled stack: the team's own authentication sits in front of the MCP layers, and
// sessions belong to the principal that created them. Without myAuth and the principal layer it
// is exactly the stack mcphttp.New composes (TestHandStackIsTheDefault checks it).
func ExampleNewEndpoint() {
	server := core.NewServer(core.Implementation{Name: "custom", Version: "1.0.0"}, core.Options{})
	myAuth := func(next http.Handler) http.Handler { return next } // the team's own layer
	principal := func(r *http.Request) string { return r.Header.Get("X-User") }

	h, closeAll := handStack(server, func(next http.Handler) http.Handler {
		// The principal layer (or an auth layer calling core.WithPrincipal) names the caller
		// once; the endpoint records it at initialize and the validator lets only that
		// principal in.
		return myAuth(middleware.Principal(middleware.PrincipalOptions{Resolve: principal})(next))
	})
	defer closeAll()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	// Output:
}

// handStack is docs/http.md's "Compose your own stack": every layer mcphttp.New composes, in its
// order, with auth (the team's layers) between the origin guard and the method checks. closeAll
// ends the listen streams first, then the endpoint (and with it the store).
func handStack(server *core.Server, auth func(http.Handler) http.Handler) (h http.Handler, closeAll func()) {
	store := session.NewMemory(session.MemoryOptions{})
	obs := otelmcp.New(otelmcp.Options{})
	ep := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: store, Observer: obs})
	listeners := mcphttp.NewListeners(server, mcphttp.ListenersOptions{})
	modern := mcphttp.NewModern(server, mcphttp.ModernOptions{ChangeNotifications: true, Listen: listeners, Lifetime: ep})
	h = middleware.Recover(middleware.RecoverOptions{})(
		middleware.Tracing(middleware.TracingOptions{Observer: obs})(
			middleware.OriginGuard(middleware.OriginGuardOptions{})(
				auth(
					middleware.MethodAccept(middleware.MethodAcceptOptions{})(
						middleware.Decode(middleware.DecodeOptions{})(
							middleware.EraRouter(middleware.EraRouterOptions{
								Modern: middleware.MirrorHeaders(middleware.MirrorHeadersOptions{Server: server})(
									middleware.SSE(middleware.SSEOptions{KeepAlive: -1})(modern)),
							})(
								middleware.ProtocolVersion(middleware.ProtocolVersionOptions{})(
									middleware.SessionValidator(middleware.SessionValidatorOptions{Sessions: ep})(
										middleware.SSE(middleware.SSEOptions{})(ep))))))))))
	return h, func() {
		listeners.Close()
		_ = ep.Close()
	}
}

// The session validator swapped for the team's own layer: it resolves the session itself, ties
// it to the authenticated user, and hands it to the endpoint with middleware.WithSession.
func ExampleNewEndpoint_ownSessionLayer() {
	server := core.NewServer(core.Implementation{Name: "custom", Version: "1.0.0"}, core.Options{})
	user := func(r *http.Request) string { return r.Header.Get("X-User") } // set by the team's auth
	store := session.NewMemory(session.MemoryOptions{})
	legacy := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: store})

	ownSessions := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get(middleware.HeaderSessionID)
			if id == "" { // initialize (or a request the endpoint refuses itself)
				next.ServeHTTP(w, r)
				return
			}
			// The endpoint owns the live sessions: it looks the record up in its store (here
			// with the team's own owner check) and returns the session it serves.
			owned := func(e *session.Entry) bool { return e.Owner == user(r) }
			s, err := legacy.Lookup(r.Context(), id, r.Method != http.MethodDelete, owned)
			if err != nil {
				http.Error(w, "no such session", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, middleware.WithSession(r, s))
		})
	}
	// The endpoint records the principal in the context at initialize as the session's Owner.
	h := middleware.Principal(middleware.PrincipalOptions{Resolve: user})(
		middleware.Decode(middleware.DecodeOptions{})(ownSessions(middleware.SSE(middleware.SSEOptions{})(legacy))))
	_ = h
	_ = legacy.Close()
	// Output:
}
