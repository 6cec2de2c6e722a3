package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

const resource = "https://mcp.example.com/mcp"

func newIntrospection(t *testing.T, opts auth.IntrospectionOptions) (*auth.IntrospectionVerifier, *testutil.AuthServer, *testutil.Clock) {
	t.Helper()
	as := testutil.StartAuthServer(t)
	opts.Endpoint = as.Issuer + "/introspect"
	opts.Audience = resource
	v := auth.NewIntrospectionVerifier(opts)
	c := testutil.NewClockAt(time.Now())
	auth.SetIntrospectionClock(v, c.Now)
	return v, as, c
}

func TestIntrospectionVerifier(t *testing.T) {
	v, as, _ := newIntrospection(t, auth.IntrospectionOptions{Issuer: "https://as.example.com"})
	exp := time.Now().Add(time.Hour).Unix()
	as.AddOpaque("good", map[string]any{"sub": "alice", "aud": resource, "scope": "a b", "iss": "https://as.example.com", "exp": exp, "client_id": "c1"})
	as.AddOpaque("aud-list", map[string]any{"sub": "alice", "aud": []string{"x", resource}, "iss": "https://as.example.com"})
	as.AddOpaque("other-aud", map[string]any{"sub": "alice", "aud": "https://other.example.com/mcp", "iss": "https://as.example.com"})
	as.AddOpaque("no-aud", map[string]any{"sub": "alice", "iss": "https://as.example.com"})
	as.AddOpaque("inactive", map[string]any{"active": false, "sub": "alice", "aud": resource})
	as.AddOpaque("expired", map[string]any{"sub": "alice", "aud": resource, "iss": "https://as.example.com", "exp": time.Now().Add(-time.Hour).Unix()})
	as.AddOpaque("future", map[string]any{"sub": "alice", "aud": resource, "iss": "https://as.example.com", "nbf": time.Now().Add(time.Hour).Unix()})
	as.AddOpaque("other-iss", map[string]any{"sub": "alice", "aud": resource, "iss": "https://evil.example.com"})
	as.AddOpaque("no-sub", map[string]any{"aud": resource, "iss": "https://as.example.com"})

	info, err := v.Verify(context.Background(), "good")
	if err != nil || info.Subject != "alice" || !info.HasScope("b") || info.ClientID != "c1" || info.Expiration.Unix() != exp {
		t.Fatalf("good: %+v %v", info, err)
	}
	if _, err := v.Verify(context.Background(), "aud-list"); err != nil {
		t.Errorf("aud-list: %v", err)
	}
	for _, tok := range []string{"other-aud", "no-aud", "inactive", "expired", "future", "other-iss", "no-sub", "never-issued"} {
		if _, err := v.Verify(context.Background(), tok); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: %v, want ErrInvalidToken", tok, err)
		}
	}
}

func TestIntrospectionCache(t *testing.T) {
	v, as, c := newIntrospection(t, auth.IntrospectionOptions{CacheTTL: time.Minute, MaxCacheEntries: 2})
	as.AddOpaque("good", map[string]any{"sub": "alice", "aud": resource, "exp": time.Now().Add(90 * time.Second).Unix()})
	for range 3 {
		if _, err := v.Verify(context.Background(), "good"); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.Introspections.Load(); n != 1 {
		t.Fatalf("%d introspections for three checks, want 1 (cached)", n)
	}
	// Inactive answers are remembered for the short NegativeCacheTTL, then asked again.
	for range 2 {
		_, _ = v.Verify(context.Background(), "unknown")
	}
	if n := as.Introspections.Load(); n != 2 {
		t.Fatalf("%d introspections, want 2 (the inactive answer reused)", n)
	}
	c.Advance(auth.DefaultIntrospectionNegativeCacheTTL)
	if _, err := v.Verify(context.Background(), "unknown"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("unknown token after the negative TTL: %v", err)
	}
	if n := as.Introspections.Load(); n != 3 {
		t.Fatalf("%d introspections, want 3 (inactive answers asked again after the negative TTL)", n)
	}
	// The entry lives for the TTL...
	c.Advance(61*time.Second - auth.DefaultIntrospectionNegativeCacheTTL)
	if _, err := v.Verify(context.Background(), "good"); err != nil {
		t.Fatal(err)
	}
	if n := as.Introspections.Load(); n != 4 {
		t.Fatalf("%d introspections after the TTL, want 4", n)
	}
	// ...and never past the token's expiry (plus the 30 s leeway): past it, the server is asked
	// again and its answer says expired.
	c.Advance(70 * time.Second)
	before := as.Introspections.Load()
	if _, err := v.Verify(context.Background(), "good"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("after the expiry: %v, want the server's verdict (expired)", err)
	}
	if as.Introspections.Load() != before+1 {
		t.Fatal("the expired entry was served from the cache")
	}
	// The cache stays bounded.
	for _, tok := range []string{"t1", "t2", "t3"} {
		as.AddOpaque(tok, map[string]any{"sub": "alice", "aud": resource})
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := auth.IntrospectionCacheLen(v); n > 2 {
		t.Fatalf("cache holds %d entries, want at most 2", n)
	}
}

func TestIntrospectionUnavailableAndClientAuth(t *testing.T) {
	var gotUser, gotPass string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer ts.Close()
	v := auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Endpoint: ts.URL, Audience: resource, ClientID: "rs:1", ClientSecret: "s&cret"})
	if _, err := v.Verify(context.Background(), "tok"); !errors.Is(err, auth.ErrUnavailable) {
		t.Fatalf("failing endpoint: %v, want ErrUnavailable", err)
	}
	if gotUser != "rs%3A1" || gotPass != "s%26cret" {
		t.Errorf("basic auth %q:%q, want form-encoded client credentials", gotUser, gotPass)
	}
}
