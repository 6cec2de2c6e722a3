package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/middleware"
)

// benchBearer measures the bearer layer with a JWT verifier whose keys are cached, the same
// token on every request: a cache hit, or with cacheTTL negative one signature check and the
// claim checks per request.
func benchBearer(b *testing.B, key *testutil.SigningKey, cacheTTL time.Duration) {
	as := testutil.StartAuthServer(b)
	as.Rotate(key, false)
	const res = "http://127.0.0.1/mcp"
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: res, CacheTTL: cacheTTL})
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: auth.MetadataURL(res)})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	authz := "Bearer " + as.Token(b, "alice", res, "notes:read")
	req := httptest.NewRequest(http.MethodPost, res, nil)
	req.Header.Set("Authorization", authz)
	h.ServeHTTP(httptest.NewRecorder(), req) // fetch the keys once
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkRequireBearerJWTCached(b *testing.B) { benchBearer(b, testutil.NewECKey(b, "ec"), 0) }
func BenchmarkRequireBearerJWTES256(b *testing.B)  { benchBearer(b, testutil.NewECKey(b, "ec"), -1) }
func BenchmarkRequireBearerJWTRS256(b *testing.B)  { benchBearer(b, testutil.NewRSAKey(b, "rsa"), -1) }

// BenchmarkRequireScopes measures the scope check of a tools/call after decode: policy lookup
// and the token's scopes, no parsing.
func BenchmarkRequireScopes(b *testing.B) {
	s := scopeServer()
	o := conformanceScopes(s, auth.MetadataURL("http://127.0.0.1/mcp"))
	o.Require = nil
	h := middleware.Decode(middleware.DecodeOptions{})(auth.RequireScopes(o)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	body := testutil.CallTool(1, "test_simple_text", map[string]any{}, nil)
	info := &auth.TokenInfo{Subject: "alice", Scopes: []string{"mcp:conformance:tools:call", "mcp:conformance:tools:test_simple_text"}}
	ctx := core.WithPrincipal(auth.WithTokenInfo(context.Background(), info), "alice")
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
