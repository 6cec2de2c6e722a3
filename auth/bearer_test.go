package auth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`

func TestBearerValidTokenSetsPrincipalAndTokenInfo(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url, "notes:read", "notes:write"), initBody)
	if r.status != http.StatusOK || r.body != "alice|notes:read notes:write" {
		t.Fatalf("got %d %q, want 200 with alice and her scopes", r.status, r.body)
	}
	// The scheme is case-insensitive (RFC 9110 section 11.1).
	r = post(t, f.url, "bearer "+f.as.Token(t, "alice", f.url), initBody)
	if r.status != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", r.status, r.body)
	}
}

func TestBearerMissingCredentials(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	for name, authz := range map[string]string{"no header": "", "wrong scheme": "Basic YWxpY2U6c2VjcmV0", "token scheme only": "Token abc"} {
		t.Run(name, func(t *testing.T) {
			r := post(t, f.url, authz, initBody)
			pc := wantChallenge(t, r, http.StatusUnauthorized, "", f.meta)
			if _, ok := pc.params["scope"]; ok {
				t.Errorf("scope sent without configured scopes: %v", pc.params)
			}
			if !strings.Contains(r.body, `"id":null`) || !strings.Contains(r.body, `"code":-32600`) {
				t.Errorf("body %s, want -32600 with id null", r.body)
			}
		})
	}
}

func TestBearerMalformedCredentials(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{MaxTokenBytes: 64}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	cases := map[string][]string{
		"empty":           {"Bearer"},
		"blank":           {"Bearer    "},
		"two tokens":      {"Bearer abc def"},
		"not a token68":   {"Bearer ab@cd"},
		"padding inside":  {"Bearer ab=cd"},
		"too long":        {"Bearer " + strings.Repeat("a", 65)},
		"repeated header": {"Bearer abc", "Bearer abc"},
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, f.url, strings.NewReader(initBody))
			req.Header.Set("Content-Type", "application/json")
			for _, v := range values {
				req.Header.Add("Authorization", v)
			}
			wantChallenge(t, send(t, req), http.StatusUnauthorized, "invalid_token", f.meta)
		})
	}
}

func TestBearerRejectedTokens(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	as := f.as
	now := time.Now().Unix()
	with := func(mod func(c map[string]any)) map[string]any {
		c := as.Claims("alice", f.url)
		mod(c)
		return c
	}
	untrusted := testutil.NewRSAKey(t, as.Key().KID) // same kid, never published
	cases := map[string]string{
		"expired":             as.Mint(t, with(func(c map[string]any) { c["exp"] = now - 600; c["iat"] = now - 4200 })),
		"not yet valid":       as.Mint(t, with(func(c map[string]any) { c["nbf"] = now + 600 })),
		"issued in future":    as.Mint(t, with(func(c map[string]any) { c["iat"] = now + 600 })),
		"wrong issuer":        as.Mint(t, with(func(c map[string]any) { c["iss"] = "https://evil.example.com" })),
		"wrong audience":      as.Mint(t, with(func(c map[string]any) { c["aud"] = "https://another-resource.example.com/mcp" })),
		"audience is prefix":  as.Mint(t, with(func(c map[string]any) { c["aud"] = strings.TrimSuffix(f.url, "/mcp") })),
		"missing audience":    as.Mint(t, with(func(c map[string]any) { delete(c, "aud") })),
		"missing expiry":      as.Mint(t, with(func(c map[string]any) { delete(c, "exp") })),
		"missing subject":     as.Mint(t, with(func(c map[string]any) { delete(c, "sub") })),
		"expiry as string":    as.Mint(t, with(func(c map[string]any) { c["exp"] = "tomorrow" })),
		"untrusted key":       testutil.MintWith(t, untrusted, "at+jwt", as.Claims("alice", f.url)),
		"alg none":            testutil.MintUnsigned(t, as.Key().KID, as.Claims("alice", f.url)),
		"hmac confusion":      testutil.MintHMACWithPublicKey(t, as.Key(), as.Claims("alice", f.url)),
		"id token type":       testutil.MintWith(t, as.Key(), "JWT", as.Claims("alice", f.url)),
		"no type":             testutil.MintWith(t, as.Key(), "", as.Claims("alice", f.url)),
		"tampered payload":    tamper(as.Token(t, "alice", f.url)),
		"not a jwt":           "opaque-token-value",
		"unknown kid forever": testutil.MintWith(t, testutil.NewECKey(t, "nobody"), "at+jwt", as.Claims("alice", f.url)),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) {
			wantChallenge(t, post(t, f.url, "Bearer "+token, initBody), http.StatusUnauthorized, "invalid_token", f.meta)
		})
	}
	// The baseline still passes: the rejections above are targeted, not blanket.
	if r := post(t, f.url, "Bearer "+as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("valid token after the rejections: %d %s", r.status, r.body)
	}
}

// tamper changes the subject in the payload and keeps the signature.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	parts[1] = testutilEncode(`{"iss":"x","sub":"mallory"}`)
	return strings.Join(parts, ".")
}

func TestBearerLeewayAndAudienceForms(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{Leeway: 2 * time.Minute}, http.HandlerFunc(principalEcho))
	now := time.Now().Unix()
	c := f.as.Claims("alice", f.url)
	c["exp"] = now - 60 // expired a minute ago, within the 2 min skew
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, c), initBody); r.status != http.StatusOK {
		t.Errorf("within leeway: %d", r.status)
	}
	c["exp"] = now - 180
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, c), initBody); r.status != http.StatusUnauthorized {
		t.Errorf("past leeway: %d", r.status)
	}
	// An audience list naming us among others, and our URI with an upper-case host.
	c = f.as.Claims("alice", f.url)
	c["aud"] = []string{"https://other.example.com", f.url}
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, c), initBody); r.status != http.StatusOK {
		t.Errorf("audience list: %d", r.status)
	}
	c["aud"] = strings.Replace(f.url, "127.0.0.1", "127.0.0.1", 1)
	u, _ := url.Parse(f.url)
	c["aud"] = "HTTP://" + strings.ToUpper(u.Host) + u.Path
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, c), initBody); r.status != http.StatusOK {
		t.Errorf("upper-case scheme and host: %d", r.status)
	}
	c["aud"] = f.url + "/"
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, c), initBody); r.status != http.StatusUnauthorized {
		t.Errorf("another path: %d", r.status)
	}
}

func TestBearerKeyRotation(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{RefreshInterval: time.Minute}, http.HandlerFunc(principalEcho))
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("first token: %d", r.status)
	}
	if n := f.as.JWKSFetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches after the first token, want 1 (lazy, then cached)", n)
	}
	// The authorization server rotates to a new key: the unknown kid triggers one refresh.
	key2 := testutil.NewECKey(t, "key-2")
	f.as.Rotate(key2, false)
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("token of the rotated key: %d %s", r.status, r.body)
	}
	if n := f.as.JWKSFetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after the rotation, want 2", n)
	}
	// It rotates again, dropping key-2: once the set was fetched again, key-2 tokens are refused.
	f.as.Rotate(testutil.NewECKey(t, "key-3"), false)
	f.clock.Advance(2 * time.Minute)
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("token of key-3: %d", r.status)
	}
	retired := testutil.MintWith(t, key2, "at+jwt", f.as.Claims("alice", f.url))
	wantChallenge(t, post(t, f.url, "Bearer "+retired, initBody), http.StatusUnauthorized, "invalid_token", f.meta)
	// Keys are trusted for KeyCacheTTL, then fetched again even without an unknown kid.
	before := f.as.JWKSFetches.Load()
	f.clock.Advance(2 * time.Hour)
	long := f.as.Claims("alice", f.url)
	long["exp"] = time.Now().Add(3 * time.Hour).Unix()
	if r := post(t, f.url, "Bearer "+f.as.Mint(t, long), initBody); r.status != http.StatusOK {
		t.Fatalf("after the cache TTL: %d", r.status)
	}
	auth.AwaitKeyFetch(f.verifier) // stale keys were served while the set is fetched again
	if n := f.as.JWKSFetches.Load(); n != before+1 {
		t.Fatalf("%d JWKS fetches after the TTL, want %d", n, before+1)
	}
}

func TestBearerUnknownKidRefreshIsRateLimited(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{RefreshInterval: time.Minute}, http.HandlerFunc(principalEcho))
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("first token: %d", r.status)
	}
	// A flood of tokens with made-up key ids, some at once: at most one more fetch per interval.
	stranger := testutil.NewECKey(t, "made-up")
	tok := testutil.MintWith(t, stranger, "at+jwt", f.as.Claims("alice", f.url))
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := post(t, f.url, "Bearer "+tok, initBody); r.status != http.StatusUnauthorized {
				t.Errorf("unknown kid: %d", r.status)
			}
		}()
	}
	wg.Wait()
	if n := f.as.JWKSFetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches, want 2 (one refresh for the unknown kid)", n)
	}
	// After the interval, one more refresh is allowed; a rotation then succeeds.
	f.as.Rotate(testutil.NewECKey(t, "key-2"), true)
	good := f.as.Token(t, "alice", f.url)
	if r := post(t, f.url, "Bearer "+good, initBody); r.status != http.StatusUnauthorized {
		t.Fatalf("rotated key within the interval: %d, want 401 (refresh rate-limited)", r.status)
	}
	f.clock.Advance(61 * time.Second)
	if r := post(t, f.url, "Bearer "+good, initBody); r.status != http.StatusOK {
		t.Fatalf("rotated key after the interval: %d", r.status)
	}
	if n := f.as.JWKSFetches.Load(); n != 3 {
		t.Fatalf("%d JWKS fetches, want 3", n)
	}
}

func TestBearerScopesOption(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{Scopes: []string{"mcp:use"}}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	pc := wantChallenge(t, post(t, f.url, "", initBody), http.StatusUnauthorized, "", f.meta)
	if pc.params["scope"] != "mcp:use" {
		t.Errorf("scope=%q, want mcp:use", pc.params["scope"])
	}
	pc = wantChallenge(t, post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url, "other"), initBody), http.StatusForbidden, "insufficient_scope", f.meta)
	if pc.params["scope"] != "mcp:use" {
		t.Errorf("scope=%q, want mcp:use", pc.params["scope"])
	}
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url, "mcp:use"), initBody); r.status != http.StatusOK {
		t.Errorf("with the scope: %d", r.status)
	}
}

func TestBearerVerifierUnavailable(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	issuer := down.URL
	down.Close() // nothing listens there any more
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: "http://127.0.0.1/mcp"})
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"})(http.HandlerFunc(principalEcho))
	ts := httptest.NewServer(h)
	defer ts.Close()
	as := testutil.StartAuthServer(t)
	r := post(t, ts.URL, "Bearer "+as.Token(t, "alice", "http://127.0.0.1/mcp"), initBody)
	if r.status != http.StatusServiceUnavailable || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("unreachable JWKS: %d %q, want 503 without a challenge", r.status, r.header.Get("WWW-Authenticate"))
	}
	if !strings.Contains(r.body, `"code":-32603`) {
		t.Errorf("body %s, want -32603", r.body)
	}
}

func TestBearerVerifierFuncAndPrincipal(t *testing.T) {
	v := auth.VerifierFunc(func(ctx context.Context, token string) (*auth.TokenInfo, error) {
		switch token {
		case "alice":
			return &auth.TokenInfo{Subject: "alice", Issuer: "https://as.example.com"}, nil
		case "nobody":
			return &auth.TokenInfo{}, nil
		}
		return nil, errors.New("unknown")
	})
	meta := "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	h := auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta,
		Principal: func(ti *auth.TokenInfo) string {
			if ti.Subject == "" {
				return ""
			}
			return ti.Issuer + "#" + ti.Subject
		}})(http.HandlerFunc(principalEcho))
	ts := httptest.NewServer(h)
	defer ts.Close()
	if r := post(t, ts.URL, "Bearer alice", initBody); r.body != "https://as.example.com#alice|" {
		t.Errorf("principal %q", r.body)
	}
	for _, tok := range []string{"nobody", "unknown"} {
		wantChallenge(t, post(t, ts.URL, "Bearer "+tok, initBody), http.StatusUnauthorized, "invalid_token", meta)
	}
	// A preflight is not challenged.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodOptions, ts.URL, nil)
	if r := send(t, req); r.status != http.StatusOK {
		t.Errorf("OPTIONS: %d", r.status)
	}
}

// TestBearerResource: BearerOptions.Resource reaches the request's context (core.WithResource),
// where requestState sealing binds to it; without it there is none.
func TestBearerResource(t *testing.T) {
	v := auth.VerifierFunc(func(context.Context, string) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{Subject: "alice"}, nil
	})
	meta := "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := transport.Core.ResourceFrom(r.Context())
		_, _ = io.WriteString(w, u)
	})
	for want, opts := range map[string]auth.BearerOptions{
		"https://mcp.example.com/mcp": {ResourceMetadataURL: meta, Resource: "https://mcp.example.com/mcp"},
		"":                            {ResourceMetadataURL: meta},
	} {
		ts := httptest.NewServer(auth.RequireBearer(v, opts)(echo))
		if r := post(t, ts.URL, "Bearer x", initBody); r.body != want {
			t.Errorf("resource in the context = %q, want %q", r.body, want)
		}
		ts.Close()
	}
}

func TestConstructionPanics(t *testing.T) {
	v := auth.VerifierFunc(func(context.Context, string) (*auth.TokenInfo, error) { return nil, nil })
	good := "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	cases := map[string]func(){
		"nil verifier":      func() { auth.RequireBearer(nil, auth.BearerOptions{ResourceMetadataURL: good}) },
		"no metadata url":   func() { auth.RequireBearer(v, auth.BearerOptions{}) },
		"relative metadata": func() { auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: "/.well-known/x"}) },
		"metadata userinfo": func() {
			auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: "https://u:p@mcp.example.com/x"})
		},
		"metadata fragment": func() {
			auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: "https://mcp.example.com/x#frag"})
		},
		"metadata http remote": func() { auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: "http://mcp.example.com/x"}) },
		"bad scope":            func() { auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: good, Scopes: []string{"a b"}}) },
		"relative resource":    func() { auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: good, Resource: "/mcp"}) },
		"negative max":         func() { auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: good, MaxTokenBytes: -1}) },
		"jwt no issuer":        func() { auth.NewJWTVerifier(auth.JWTOptions{Audience: "https://mcp.example.com/mcp"}) },
		"jwt no audience":      func() { auth.NewJWTVerifier(auth.JWTOptions{Issuer: "https://as.example.com"}) },
		"jwt none":             func() { auth.NewJWTVerifier(jwtOpts("none")) },
		"jwt hmac":             func() { auth.NewJWTVerifier(jwtOpts("HS256")) },
		"jwt empty algs":       func() { auth.NewJWTVerifier(jwtOpts()) },
		"jwt negative ttl": func() {
			o := jwtOpts("RS256")
			o.KeyCacheTTL = -1
			auth.NewJWTVerifier(o)
		},
		"introspection no endpoint": func() {
			auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Audience: "https://mcp.example.com/mcp"})
		},
		"introspection no audience": func() {
			auth.NewIntrospectionVerifier(auth.IntrospectionOptions{Endpoint: "https://as.example.com/introspect"})
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) { wantPanic(t, "", f) })
	}
}

func jwtOpts(algs ...string) auth.JWTOptions {
	if algs == nil {
		algs = []string{}
	}
	return auth.JWTOptions{Issuer: "https://as.example.com", Audience: "https://mcp.example.com/mcp", Algorithms: algs}
}

func TestBearerKeyReplacedUnderSameKid(t *testing.T) {
	// An authorization server that restarts with fresh keys but the same key id (the upstream
	// conformance mock does): a signature that fails with the cached key fetches the set again.
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{RefreshInterval: time.Minute}, http.HandlerFunc(principalEcho))
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("first token: %d", r.status)
	}
	f.as.Rotate(testutil.NewRSAKey(t, f.as.Key().KID), false)
	if r := post(t, f.url, "Bearer "+f.as.Token(t, "alice", f.url), initBody); r.status != http.StatusOK {
		t.Fatalf("token of the replaced key: %d %s", r.status, r.body)
	}
	// Forged signatures under a known kid cannot make it fetch more than once per interval.
	before := f.as.JWKSFetches.Load()
	forger := testutil.NewRSAKey(t, f.as.Key().KID)
	for range 5 {
		bad := testutil.MintWith(t, forger, "at+jwt", f.as.Claims("mallory", f.url))
		wantChallenge(t, post(t, f.url, "Bearer "+bad, initBody), http.StatusUnauthorized, "invalid_token", f.meta)
	}
	if n := f.as.JWKSFetches.Load() - before; n != 0 {
		t.Fatalf("%d fetches for forged signatures within the interval, want 0 (the replacement used it)", n)
	}
}

func TestBearerClientHangingUpDoesNotPoisonTheKeyFetch(t *testing.T) {
	as := testutil.StartAuthServer(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		r.URL.Path = "/jwks"
		as.ServeHTTP(w, r)
	}))
	defer gate.Close()
	const res = "http://127.0.0.1/mcp"
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: res, JWKSURL: gate.URL + "/keys", RefreshInterval: time.Hour})
	tok := as.Token(t, "alice", res)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, tok)
		done <- err
	}()
	<-entered
	cancel() // the client hangs up while the keys are being fetched
	if err := <-done; !errors.Is(err, auth.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("the verification whose client hung up: %v (its wait ends with its context)", err)
	}
	close(release)
	// The fetch went on without it: the next request is served from the keys it brought,
	// without a second fetch.
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("after a hang-up: %v", err)
	}
	if n := as.JWKSFetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

func TestJWTVerifiedTokenCache(t *testing.T) {
	f := newBearerFixture(t, auth.BearerOptions{}, auth.JWTOptions{}, http.HandlerFunc(principalEcho))
	c := f.as.Claims("alice", f.url)
	c["exp"] = time.Now().Add(10 * time.Second).Unix()
	tok := f.as.Mint(t, c)
	for range 3 {
		if r := post(t, f.url, "Bearer "+tok, initBody); r.status != http.StatusOK {
			t.Fatalf("%d", r.status)
		}
	}
	if n := auth.JWTCacheLen(f.verifier); n != 1 {
		t.Fatalf("%d cached tokens, want 1", n)
	}
	// The entry never outlives the token: past exp and the leeway, the token is refused.
	f.clock.Advance(45 * time.Second)
	wantChallenge(t, post(t, f.url, "Bearer "+tok, initBody), http.StatusUnauthorized, "invalid_token", f.meta)
	// Refused tokens are not cached.
	bad := testutil.MintUnsigned(t, f.as.Key().KID, f.as.Claims("alice", f.url))
	wantChallenge(t, post(t, f.url, "Bearer "+bad, initBody), http.StatusUnauthorized, "invalid_token", f.meta)
	if n := auth.JWTCacheLen(f.verifier); n != 0 {
		t.Fatalf("%d cached tokens after expiry and a refusal, want 0", n)
	}
}
