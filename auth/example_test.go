package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// The whole resource-server stack: metadata, the bearer layer in front of decode, the scope
// layer after it, then the endpoint.
func Example() {
	const resource = "https://mcp.example.com/mcp"
	server := core.NewServer(core.Implementation{Name: "notes", Version: "1.0.0"}, core.Options{})

	meta := auth.NewMetadataHandler(auth.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{"https://as.example.com"},
		ScopesSupported:      []string{"notes:read", "notes:write"},
	})
	verifier := auth.NewJWTVerifier(auth.JWTOptions{Issuer: "https://as.example.com", Audience: resource})
	scopes := auth.ScopeOptions{
		ResourceMetadataURL: meta.URL(),
		Server:              server,
		Tools:               map[string][]string{"add_note": {"notes:write"}},
		Templates:           map[string][]string{"notes://{owner}": {"notes:read"}},
	}
	endpoint := mcphttp.New(server, mcphttp.Options{})
	defer endpoint.Close()

	mux := http.NewServeMux()
	meta.Mount(mux)
	mux.Handle("/mcp", middleware.OriginGuard(middleware.OriginGuardOptions{AllowedHosts: []string{"mcp.example.com"}})(
		auth.RequireBearer(verifier, auth.BearerOptions{ResourceMetadataURL: meta.URL()})(
			middleware.Decode(middleware.DecodeOptions{})(
				auth.RequireScopes(scopes)(endpoint)))))

	// A request without a token is told where to find the authorization server.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, resource, nil))
	fmt.Println(rec.Code, rec.Header().Get("WWW-Authenticate"))
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
}

// A verifier of the team's own (API keys, a session service) works with the same layer; the
// token's subject becomes the request's principal.
func ExampleVerifierFunc() {
	keys := map[string]string{"k-123": "alice"}
	v := auth.VerifierFunc(func(_ context.Context, token string) (*auth.TokenInfo, error) {
		if user, ok := keys[token]; ok {
			return &auth.TokenInfo{Subject: user, Scopes: []string{"notes:read"}}, nil
		}
		return nil, auth.ErrInvalidToken
	})
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL("https://mcp.example.com/mcp")})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			who, _ := core.PrincipalFrom(r.Context())
			info, _ := auth.TokenInfoFrom(r.Context())
			fmt.Println(who, info.Scopes)
		}))
	req := httptest.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
	req.Header.Set("Authorization", "Bearer k-123")
	h.ServeHTTP(httptest.NewRecorder(), req)
	// Output: alice [notes:read]
}

func ExampleMetadataURL() {
	fmt.Println(auth.MetadataURL("https://mcp.example.com/mcp"))
	fmt.Println(auth.MetadataURL("https://mcp.example.com"))
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp
	// https://mcp.example.com/.well-known/oauth-protected-resource
}
