package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// longestTokenVerified is the length of the longest of two tokens around n that RequireBearer
// hands to its verifier (n when n is verified and n+1 refused before the verifier; -1 otherwise).
func longestTokenVerified(t *testing.T, opts BearerOptions, n int) int {
	t.Helper()
	var calls atomic.Int32
	v := VerifierFunc(func(context.Context, string) (*TokenInfo, error) {
		calls.Add(1)
		return &TokenInfo{Subject: "alice"}, nil
	})
	h := RequireBearer(v, opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	verified := func(n int) bool {
		before := calls.Load()
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{}`))
		r.Header.Set("Authorization", "Bearer "+strings.Repeat("a", n))
		h.ServeHTTP(httptest.NewRecorder(), r)
		return calls.Load() > before
	}
	if verified(n) && !verified(n+1) {
		return n
	}
	return -1
}

// Each documented default of the package's options, observed on what the constructors build
// (and the token and body bounds through the layers).
func TestOptionsDefaults(t *testing.T) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource"
	var bo BearerOptions
	bo.ResourceMetadataURL = meta
	var iopts IntrospectionOptions
	iopts.Endpoint, iopts.Audience = "https://as.example.com/introspect", "https://mcp.example.com/mcp"
	iv := NewIntrospectionVerifier(iopts)
	var jo JWTOptions
	jo.Issuer, jo.Audience = "https://as.example.com", "https://mcp.example.com/mcp"
	jv := NewJWTVerifier(jo)
	var so ScopeOptions
	so.ResourceMetadataURL = meta
	scopes := RequireScopes(so)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	algs := make([]string, len(jv.algs))
	for i, a := range jv.algs {
		algs[i] = string(a)
	}

	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "BearerOptions.MaxTokenBytes", Given: bo.MaxTokenBytes, Got: longestTokenVerified(t, bo, 16384), Doc: 16384},

		{Option: "IntrospectionOptions.CacheTTL", Given: iopts.CacheTTL, Got: iv.cache.ttl, Doc: time.Minute},
		{Option: "IntrospectionOptions.MaxCacheEntries", Given: iopts.MaxCacheEntries, Got: iv.cache.max, Doc: 10000},
		{Option: "IntrospectionOptions.NegativeCacheTTL", Given: iopts.NegativeCacheTTL, Got: iv.refused.ttl, Doc: 10 * time.Second},
		{Option: "IntrospectionOptions.MaxCacheEntries (refusals)", Given: iopts.MaxCacheEntries, Got: iv.refused.max, Doc: 10000},
		{Option: "IntrospectionOptions.MaxCallsPerSecond", Given: iopts.MaxCallsPerSecond, Got: iv.limit.rate, Doc: 50.0},
		{Option: "IntrospectionOptions.Leeway", Given: iopts.Leeway, Got: iv.leeway, Doc: 30 * time.Second},
		{Option: "IntrospectionOptions.HTTPClient", Given: iopts.HTTPClient, Got: iv.fetch.client.Timeout, Doc: 10 * time.Second},
		{Option: "IntrospectionOptions.MaxDocumentBytes", Given: iopts.MaxDocumentBytes, Got: iv.fetch.max, Doc: int64(1 << 20)},

		{Option: "JWTOptions.Algorithms", Given: jo.Algorithms, Got: algs, Doc: DefaultAlgorithms},
		{Option: "JWTOptions.Algorithms (asymmetric only)", Given: jo.Algorithms, Got: !slices.Contains(jv.algs, jose.HS256), Doc: true},
		{Option: "JWTOptions.Types", Given: jo.Types, Got: jv.types, Doc: DefaultTokenTypes},
		{Option: "JWTOptions.Leeway", Given: jo.Leeway, Got: jv.leeway, Doc: 30 * time.Second},
		{Option: "JWTOptions.KeyCacheTTL", Given: jo.KeyCacheTTL, Got: jv.keys.ttl, Doc: time.Hour},
		{Option: "JWTOptions.RefreshInterval", Given: jo.RefreshInterval, Got: jv.keys.minInterval, Doc: 30 * time.Second},
		{Option: "JWTOptions.CacheTTL", Given: jo.CacheTTL, Got: jv.cache.ttl, Doc: time.Minute},
		{Option: "JWTOptions.MaxCacheEntries", Given: jo.MaxCacheEntries, Got: jv.cache.max, Doc: 10000},
		{Option: "JWTOptions.HTTPClient", Given: jo.HTTPClient, Got: jv.keys.fetch.client.Timeout, Doc: 10 * time.Second},
		{Option: "JWTOptions.MaxDocumentBytes", Given: jo.MaxDocumentBytes, Got: jv.keys.fetch.max, Doc: int64(1 << 20)},

		{Option: "ScopeOptions.MaxRequestBytes", Given: so.MaxRequestBytes, Got: testutil.BodyCap(t, scopes, 4<<20), Doc: 4 << 20},
	})
}
