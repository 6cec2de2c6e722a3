package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	mcpclient "github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/oauth"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// TestDPoP: with -dpop (and -dpop-nonce) the kit's client, given only the MCP URL, gets
// DPoP-bound tokens from the local authorization server and calls with proofs, stepping up as
// with bearer tokens; a plain bearer token is refused with a DPoP challenge; the metadata says
// bound tokens are required.
func TestDPoP(t *testing.T) {
	for _, nonce := range []bool{false, true} {
		t.Run(fmt.Sprintf("nonce=%v", nonce), func(t *testing.T) {
			var as *testutil.AuthServer
			base := start(t, config{dpop: true, dpopNonce: nonce, setup: func(s *testutil.AuthServer) { as = s }})
			b := &browser{t: t}
			login := &oauth.LoopbackAuthorizer{Out: b}
			defer login.Close()
			tr := oauth.New(oauth.Options{Authorizer: login, Scopes: []string{scopeRead}})
			ctx := context.Background()
			c, err := mcpclient.Connect(ctx, &mcpclient.HTTPTransport{URL: base + "/mcp", HTTPClient: tr.Client()}, mcpclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if res, err := c.CallTool(ctx, "whoami", nil); err != nil || text(t, res) != "you are user with scopes [notes:read]" {
				t.Fatalf("whoami: %v %v", res, err)
			}
			if res, err := c.CallTool(ctx, "add_note", map[string]any{"text": "bound"}); err != nil || text(t, res) != "noted (1 notes)" {
				t.Fatalf("add_note: %v %v", res, err)
			}
			if tok := tr.Token(base + "/mcp"); tok == nil || !strings.EqualFold(tok.Type, "DPoP") || as.Count("dpop") != 2 {
				t.Fatalf("token %+v after %d bound grants, want DPoP tokens (read, then the step-up)", tok, as.Count("dpop"))
			}

			r := client(base, token(t, base, "mallory", base+"/mcp", scopeRead)).PostModern(t, testutil.ModernRequest(1, "server/discover", nil))
			if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "DPoP ") || len(r.Header.Values("WWW-Authenticate")) != 1 {
				t.Fatalf("plain bearer token: %d %v, want 401 with a DPoP challenge alone", r.Status, r.Header.Values("WWW-Authenticate"))
			}
			resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
			if err != nil {
				t.Fatal(err)
			}
			if doc := readAll(t, resp); !strings.Contains(doc, `"dpop_bound_access_tokens_required":true`) || !strings.Contains(doc, `"dpop_signing_alg_values_supported":["RS256"`) {
				t.Fatalf("metadata %s", doc)
			}
		})
	}
}

// TestTrustedIssuer: -trust-issuer and -trust-jwk accept tokens that issuer signs with that key
// (a DPoP-bound one here, as the conformance suite mints them), and only with that key.
func TestTrustedIssuer(t *testing.T) {
	const issuer = "https://conformance-dpop-issuer.example.com"
	issuerKey := testutil.NewDPoPKey(t) // any P-256 key will do as the issuer's
	base := start(t, config{dpop: true, trustIssuer: issuer, trustJWK: testutil.MarshalJWK(t, issuerKey.PrivateJWK())})
	mcpURL := base + "/mcp"
	clientKey := testutil.NewDPoPKey(t)
	claims := clientKey.BoundClaims(map[string]any{"iss": issuer, "sub": "conformance", "aud": mcpURL, "iat": nowUnix(), "exp": nowUnix() + 300})
	signed := testutil.MintWith(t, &testutil.SigningKey{Alg: jose.ES256, Key: issuerKey.Key}, "at+jwt", claims)
	forged := testutil.MintWith(t, &testutil.SigningKey{Alg: jose.ES256, Key: testutil.NewDPoPKey(t).Key}, "at+jwt", claims)
	for _, c := range []struct {
		token string
		want  int
	}{{signed, http.StatusOK}, {forged, http.StatusUnauthorized}} {
		cl := testutil.NewClient(mcpURL, nil)
		cl.Header.Set("Authorization", "DPoP "+c.token)
		cl.Header.Set("DPoP", clientKey.Proof(t, http.MethodPost, mcpURL, c.token, nil))
		if r := cl.PostModern(t, testutil.ModernRequest(1, "server/discover", nil)); r.Status != c.want {
			t.Fatalf("token of the trusted issuer: %d %v, want %d", r.Status, r.Header.Values("WWW-Authenticate"), c.want)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func nowUnix() int64 { return time.Now().Unix() }
