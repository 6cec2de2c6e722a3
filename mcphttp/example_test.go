package mcphttp_test

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// A hand-assembled stack: the team's own authentication sits in front of the MCP layers, and
// sessions belong to the principal that created them.
func ExampleNewEndpoint() {
	server := core.NewServer(core.Implementation{Name: "custom", Version: "1.0.0"}, core.Options{})
	myAuth := func(next http.Handler) http.Handler { return next } // the team's own layer
	principal := func(r *http.Request) string { return r.Header.Get("X-User") }

	store := session.NewMemory(session.MemoryOptions{})
	legacy := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: store})
	modern := legacy.Track(middleware.MirrorHeaders(middleware.MirrorHeadersOptions{Server: server})(
		mcphttp.NewModern(server, mcphttp.ModernOptions{})))

	// The principal layer (or an auth layer calling core.WithPrincipal) names the caller once;
	// the endpoint records it at initialize and the validator lets only that principal in.
	h := middleware.Recover(middleware.RecoverOptions{})(
		middleware.OriginGuard(middleware.OriginGuardOptions{AllowedHosts: []string{"mcp.example.com"}})(
			myAuth(middleware.Principal(middleware.PrincipalOptions{Resolve: principal})(
				middleware.Decode(middleware.DecodeOptions{})(
					middleware.EraRouter(middleware.EraRouterOptions{Modern: modern})(
						middleware.SessionValidator(middleware.SessionValidatorOptions{Store: store})(legacy)))))))

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	_ = legacy.Close()
	// Output:
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
			s, err := store.Get(r.Context(), id, r.Method != http.MethodDelete)
			if err != nil || s.Owner != user(r) {
				http.Error(w, "no such session", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, middleware.WithSession(r, s))
		})
	}
	// The endpoint records the principal in the context at initialize as the session's Owner.
	h := middleware.Principal(middleware.PrincipalOptions{Resolve: user})(
		middleware.Decode(middleware.DecodeOptions{})(ownSessions(legacy)))
	_ = h
	_ = legacy.Close()
	// Output:
}
