package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// AuthServer is an in-process OAuth authorization server for tests and local examples: it
// publishes RFC 8414 metadata and a JWKS, mints RFC 9068 JWT access tokens with chosen claims
// and keys, hands out tokens at a token endpoint, and answers RFC 7662 introspection for opaque
// tokens registered with AddOpaque, and runs the flows an OAuth client needs (authorization
// code with PKCE, dynamic registration and client ID metadata documents, refresh with rotation,
// client credentials, DPoP-bound tokens). It is a test double: the authorization endpoint
// approves every request at once for subject "user", and a token request without grant_type
// gets a token for anyone.
//
// Endpoints, relative to Issuer:
//
//	GET  /.well-known/oauth-authorization-server   metadata
//	GET  /jwks                                      the published keys
//	POST /token        without grant_type, form: subject (default "user"), resource (the
//	                   audience), scope; answers {"access_token", "token_type":"Bearer",
//	                   "expires_in", "scope"}. With grant_type: authorization_code (PKCE S256
//	                   verified), refresh_token (rotated: the old one stops working) and
//	                   client_credentials (clients of AddClient), see authflow.go
//	GET  /authorize    approves at once and redirects with code, state and iss
//	POST /register     RFC 7591 dynamic client registration
//	POST /introspect   form: token; answers the registered response or {"active":false}
type AuthServer struct {
	// Issuer is the server's issuer URL (its base URL).
	Issuer string

	mu        sync.Mutex
	current   *SigningKey
	published []*SigningKey
	opaque    map[string]map[string]any
	// JWKSFetches counts the JWKS requests served.
	JWKSFetches atomic.Int64
	// Introspections counts the introspection requests served.
	Introspections atomic.Int64
	seq            atomic.Int64

	// The authorization flows (authflow.go). Set these before the first request.

	// Now is the clock of issued tokens and codes. Nil means time.Now.
	Now func() time.Time
	// TokenLifetime is the lifetime of issued access tokens. Zero means 5 minutes.
	TokenLifetime time.Duration
	// ScopesSupported is advertised as scopes_supported when set.
	ScopesSupported []string
	// DPoP advertises DPoP (RFC 9449) and binds the tokens of requests carrying a valid proof.
	DPoP  bool
	flows flowState
}

// SigningKey is a key the AuthServer signs with.
type SigningKey struct {
	KID string
	Alg jose.SignatureAlgorithm
	Key any // *rsa.PrivateKey or *ecdsa.PrivateKey
}

// public returns the key's public JWK.
func (k *SigningKey) public() jose.JSONWebKey {
	var pub any
	switch p := k.Key.(type) {
	case *rsa.PrivateKey:
		pub = &p.PublicKey
	case *ecdsa.PrivateKey:
		pub = &p.PublicKey
	}
	return jose.JSONWebKey{Key: pub, KeyID: k.KID, Algorithm: string(k.Alg), Use: "sig"}
}

// NewRSAKey returns a fresh RS256 signing key with the given key id.
func NewRSAKey(t testing.TB, kid string) *SigningKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &SigningKey{KID: kid, Alg: jose.RS256, Key: k}
}

// NewECKey returns a fresh ES256 signing key with the given key id.
func NewECKey(t testing.TB, kid string) *SigningKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &SigningKey{KID: kid, Alg: jose.ES256, Key: k}
}

// NewAuthServer returns an AuthServer for issuer, signing with key and publishing it. It is an
// http.Handler to mount at the root of issuer's origin.
func NewAuthServer(issuer string, key *SigningKey) *AuthServer {
	return &AuthServer{Issuer: strings.TrimSuffix(issuer, "/"), current: key, published: []*SigningKey{key}, opaque: map[string]map[string]any{}}
}

// StartAuthServer starts an AuthServer on a loopback port with a fresh RS256 key ("key-1"),
// closed when the test ends.
func StartAuthServer(t testing.TB) *AuthServer {
	t.Helper()
	key := NewRSAKey(t, "key-1")
	var as *AuthServer
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { as.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	as = NewAuthServer(ts.URL, key)
	return as
}

// Key returns the current signing key.
func (as *AuthServer) Key() *SigningKey {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.current
}

// Rotate makes key the signing key and publishes it; keepOld keeps the previous keys in the
// JWKS, otherwise only key is published.
func (as *AuthServer) Rotate(key *SigningKey, keepOld bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.current = key
	if keepOld {
		as.published = append(as.published, key)
	} else {
		as.published = []*SigningKey{key}
	}
}

// Claims returns the default claims of a token for subject and audience: iss, sub, aud,
// client_id, iat (now), exp (after TokenLifetime), jti, and scope when scopes are given.
func (as *AuthServer) Claims(subject, audience string, scopes ...string) map[string]any {
	now := as.now().Unix()
	c := map[string]any{
		"iss":       as.Issuer,
		"sub":       subject,
		"aud":       audience,
		"client_id": "test-client",
		"iat":       now,
		"exp":       now + int64(as.lifetime()/time.Second),
		"jti":       "jti-" + strconv.FormatInt(as.seq.Add(1), 10),
	}
	if len(scopes) > 0 {
		c["scope"] = strings.Join(scopes, " ")
	}
	return c
}

// Token mints a valid access token for subject and audience with the given scopes.
func (as *AuthServer) Token(t testing.TB, subject, audience string, scopes ...string) string {
	return as.Mint(t, as.Claims(subject, audience, scopes...))
}

// Mint signs claims with the current key as an at+jwt access token.
func (as *AuthServer) Mint(t testing.TB, claims map[string]any) string {
	return MintWith(t, as.Key(), "at+jwt", claims)
}

// MintWith signs claims with key and the given typ header ("" for none).
func MintWith(t testing.TB, key *SigningKey, typ string, claims map[string]any) string {
	s, err := mint(key, typ, claims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mint(key *SigningKey, typ string, claims map[string]any) (string, error) {
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.Alg, Key: jose.JSONWebKey{Key: key.Key, KeyID: key.KID}}, opts)
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// MintUnsigned returns a token with "alg":"none" and an empty signature.
func MintUnsigned(t testing.TB, kid string, claims map[string]any) string {
	return rawJWT(t, map[string]any{"alg": "none", "typ": "at+jwt", "kid": kid}, claims, func([]byte) []byte { return nil })
}

// MintHMACWithPublicKey returns an HS256 token whose MAC key is the PEM encoding of key's
// public key: the algorithm-confusion forgery a verifier must refuse.
func MintHMACWithPublicKey(t testing.TB, key *SigningKey, claims map[string]any) string {
	t.Helper()
	pub := key.public().Key
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return rawJWT(t, map[string]any{"alg": "HS256", "typ": "at+jwt", "kid": key.KID}, claims, func(in []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(in)
		return m.Sum(nil)
	})
}

func rawJWT(t testing.TB, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	in := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	return in + "." + enc.EncodeToString(sign([]byte(in)))
}

// AddOpaque registers an opaque token: introspection answers response (with "active": true
// added unless response sets it).
func (as *AuthServer) AddOpaque(token string, response map[string]any) {
	r := maps.Clone(response)
	if _, ok := r["active"]; !ok {
		r["active"] = true
	}
	as.mu.Lock()
	as.opaque[token] = r
	as.mu.Unlock()
}

// ServeHTTP serves the endpoints.
func (as *AuthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/.well-known/oauth-authorization-server" && r.Method == http.MethodGet:
		writeJSON(w, as.metadata())
	case r.URL.Path == "/jwks" && r.Method == http.MethodGet:
		as.JWKSFetches.Add(1)
		as.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range as.published {
			set.Keys = append(set.Keys, k.public())
		}
		as.mu.Unlock()
		writeJSON(w, set)
	case r.URL.Path == "/token" && r.Method == http.MethodPost:
		if r.PostFormValue("grant_type") != "" {
			as.serveGrant(w, r)
			return
		}
		as.serveToken(w, r)
	case r.URL.Path == "/authorize" && r.Method == http.MethodGet:
		as.serveAuthorize(w, r)
	case r.URL.Path == "/register" && r.Method == http.MethodPost:
		as.serveRegister(w, r)
	case r.URL.Path == "/introspect" && r.Method == http.MethodPost:
		as.Introspections.Add(1)
		token := r.PostFormValue("token")
		as.mu.Lock()
		resp, ok := as.opaque[token]
		as.mu.Unlock()
		if !ok {
			resp = map[string]any{"active": false}
		}
		writeJSON(w, resp)
	default:
		http.NotFound(w, r)
	}
}

// serveToken mints a token for the form's subject, resource and scope (a request without
// grant_type: the shortcut for tests and examples).
func (as *AuthServer) serveToken(w http.ResponseWriter, r *http.Request) {
	subject := r.PostFormValue("subject")
	if subject == "" {
		subject = "user"
	}
	resource := r.PostFormValue("resource")
	if resource == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_target","error_description":"resource is required (RFC 8707)"}`))
		return
	}
	scopes := strings.Fields(r.PostFormValue("scope"))
	token, err := mint(as.Key(), "at+jwt", as.Claims(subject, resource, scopes...))
	if err != nil {
		http.Error(w, fmt.Sprint(err), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(as.lifetime() / time.Second), "scope": strings.Join(scopes, " ")})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}
