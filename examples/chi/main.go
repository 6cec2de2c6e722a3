// Command chi mounts the MCP endpoint in a chi router behind an existing authentication
// middleware, and ties each session to the principal that created it: a request naming a session
// owned by someone else gets 403.
//
//	go run ./examples/chi -addr 127.0.0.1:8081
//	curl -H 'Authorization: Bearer alice-token' ... http://127.0.0.1:8081/mcp
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
)

type principalKey struct{}

// tokens is the example's user table; a real service asks its identity provider.
var tokens = map[string]string{"alice-token": "alice", "bob-token": "bob"}

// authenticate is the team's existing auth middleware: it knows nothing about MCP.
func authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		user, known := tokens[token]
		if !ok || !known {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, user)))
	})
}

func principal(r *http.Request) string {
	p, _ := r.Context().Value(principalKey{}).(string)
	return p
}

// newHandler builds the router: auth in front, MCP at /mcp, sessions owned by their creator.
// Close the returned MCP handler when done.
func newHandler(s *core.Server) (http.Handler, *mcphttp.Handler) {
	mcp := mcphttp.New(s, mcphttp.Options{
		// The one identity hook: the endpoint asks it once per request. A session belongs to the
		// principal that opened it and answers 403 to anyone else; listen ids, requestState and
		// tasks are tied to the same principal.
		Principal: principal,
	})
	r := chi.NewRouter()
	r.Use(authenticate)
	r.Handle("/mcp", mcp)
	return r, mcp
}

// newServer returns the example's MCP server: one tool that tells the caller its session.
func newServer() *core.Server {
	s := core.NewServer(core.Implementation{Name: "chi-example", Version: "1.0.0"}, core.Options{})
	s.AddTool(&core.Tool{Name: "whoami", Description: "Says who is calling."},
		func(ctx context.Context, req *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("you are using session " + req.Session().ID()), nil
		})
	return s
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, mcp := newHandler(newServer())
	srv := mcphttp.NewHTTPServer(*addr, h, mcphttp.HTTPServerOptions{})
	go func() {
		<-ctx.Done()
		// The MCP handler first: it ends its long-lived streams, which srv.Shutdown waits for.
		down, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = mcp.Shutdown(down)
		_ = srv.Shutdown(down)
	}()
	log.Printf("chi example: MCP at http://%s/mcp (tokens: alice-token, bob-token)", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		_ = mcp.Close()
		log.Fatal(err)
	}
}
