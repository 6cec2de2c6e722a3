package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []client.Challenge
	}{
		{[]string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`},
			[]client.Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource", "scope": "a b"}}}},
		{[]string{`Bearer error=insufficient_scope,scope="files:read", Error_Description="say \"hi\""`},
			[]client.Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "insufficient_scope", "scope": "files:read", "error_description": `say "hi"`}}}},
		{[]string{`Basic realm="a", Bearer realm="b", error="invalid_token"`},
			[]client.Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "a"}}, {Scheme: "Bearer", Params: map[string]string{"realm": "b", "error": "invalid_token"}}}},
		{[]string{`Bearer`, `DPoP algs="ES256 RS256", error="use_dpop_nonce"`},
			[]client.Challenge{{Scheme: "Bearer"}, {Scheme: "DPoP", Params: map[string]string{"algs": "ES256 RS256", "error": "use_dpop_nonce"}}}},
		{[]string{`Negotiate YWJj==, Bearer`},
			[]client.Challenge{{Scheme: "Negotiate", Token68: "YWJj=="}, {Scheme: "Bearer"}}},
		{[]string{`Bearer, Basic`}, []client.Challenge{{Scheme: "Bearer"}, {Scheme: "Basic"}}},
		{[]string{`Bearer realm="unterminated`}, []client.Challenge{{Scheme: "Bearer"}}},
		{[]string{``, `  `}, nil},
	} {
		if got := client.ParseChallenges(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseChallenges(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

// protectedServer serves the client fixture behind the bearer and scope layers: "add" needs
// scope "calc".
func protectedServer(t *testing.T, as *testutil.AuthServer) (url, meta string) {
	t.Helper()
	f := newFixture(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	mh := auth.NewMetadataHandler(auth.Metadata{Resource: resource, AuthorizationServers: []string{as.Issuer}})
	mh.Mount(mux)
	ep := mcphttp.New(f.server, mcphttp.Options{})
	t.Cleanup(func() { _ = ep.Shutdown(context.Background()) })
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: resource})
	mux.Handle("/mcp", auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: mh.URL()})(
		middleware.Decode(middleware.DecodeOptions{})(
			auth.RequireScopes(auth.ScopeOptions{ResourceMetadataURL: mh.URL(), Tools: map[string][]string{"add": {"calc"}}})(ep))))
	return resource, mh.URL()
}

func TestAuthErrorOn401And403(t *testing.T) {
	as := testutil.StartAuthServer(t)
	url, meta := protectedServer(t, as)
	ctx := context.Background()
	for _, lc := range []client.Lifecycle{client.Legacy, client.Modern, client.Auto} {
		_, err := client.Connect(ctx, &client.HTTPTransport{URL: url}, client.Options{Lifecycle: lc})
		var ae *client.AuthError
		if !errors.As(err, &ae) {
			t.Fatalf("lifecycle %v without a token: %v, want an *AuthError", lc, err)
		}
		if ae.StatusCode != http.StatusUnauthorized || ae.Scheme != "Bearer" || ae.ResourceMetadata != meta || ae.Code != "" {
			t.Fatalf("lifecycle %v: %+v, want 401 Bearer with resource_metadata %s", lc, ae, meta)
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("the JSON-RPC error of the body is not reachable: %v", err)
		}
	}

	tok := as.Token(t, "alice", url, "other")
	c, err := client.Connect(ctx, &client.HTTPTransport{URL: url, Header: http.Header{"Authorization": {"Bearer " + tok}}}, client.Options{Lifecycle: client.Modern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(ctx, "add", addIn{A: 1, B: 2})
	var ae *client.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("call without the scope: %v, want an *AuthError", err)
	}
	if ae.StatusCode != http.StatusForbidden || ae.Code != "insufficient_scope" || !reflect.DeepEqual(ae.Scope, []string{"calc"}) || ae.ResourceMetadata != meta {
		t.Fatalf("%+v, want 403 insufficient_scope, scope [calc], resource_metadata %s", ae, meta)
	}
	if want := `mcpkit/client: not authorized (HTTP 403 insufficient_scope); the server requires scope "calc"`; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q does not say %q", err, want)
	}
}
