package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/middleware"
)

// envelopeOf returns error.data._meta["io.modelcontextprotocol/authorization"] of a JSON-RPC
// error body, or nil.
func envelopeOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var msg struct {
		Error struct {
			Data struct {
				Meta map[string]map[string]any `json:"_meta"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return msg.Error.Data.Meta[metakey.Authorization]
}

// wantEnvelope checks the SEP-2643 draft shape of a scope denial naming scope and meta.
func wantEnvelope(t *testing.T, env map[string]any, scope, meta string) {
	t.Helper()
	if env == nil {
		t.Fatal("no authorization denial envelope")
	}
	id, _ := env["authorizationContextId"].(string)
	hints, _ := env["remediationHints"].([]any)
	if env["reason"] != "insufficient_authorization" || env["remediation"] != "available" || !strings.HasPrefix(id, "authzctx_") || len(hints) != 1 {
		t.Fatalf("envelope %v", env)
	}
	h, _ := hints[0].(map[string]any)
	if h["type"] != auth.HintOAuthScope || h["scope"] != scope || h["resource_metadata"] != meta {
		t.Fatalf("hint %v, want scope %q and metadata %s", h, scope, meta)
	}
}

// StructuredDenials: the 403 of the scope layer (any scheme) and of the bearer layer carry the
// envelope, still with the challenge; off (the default), neither has error data.
func TestStructuredDenials(t *testing.T) {
	for _, on := range []bool{false, true} {
		as := testutil.StartAuthServer(t)
		var h http.Handler
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
		t.Cleanup(ts.Close)
		url := ts.URL + "/mcp"
		meta := auth.MetadataURL(url)
		server := core.NewServer(core.Implementation{Name: "denials", Version: "1"}, core.Options{})
		server.AddTool(&core.Tool{Name: "add_note"}, func(_ context.Context, _ *core.ToolRequest) (*core.CallToolResult, error) {
			return core.TextResult("noted"), nil
		})
		mcp := mcphttp.New(server, mcphttp.Options{})
		t.Cleanup(func() { _ = mcp.Close() })
		v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: url})
		h = auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta, DPoP: auth.DPoPOptions{Mode: auth.DPoPAccepted}})(
			middleware.Decode(middleware.DecodeOptions{})(auth.RequireScopes(auth.ScopeOptions{ResourceMetadataURL: meta,
				Tools: map[string][]string{"add_note": {"notes:write"}}, StructuredDenials: on})(mcp)))
		call := testutil.ModernRequest(7, "tools/call", map[string]any{"name": "add_note"})

		key := testutil.NewDPoPKey(t)
		bound := as.Mint(t, key.BoundClaims(as.Claims("alice", url, "notes:read")))
		for _, scheme := range []string{"Bearer", "DPoP"} {
			c := testutil.NewClient(url, nil)
			if scheme == "Bearer" {
				c.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url, "notes:read"))
			} else {
				c.Header.Set("Authorization", "DPoP "+bound)
				c.Header.Set("DPoP", key.Proof(t, http.MethodPost, url, bound, nil))
			}
			r := c.PostModern(t, call)
			if r.Status != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), scheme+` error="insufficient_scope"`) {
				t.Fatalf("%s, on=%v: %d %q, want 403 with a %s insufficient_scope challenge", scheme, on, r.Status, r.Header.Get("WWW-Authenticate"), scheme)
			}
			testutil.ValidateDef(t, "2026-07-28", "JSONRPCErrorResponse", r.Body)
			if env := envelopeOf(t, r.Body); !on && env != nil {
				t.Fatalf("StructuredDenials off, envelope sent: %s", r.Body)
			} else if on {
				wantEnvelope(t, env, "notes:write", meta)
				if !strings.Contains(string(r.Body), `"id":7`) {
					t.Fatalf("the denial does not echo the request id: %s", r.Body)
				}
			}
		}
	}

	// The bearer layer's own 403 (BearerOptions.Scopes).
	as := testutil.StartAuthServer(t)
	const url = "http://127.0.0.1:1/mcp"
	meta := auth.MetadataURL(url)
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: url})
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta, Scopes: []string{"mcp"}, StructuredDenials: true})(http.NotFoundHandler())
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+as.Token(t, "alice", url, "other"))
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("bearer layer: %d", rec.Code)
	}
	wantEnvelope(t, envelopeOf(t, rec.Body.Bytes()), "mcp", meta)
}
