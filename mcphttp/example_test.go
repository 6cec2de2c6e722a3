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
	server := core.NewServer(core.Implementation{Name: "custom", Version: "1.0.0"}, nil)
	myAuth := func(next http.Handler) http.Handler { return next } // the team's own layer
	principal := func(r *http.Request) any { return r.Header.Get("X-User") }

	store := session.NewMemory(session.MemoryOptions{})
	legacy := mcphttp.NewEndpoint(server, mcphttp.EndpointOptions{Store: store, Owner: principal})
	modern := legacy.Track(middleware.MirrorHeaders(middleware.MirrorOptions{Server: server})(
		mcphttp.NewModern(server, mcphttp.ModernOptions{})))
	ownsSession := func(r *http.Request, s *session.Session) bool { return s.Owner == principal(r) }

	h := middleware.Recover(middleware.RecoverOptions{})(
		middleware.OriginGuard(middleware.OriginOptions{AllowedHosts: []string{"mcp.example.com"}})(
			myAuth(
				middleware.Decode(middleware.DecodeOptions{})(
					middleware.EraRouter(modern)(
						middleware.SessionValidator(middleware.SessionOptions{Store: store, Authorize: ownsSession})(legacy))))))

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	_ = legacy.Close()
	// Output:
}
