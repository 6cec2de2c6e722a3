package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
)

// dpopSite is an endpoint behind RequireBearer with DPoP on, over real HTTP, trusting a test
// authorization server, with a client key and a token bound to it.
type dpopSite struct {
	as    *testutil.AuthServer
	base  string // http://127.0.0.1:PORT
	url   string // the endpoint, base + "/mcp"
	layer http.Handler
	front http.Handler // what the server runs: layer unless a test puts something in front
	key   *testutil.DPoPKey
	token string // bound to key, audience url
}

// startDPoP serves the layer with opts (its DPoP member) on every path (the endpoint is /mcp);
// the handler answers 200 with the principal.
func startDPoP(t *testing.T, opts auth.BearerOptions) *dpopSite {
	t.Helper()
	as := testutil.StartAuthServer(t)
	site := &dpopSite{as: as, key: testutil.NewDPoPKey(t)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { site.front.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	site.base, site.url = srv.URL, srv.URL+"/mcp"
	if opts.ResourceMetadataURL == "" {
		opts.ResourceMetadataURL = auth.MetadataURL(site.url)
	}
	v := auth.NewJWTVerifier(auth.JWTOptions{Issuer: as.Issuer, Audience: site.url})
	site.layer = auth.RequireBearer(v, opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := core.PrincipalFrom(r.Context())
		_, _ = w.Write([]byte(p))
	}))
	site.front = site.layer
	site.token = as.Mint(t, site.key.BoundClaims(as.Claims("alice", site.url)))
	return site
}

// do sends a request to the endpoint with the Authorization value and the DPoP headers given.
func (s *dpopSite) do(t *testing.T, method, authz string, proofs ...string) reply {
	t.Helper()
	return s.doAt(t, s.url, method, authz, proofs...)
}

// doAt is do for another URL.
func (s *dpopSite) doAt(t *testing.T, url, method, authz string, proofs ...string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	for _, p := range proofs {
		req.Header.Add("DPoP", p)
	}
	return send(t, req)
}

// proof is a valid proof for a POST to the endpoint presenting the site's token.
func (s *dpopSite) proof(t *testing.T, edit func(*testutil.ProofParts)) string {
	return s.key.Proof(t, http.MethodPost, s.url, s.token, edit)
}

// challenges parses every WWW-Authenticate value of r, in order.
func challenges(t *testing.T, r reply) []parsedChallenge {
	t.Helper()
	var out []parsedChallenge
	for _, v := range r.header.Values("WWW-Authenticate") {
		out = append(out, parseChallenge(t, v))
	}
	return out
}

// wantRefusal checks status, that the first challenge is of scheme with error code (""
// for none), and for DPoP the algs parameter.
func wantRefusal(t *testing.T, r reply, status int, scheme, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d (%v, %s)", r.status, status, r.header.Values("WWW-Authenticate"), r.body)
	}
	ch := challenges(t, r)
	if len(ch) == 0 {
		t.Fatalf("no challenge, want %s error=%q", scheme, code)
	}
	if ch[0].scheme != scheme || ch[0].params["error"] != code {
		t.Fatalf("first challenge %s error=%q, want %s error=%q (%v)", ch[0].scheme, ch[0].params["error"], scheme, code, r.header.Values("WWW-Authenticate"))
	}
	if code != "" && ch[0].params["error_description"] == "" {
		t.Fatalf("challenge %v has no error_description", ch[0])
	}
	if scheme == "DPoP" && ch[0].params["algs"] == "" {
		t.Fatalf("DPoP challenge without algs: %v", ch[0])
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Fatal("a refusal without Cache-Control: no-store")
	}
}

// Every refusal of RFC 9449 section 4.3 (and of the token binding) on the resource server, each
// against a request that is valid in every other respect.
func TestDPoPRefusals(t *testing.T) {
	s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPAccepted}})
	other := testutil.NewDPoPKey(t)
	authz := "DPoP " + s.token
	set := func(k string, v any) func(*testutil.ProofParts) {
		return func(p *testutil.ProofParts) { p.Claims[k] = v }
	}
	del := func(k string) func(*testutil.ProofParts) {
		return func(p *testutil.ProofParts) { delete(p.Claims, k) }
	}
	hdr := func(k string, v any) func(*testutil.ProofParts) {
		return func(p *testutil.ProofParts) {
			if v == nil {
				delete(p.Header, k)
			} else {
				p.Header[k] = v
			}
		}
	}
	tampered := func() string {
		p := s.proof(t, nil)
		i := strings.LastIndexByte(p, '.')
		sig := []byte(p[i+1:])
		if sig[3] == 'A' {
			sig[3] = 'B'
		} else {
			sig[3] = 'A'
		}
		return p[:i+1] + string(sig)
	}
	unboundToken := s.as.Token(t, "alice", s.url)
	foreignBound := s.as.Mint(t, other.BoundClaims(s.as.Claims("alice", s.url)))
	wrongAudience := s.as.Mint(t, s.key.BoundClaims(s.as.Claims("alice", "https://other.example.com/mcp")))
	now := time.Now().Unix()
	cases := []struct {
		name   string
		authz  string
		proofs []string
		code   string
	}{
		{"no DPoP header", authz, nil, "invalid_dpop_proof"},
		{"two DPoP headers", authz, []string{s.proof(t, nil), s.proof(t, nil)}, "invalid_dpop_proof"},
		{"two proofs in one header", authz, []string{s.proof(t, nil) + ", " + s.proof(t, nil)}, "invalid_dpop_proof"},
		{"not a JWT", authz, []string{"this-is-not-a-jwt"}, "invalid_dpop_proof"},
		{"typ jwt", authz, []string{s.proof(t, hdr("typ", "jwt"))}, "invalid_dpop_proof"},
		{"no typ", authz, []string{s.proof(t, hdr("typ", nil))}, "invalid_dpop_proof"},
		{"alg none", authz, []string{s.proof(t, hdr("alg", "none"))}, "invalid_dpop_proof"},
		{"alg HS256", authz, []string{s.proof(t, hdr("alg", "HS256"))}, "invalid_dpop_proof"},
		{"no jwk", authz, []string{s.proof(t, hdr("jwk", nil))}, "invalid_dpop_proof"},
		{"private key in jwk", authz, []string{s.proof(t, hdr("jwk", s.key.PrivateJWK()))}, "invalid_dpop_proof"},
		{"jwk of another key", authz, []string{s.proof(t, hdr("jwk", other.PublicJWK()))}, "invalid_dpop_proof"},
		{"tampered signature", authz, []string{tampered()}, "invalid_dpop_proof"},
		{"no jti", authz, []string{s.proof(t, del("jti"))}, "invalid_dpop_proof"},
		{"no htm", authz, []string{s.proof(t, del("htm"))}, "invalid_dpop_proof"},
		{"no htu", authz, []string{s.proof(t, del("htu"))}, "invalid_dpop_proof"},
		{"no iat", authz, []string{s.proof(t, del("iat"))}, "invalid_dpop_proof"},
		{"htm GET", authz, []string{s.proof(t, set("htm", "GET"))}, "invalid_dpop_proof"},
		{"htm in lower case", authz, []string{s.proof(t, set("htm", "post"))}, "invalid_dpop_proof"},
		{"htu of another host", authz, []string{s.proof(t, set("htu", "https://wrong.example.com/mcp"))}, "invalid_dpop_proof"},
		{"htu of another path", authz, []string{s.proof(t, set("htu", strings.TrimSuffix(s.url, "/mcp")+"/other"))}, "invalid_dpop_proof"},
		{"iat stale", authz, []string{s.proof(t, set("iat", now-303))}, "invalid_dpop_proof"},
		{"iat in the future", authz, []string{s.proof(t, set("iat", now+303))}, "invalid_dpop_proof"},
		{"no ath", authz, []string{s.proof(t, del("ath"))}, "invalid_dpop_proof"},
		{"wrong ath", authz, []string{s.proof(t, set("ath", "not-the-right-hash"))}, "invalid_dpop_proof"},
		{"token bound to another key", "DPoP " + foreignBound, []string{s.key.Proof(t, http.MethodPost, s.url, foreignBound, nil)}, "invalid_token"},
		{"token not bound", "DPoP " + unboundToken, []string{s.key.Proof(t, http.MethodPost, s.url, unboundToken, nil)}, "invalid_token"},
		{"token for another resource", "DPoP " + wrongAudience, []string{s.key.Proof(t, http.MethodPost, s.url, wrongAudience, nil)}, "invalid_token"},
		{"malformed DPoP credential", "DPoP a b", []string{s.proof(t, nil)}, "invalid_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, http.MethodPost, c.authz, c.proofs...)
			wantRefusal(t, r, http.StatusUnauthorized, "DPoP", c.code)
			if ch := challenges(t, r); len(ch) != 2 || ch[1].scheme != "Bearer" || ch[1].params["error"] != "" {
				t.Fatalf("challenges %v, want the DPoP one then a bare Bearer one (both schemes accepted)", r.header.Values("WWW-Authenticate"))
			}
			if r.body == "" || !strings.Contains(r.body, `"code":-32600`) {
				t.Fatalf("body %s, want a JSON-RPC -32600 error", r.body)
			}
		})
	}
	// The valid request of which each case above bends one thing is accepted.
	if r := s.do(t, http.MethodPost, authz, s.proof(t, nil)); r.status != http.StatusOK || r.body != "alice" {
		t.Fatalf("valid DPoP request: %d %s", r.status, r.body)
	}
}

// A proof is accepted once; a bound token sent as Bearer is refused; the scheme name is
// case-insensitive; htu ignores the query and compares normalized URLs.
func TestDPoPReplayBearerAndNormalization(t *testing.T) {
	s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPAccepted}})
	p := s.proof(t, nil)
	if r := s.do(t, http.MethodPost, "DPoP "+s.token, p); r.status != http.StatusOK {
		t.Fatalf("first use: %d %s", r.status, r.body)
	}
	wantRefusal(t, s.do(t, http.MethodPost, "DPoP "+s.token, p), http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")

	r := s.do(t, http.MethodPost, "Bearer "+s.token, s.proof(t, nil))
	wantRefusal(t, r, http.StatusUnauthorized, "Bearer", "invalid_token")
	if d := challenges(t, r)[0].params["error_description"]; !strings.Contains(d, "DPoP") {
		t.Fatalf("bound-as-bearer description %q does not say why", d)
	}

	// Both schemes at once (two methods, RFC 6750 section 3.1): 400 invalid_request.
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add("Authorization", "Bearer "+s.token)
	req.Header.Add("Authorization", "DPoP "+s.token)
	req.Header.Set("DPoP", s.proof(t, nil))
	wantRefusal(t, send(t, req), http.StatusBadRequest, "DPoP", "invalid_request")

	host := strings.TrimPrefix(s.url, "http://127.0.0.1:")
	port := strings.TrimSuffix(host, "/mcp")
	for _, htu := range []string{
		s.url + "?x=1",
		s.url + "#frag",
		"HTTP://127.0.0.1:" + port + "/mcp",
		"http://127.0.0.1:" + port + "/a/../%6Dcp",
		"http://127.0.0.1:" + port + "/./mcp",
	} {
		proof := s.key.Proof(t, http.MethodPost, htu, s.token, nil)
		if r := s.do(t, http.MethodPost, "dpop "+s.token, proof); r.status != http.StatusOK {
			t.Fatalf("htu %s: %d %v", htu, r.status, r.header.Values("WWW-Authenticate"))
		}
	}
	// GET with htm GET is accepted too (the listen stream of a legacy session, say).
	if r := s.do(t, http.MethodGet, "DPoP "+s.token, s.key.Proof(t, http.MethodGet, s.url, s.token, nil)); r.status != http.StatusOK {
		t.Fatalf("GET: %d", r.status)
	}
}

// Challenges per mode: bearer only (no DPoP challenge, a DPoP credential is no credential),
// both (Bearer first, then DPoP algs), DPoP only (a bearer token is no credential); the
// protected resource metadata advertises what the options say.
func TestDPoPModes(t *testing.T) {
	for _, c := range []struct {
		mode    auth.DPoPMode
		schemes string // of the 401 to a request without credentials
		bearer  int    // status of a valid plain bearer token
		dpop    int    // status of a valid DPoP request
	}{
		{auth.DPoPOff, "Bearer", http.StatusOK, http.StatusUnauthorized},
		{auth.DPoPAccepted, "Bearer DPoP", http.StatusOK, http.StatusOK},
		{auth.DPoPRequired, "DPoP", http.StatusUnauthorized, http.StatusOK},
	} {
		s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: c.mode, Algorithms: []string{"ES256", "PS256"}}})
		r := s.do(t, http.MethodPost, "")
		var got []string
		for _, ch := range challenges(t, r) {
			got = append(got, ch.scheme)
			if ch.params["error"] != "" || ch.params["resource_metadata"] == "" {
				t.Fatalf("mode %d: challenge %v to a request without credentials", c.mode, ch)
			}
			if ch.scheme == "DPoP" && ch.params["algs"] != "ES256 PS256" {
				t.Fatalf("mode %d: algs %q", c.mode, ch.params["algs"])
			}
		}
		if r.status != http.StatusUnauthorized || strings.Join(got, " ") != c.schemes {
			t.Fatalf("mode %d: %d %v, want 401 %s", c.mode, r.status, got, c.schemes)
		}
		plain := s.as.Token(t, "alice", s.url)
		if r := s.do(t, http.MethodPost, "Bearer "+plain); r.status != c.bearer {
			t.Fatalf("mode %d: bearer token %d, want %d", c.mode, r.status, c.bearer)
		}
		if r := s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, nil)); r.status != c.dpop {
			t.Fatalf("mode %d: DPoP request %d, want %d", c.mode, r.status, c.dpop)
		}
		m := auth.DPoPOptions{Mode: c.mode, Algorithms: []string{"ES256", "PS256"}}.Advertise(auth.Metadata{Resource: s.url, AuthorizationServers: []string{s.as.Issuer}})
		doc := fetchMetadata(t, m)
		switch c.mode {
		case auth.DPoPOff:
			if strings.Contains(doc, "dpop") {
				t.Fatalf("DPoPOff metadata advertises DPoP: %s", doc)
			}
		case auth.DPoPAccepted:
			if !strings.Contains(doc, `"dpop_signing_alg_values_supported":["ES256","PS256"]`) || strings.Contains(doc, "dpop_bound_access_tokens_required") {
				t.Fatalf("DPoPAccepted metadata: %s", doc)
			}
		case auth.DPoPRequired:
			if !strings.Contains(doc, `"dpop_bound_access_tokens_required":true`) {
				t.Fatalf("DPoPRequired metadata: %s", doc)
			}
		}
	}
}

// fetchMetadata serves m and returns the document.
func fetchMetadata(t *testing.T, m auth.Metadata) string {
	t.Helper()
	h := auth.NewMetadataHandler(m)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, h.Paths()[0], nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metadata: %d", rec.Code)
	}
	return rec.Body.String()
}

// An allow-list without ES256 refuses an ES256 proof; behind a proxy, htu is the configured
// external URL, not the one the process saw.
func TestDPoPAlgorithmsAndExternalURL(t *testing.T) {
	s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, Algorithms: []string{"RS256"}}})
	wantRefusal(t, s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, nil)), http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")

	const external = "https://mcp.example.com/mcp"
	s = startDPoP(t, auth.BearerOptions{Resource: external, DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired}})
	wantRefusal(t, s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, nil)), http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")
	if r := s.do(t, http.MethodPost, "DPoP "+s.token, s.key.Proof(t, http.MethodPost, "https://MCP.example.com:443/mcp", s.token, nil)); r.status != http.StatusOK {
		t.Fatalf("proof for the external URL: %d %v", r.status, r.header.Values("WWW-Authenticate"))
	}
	s = startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, URL: external}})
	if r := s.do(t, http.MethodPost, "DPoP "+s.token, s.key.Proof(t, http.MethodPost, external, s.token, nil)); r.status != http.StatusOK {
		t.Fatalf("proof for DPoP.URL: %d", r.status)
	}
}

// htu names the request's path with the external origin: a proof for one path is refused on
// another whatever names the origin (the request, DPoP.URL or Resource); a path-less resource
// takes the request's path; a handler that rewrites r.URL (http.StripPrefix) changes nothing;
// behind a reverse proxy the proof names the proxy's URL.
func TestDPoPHTUPath(t *testing.T) {
	const origin = "https://mcp.example.com"
	for _, opts := range []auth.BearerOptions{
		{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired}},
		{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, URL: origin + "/mcp"}},
		{Resource: origin + "/mcp", DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired}},
		{Resource: origin, DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired}},
	} {
		s := startDPoP(t, opts)
		ext := s.base
		if opts.Resource != "" || opts.DPoP.URL != "" {
			ext = origin
		}
		authz := "DPoP " + s.token
		wantRefusal(t, s.doAt(t, s.base+"/other", http.MethodPost, authz, s.key.Proof(t, http.MethodPost, ext+"/mcp", s.token, nil)),
			http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")
		for _, path := range []string{"/mcp", "/other", "/"} {
			if r := s.doAt(t, s.base+path, http.MethodPost, authz, s.key.Proof(t, http.MethodPost, ext+path, s.token, nil)); r.status != http.StatusOK {
				t.Fatalf("%+v: proof for %s%s: %d %v", opts, ext, path, r.status, r.header.Values("WWW-Authenticate"))
			}
		}
	}

	s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired}})
	s.front = http.StripPrefix("/api", s.layer)
	if r := s.doAt(t, s.base+"/api/mcp", http.MethodPost, "DPoP "+s.token, s.key.Proof(t, http.MethodPost, s.base+"/api/mcp", s.token, nil)); r.status != http.StatusOK {
		t.Fatalf("under StripPrefix, proof for the URL sent: %d %v", r.status, r.header.Values("WWW-Authenticate"))
	}
	wantRefusal(t, s.doAt(t, s.base+"/api/mcp", http.MethodPost, "DPoP "+s.token, s.key.Proof(t, http.MethodPost, s.base+"/mcp", s.token, nil)),
		http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")

	// A reverse proxy on another port in front, forwarding the path and rewriting the Host.
	var proxied *dpopSite
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		target, _ := url.Parse(proxied.base)
		pr.SetURL(target)
	}})
	t.Cleanup(proxy.Close)
	proxied = startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, URL: proxy.URL}})
	authz := "DPoP " + proxied.token
	if r := proxied.doAt(t, proxy.URL+"/mcp", http.MethodPost, authz, proxied.key.Proof(t, http.MethodPost, proxy.URL+"/mcp", proxied.token, nil)); r.status != http.StatusOK {
		t.Fatalf("through the proxy, proof for its URL: %d %v", r.status, r.header.Values("WWW-Authenticate"))
	}
	for _, htu := range []string{proxied.url, proxy.URL + "/other"} {
		wantRefusal(t, proxied.doAt(t, proxy.URL+"/mcp", http.MethodPost, authz, proxied.key.Proof(t, http.MethodPost, htu, proxied.token, nil)),
			http.StatusUnauthorized, "DPoP", "invalid_dpop_proof")
	}
}

// Server nonces: a proof without one gets use_dpop_nonce and a DPoP-Nonce; the retry with it
// is accepted; a wrong one is refused; a nonce sealed by another replica with the shared key is
// good, one sealed with another key is not.
func TestDPoPNonces(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 7
	opts := auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, RequireNonce: true, NonceKey: key}}
	s := startDPoP(t, opts)
	r := s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, nil))
	wantRefusal(t, r, http.StatusUnauthorized, "DPoP", "use_dpop_nonce")
	nonce := r.header.Get("DPoP-Nonce")
	if nonce == "" {
		t.Fatal("use_dpop_nonce without a DPoP-Nonce header")
	}
	withNonce := func(n string) func(*testutil.ProofParts) {
		return func(p *testutil.ProofParts) { p.Claims["nonce"] = n }
	}
	if r := s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, withNonce(nonce))); r.status != http.StatusOK {
		t.Fatalf("retry with the nonce: %d %v", r.status, r.header.Values("WWW-Authenticate"))
	}
	wantRefusal(t, s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, withNonce("definitely-not-the-server-nonce"))), http.StatusUnauthorized, "DPoP", "use_dpop_nonce")

	// Another replica, same key: the nonce is good there (its proof names that replica's URL).
	other := startDPoP(t, opts)
	tok := other.as.Mint(t, s.key.BoundClaims(other.as.Claims("alice", other.url)))
	if r := other.do(t, http.MethodPost, "DPoP "+tok, s.key.Proof(t, http.MethodPost, other.url, tok, withNonce(nonce))); r.status != http.StatusOK {
		t.Fatalf("nonce of another replica with the shared key: %d", r.status)
	}
	// A replica with another key refuses it.
	key2 := make([]byte, 32)
	stranger := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, RequireNonce: true, NonceKey: key2}})
	tok = stranger.as.Mint(t, s.key.BoundClaims(stranger.as.Claims("alice", stranger.url)))
	wantRefusal(t, stranger.do(t, http.MethodPost, "DPoP "+tok, s.key.Proof(t, http.MethodPost, stranger.url, tok, withNonce(nonce))), http.StatusUnauthorized, "DPoP", "use_dpop_nonce")
	// ... until it lists the first key among its old ones.
	rotated := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, RequireNonce: true, NonceKey: key2, OldNonceKeys: [][]byte{key}}})
	tok = rotated.as.Mint(t, s.key.BoundClaims(rotated.as.Claims("alice", rotated.url)))
	if r := rotated.do(t, http.MethodPost, "DPoP "+tok, s.key.Proof(t, http.MethodPost, rotated.url, tok, withNonce(nonce))); r.status != http.StatusOK {
		t.Fatalf("nonce sealed with an old key: %d", r.status)
	}
}

// A nonce past its lifetime is refused with a new one; one past half of it is accepted and
// replaced.
func TestDPoPNonceExpiry(t *testing.T) {
	n := auth.NewNonceSealerForTest(make([]byte, 32), time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	nonce := auth.IssueNonce(n, t0)
	for _, c := range []struct {
		at          time.Duration
		fresh, good bool
	}{
		{0, true, true}, {29 * time.Second, true, true}, {31 * time.Second, false, true},
		{time.Minute, false, true}, {time.Minute + time.Second, false, false}, {-10 * time.Second, false, false},
	} {
		fresh, good := auth.OpenNonce(n, nonce, t0.Add(c.at))
		if fresh != c.fresh || good != c.good {
			t.Fatalf("at %s: fresh %v good %v, want %v %v", c.at, fresh, good, c.fresh, c.good)
		}
	}
	if _, good := auth.OpenNonce(n, nonce[:len(nonce)-1]+"A", t0); good {
		t.Fatal("an altered nonce opened")
	}
}

// failingReplay fails every call.
type failingReplay struct{}

func (failingReplay) Seen(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("down")
}

// A replay cache that fails refuses the request with 503, never admits it.
func TestDPoPReplayCacheDown(t *testing.T) {
	s := startDPoP(t, auth.BearerOptions{DPoP: auth.DPoPOptions{Mode: auth.DPoPRequired, Replay: failingReplay{}}})
	r := s.do(t, http.MethodPost, "DPoP "+s.token, s.proof(t, nil))
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "-32603") {
		t.Fatalf("replay cache down: %d %s", r.status, r.body)
	}
}

// The memory cache: a live id is a replay, an expired one is not, the bound holds (the oldest
// goes first), and concurrent calls with one id see one first use.
func TestMemoryReplayCache(t *testing.T) {
	ctx := context.Background()
	c := auth.NewMemoryReplayCache(3)
	now := time.Now()
	auth.SetReplayClock(c, func() time.Time { return now })
	seen := func(id string, ttl time.Duration) bool {
		r, err := c.Seen(ctx, id, now.Add(ttl))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if seen("a", time.Minute) || !seen("a", time.Minute) {
		t.Fatal("a live id is not a replay")
	}
	seen("b", time.Second)
	seen("c", time.Minute)
	seen("d", time.Minute) // full: "a", the oldest, goes
	if c.Len() != 3 || seen("a", time.Minute) {
		t.Fatalf("bound: %d entries, a still held", c.Len())
	}
	now = now.Add(2 * time.Second) // "b" expired
	if seen("b", time.Minute) {
		t.Fatal("an expired id counted as a replay")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	first := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !seen("z", time.Minute) {
				mu.Lock()
				first++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != 1 {
		t.Fatalf("%d first uses of one id", first)
	}
}

// Invalid DPoP options panic naming the option.
func TestDPoPOptionsInvalid(t *testing.T) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource"
	v := auth.VerifierFunc(func(context.Context, string) (*auth.TokenInfo, error) { return nil, errors.New("no") })
	for _, c := range []struct {
		want string
		opts auth.DPoPOptions
	}{
		{"BearerOptions.DPoP.Mode", auth.DPoPOptions{Mode: 7}},
		{"BearerOptions.DPoP.Algorithms must not be empty", auth.DPoPOptions{Mode: auth.DPoPAccepted, Algorithms: []string{}}},
		{"BearerOptions.DPoP.Algorithms: \"HS256\"", auth.DPoPOptions{Mode: auth.DPoPAccepted, Algorithms: []string{"HS256"}}},
		{"BearerOptions.DPoP.Algorithms: \"none\"", auth.DPoPOptions{Mode: auth.DPoPAccepted, Algorithms: []string{"none"}}},
		{"BearerOptions.DPoP.URL", auth.DPoPOptions{Mode: auth.DPoPAccepted, URL: "http://mcp.example.com/mcp"}},
		{"BearerOptions.DPoP.URL", auth.DPoPOptions{Mode: auth.DPoPAccepted, URL: "mcp"}},
		{"BearerOptions.DPoP.ProofWindow", auth.DPoPOptions{Mode: auth.DPoPAccepted, ProofWindow: -time.Second}},
		{"BearerOptions.DPoP.MaxReplayEntries", auth.DPoPOptions{Mode: auth.DPoPAccepted, MaxReplayEntries: -1}},
		{"BearerOptions.DPoP.NonceLifetime", auth.DPoPOptions{Mode: auth.DPoPAccepted, NonceLifetime: -time.Second}},
		{"BearerOptions.DPoP.NonceKey must be 32 bytes", auth.DPoPOptions{Mode: auth.DPoPAccepted, NonceKey: []byte("short")}},
		{"BearerOptions.DPoP.OldNonceKeys[0] must be 32 bytes", auth.DPoPOptions{Mode: auth.DPoPAccepted, OldNonceKeys: [][]byte{{1}}}},
		// DPoPOff validates every field too.
		{"BearerOptions.DPoP.Algorithms: \"none\"", auth.DPoPOptions{Algorithms: []string{"none"}}},
		{"BearerOptions.DPoP.Algorithms must not be empty", auth.DPoPOptions{Algorithms: []string{}}},
		{"BearerOptions.DPoP.URL", auth.DPoPOptions{URL: "mcp"}},
		{"BearerOptions.DPoP.ProofWindow", auth.DPoPOptions{ProofWindow: -1}},
		{"BearerOptions.DPoP.MaxReplayEntries", auth.DPoPOptions{MaxReplayEntries: -1}},
		{"BearerOptions.DPoP.NonceLifetime", auth.DPoPOptions{NonceLifetime: -1}},
		{"BearerOptions.DPoP.NonceKey must be 32 bytes", auth.DPoPOptions{NonceKey: []byte("short")}},
		{"BearerOptions.DPoP.OldNonceKeys[0] must be 32 bytes", auth.DPoPOptions{OldNonceKeys: [][]byte{{1}}}},
	} {
		testutil.WantPanic(t, c.want, func() {
			auth.RequireBearer(v, auth.BearerOptions{ResourceMetadataURL: meta, DPoP: c.opts})
		})
	}
	testutil.WantPanic(t, "Metadata.DPoPSigningAlgValuesSupported", func() {
		auth.NewMetadataHandler(auth.Metadata{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"}, DPoPSigningAlgValuesSupported: []string{"HS256"}})
	})
	testutil.WantPanic(t, "NewMemoryReplayCache", func() { auth.NewMemoryReplayCache(0) })
}
