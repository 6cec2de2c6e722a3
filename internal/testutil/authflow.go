package testutil

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// flowState is what the authorization flows of an AuthServer remember.
type flowState struct {
	mu       sync.Mutex
	clients  map[string]*flowClient
	codes    map[string]*grant
	refresh  map[string]*grant
	counters map[string]int
}

// flowClient is a registered client.
type flowClient struct {
	id, secret, authMethod string
	redirectURIs           []string
}

// grant is what a code or refresh token stands for.
type grant struct {
	client, subject, resource, redirectURI, challenge string
	scopes                                            []string
	expires                                           time.Time
}

func (as *AuthServer) now() time.Time {
	if as.Now != nil {
		return as.Now()
	}
	return time.Now()
}

func (as *AuthServer) lifetime() time.Duration {
	if as.TokenLifetime > 0 {
		return as.TokenLifetime
	}
	return 5 * time.Minute
}

// Count returns how many times an event of the flows happened: "register", "authorize",
// "authorization_code", "refresh_token", "client_credentials", "dpop" (a token bound to a
// proof's key), "cimd" (a client ID metadata document fetched).
func (as *AuthServer) Count(event string) int {
	as.flows.mu.Lock()
	defer as.flows.mu.Unlock()
	return as.flows.counters[event]
}

func (f *flowState) count(event string) {
	if f.counters == nil {
		f.counters = map[string]int{}
	}
	f.counters[event]++
}

// authServerPaths are the paths the AuthServer serves, relative to its issuer's origin.
var authServerPaths = []string{"/.well-known/oauth-authorization-server", "/jwks", "/token", "/introspect", "/authorize", "/register"}

// Mount serves the AuthServer's endpoints on mux, for an issuer at the mux's origin (sharing
// it with an MCP endpoint, as examples/oauth does).
func (as *AuthServer) Mount(mux *http.ServeMux) {
	for _, p := range authServerPaths {
		mux.Handle(p, as)
	}
}

// AddClient registers a confidential client (client_secret_basic or client_secret_post) for
// the client credentials grant.
func (as *AuthServer) AddClient(id, secret string) {
	as.flows.mu.Lock()
	defer as.flows.mu.Unlock()
	as.flows.add(&flowClient{id: id, secret: secret, authMethod: "client_secret_basic"})
}

func (f *flowState) add(c *flowClient) {
	f.init()
	f.clients[c.id] = c
}

// init makes the maps; callers hold mu.
func (f *flowState) init() {
	if f.clients == nil {
		f.clients, f.codes, f.refresh = map[string]*flowClient{}, map[string]*grant{}, map[string]*grant{}
	}
}

func (as *AuthServer) metadata() map[string]any {
	m := map[string]any{
		"issuer":                                         as.Issuer,
		"jwks_uri":                                       as.Issuer + "/jwks",
		"authorization_endpoint":                         as.Issuer + "/authorize",
		"token_endpoint":                                 as.Issuer + "/token",
		"registration_endpoint":                          as.Issuer + "/register",
		"introspection_endpoint":                         as.Issuer + "/introspect",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	}
	if as.ScopesSupported != nil {
		m["scopes_supported"] = as.ScopesSupported
	}
	if as.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256", "RS256"}
	}
	return m
}

func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": code, "error_description": description})
	_, _ = w.Write(b)
}

func randomToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// serveRegister is RFC 7591 registration: a public client for token_endpoint_auth_method
// "none", a confidential one (with a secret) otherwise.
func (as *AuthServer) serveRegister(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "a JSON body with redirect_uris is required")
		return
	}
	c := &flowClient{id: "client-" + randomToken(), authMethod: req.AuthMethod, redirectURIs: req.RedirectURIs}
	if c.authMethod == "" {
		c.authMethod = "client_secret_basic"
	}
	if c.authMethod != "none" {
		c.secret = randomToken()
	}
	as.flows.mu.Lock()
	as.flows.add(c)
	as.flows.count("register")
	as.flows.mu.Unlock()
	resp := map[string]any{"client_id": c.id, "client_name": req.ClientName, "redirect_uris": c.redirectURIs, "token_endpoint_auth_method": c.authMethod}
	if c.secret != "" {
		resp["client_secret"] = c.secret
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// client returns the client id names: a registered one, or a client ID metadata document
// fetched from id when it is a URL.
func (as *AuthServer) client(id string) (*flowClient, error) {
	as.flows.mu.Lock()
	c := as.flows.clients[id]
	as.flows.mu.Unlock()
	if c != nil {
		return c, nil
	}
	u, err := url.Parse(id)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("unknown client %q", id)
	}
	hc := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(id)
	if err != nil {
		return nil, fmt.Errorf("fetching the client ID metadata document: %w", err)
	}
	defer resp.Body.Close()
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&doc) != nil {
		return nil, fmt.Errorf("the client ID metadata document at %s is not readable (HTTP %d)", id, resp.StatusCode)
	}
	if doc.ClientID != id {
		return nil, fmt.Errorf("the client ID metadata document names client_id %q, not its URL", doc.ClientID)
	}
	as.flows.mu.Lock()
	as.flows.count("cimd")
	as.flows.mu.Unlock()
	return &flowClient{id: id, authMethod: "none", redirectURIs: doc.RedirectURIs}, nil
}

// serveAuthorize approves at once: it checks the client, redirect_uri, PKCE S256 and resource,
// and redirects with a code, the state and iss.
func (as *AuthServer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := as.client(q.Get("client_id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.redirectURIs, redirect) {
		http.Error(w, "redirect_uri is not registered for the client", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	bq := back.Query()
	fail := func(code, desc string) {
		bq.Set("error", code)
		bq.Set("error_description", desc)
		bq.Set("state", q.Get("state"))
		bq.Set("iss", as.Issuer)
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type must be code")
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE with S256 is required")
		return
	case q.Get("resource") == "":
		fail("invalid_target", "resource is required (RFC 8707)")
		return
	}
	code := randomToken()
	as.flows.mu.Lock()
	as.flows.init()
	as.flows.codes[code] = &grant{client: c.id, subject: "user", resource: q.Get("resource"), redirectURI: redirect,
		challenge: q.Get("code_challenge"), scopes: strings.Fields(q.Get("scope")), expires: as.now().Add(time.Minute)}
	as.flows.count("authorize")
	as.flows.mu.Unlock()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	bq.Set("iss", as.Issuer)
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// authenticateClient checks the client authentication of a token request as the client was
// registered.
func (as *AuthServer) authenticateClient(r *http.Request) (*flowClient, string) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	c, err := as.client(id)
	if err != nil {
		return nil, err.Error()
	}
	switch c.authMethod {
	case "none":
		if basic || secret != "" {
			return nil, "the client is public: no secret expected"
		}
	case "client_secret_basic", "client_secret_post":
		if secret != c.secret {
			return nil, "wrong client secret"
		}
	}
	return c, ""
}

// serveGrant is the token endpoint for the grants of the flows.
func (as *AuthServer) serveGrant(w http.ResponseWriter, r *http.Request) {
	c, problem := as.authenticateClient(r)
	if c == nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", problem)
		return
	}
	jkt := ""
	if as.DPoP && r.Header.Get("DPoP") != "" {
		var err error
		if jkt, err = as.checkProof(r); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", err.Error())
			return
		}
	}
	kind := r.PostFormValue("grant_type")
	resource := r.PostFormValue("resource")
	as.flows.mu.Lock()
	as.flows.init()
	var g *grant
	switch kind {
	case "authorization_code":
		g = as.flows.codes[r.PostFormValue("code")]
		delete(as.flows.codes, r.PostFormValue("code")) // single use
		switch {
		case g == nil || as.now().After(g.expires):
			problem = "unknown or expired code"
		case g.client != c.id || g.redirectURI != r.PostFormValue("redirect_uri"):
			problem = "the code was issued to another client or redirect_uri"
		case s256(r.PostFormValue("code_verifier")) != g.challenge:
			problem = "code_verifier does not match code_challenge"
		}
	case "refresh_token":
		g = as.flows.refresh[r.PostFormValue("refresh_token")]
		delete(as.flows.refresh, r.PostFormValue("refresh_token")) // rotation: one use
		if g == nil || g.client != c.id {
			problem = "unknown refresh token"
		}
	case "client_credentials":
		if c.secret == "" {
			problem = "client_credentials needs a confidential client"
		}
		g = &grant{client: c.id, subject: c.id, resource: resource, scopes: strings.Fields(r.PostFormValue("scope"))}
	default:
		as.flows.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+kind+" is not supported")
		return
	}
	if problem == "" && resource != g.resource {
		problem = "resource differs from the authorization's"
	}
	if problem != "" {
		as.flows.mu.Unlock()
		oauthError(w, http.StatusBadRequest, "invalid_grant", problem)
		return
	}
	as.flows.count(kind)
	resp := map[string]any{"token_type": "Bearer", "expires_in": int(as.lifetime() / time.Second), "scope": strings.Join(g.scopes, " ")}
	if kind != "client_credentials" {
		rt := randomToken()
		as.flows.refresh[rt] = g
		resp["refresh_token"] = rt
	}
	claims := as.Claims(g.subject, g.resource, g.scopes...)
	claims["client_id"] = c.id
	if jkt != "" {
		claims["cnf"] = map[string]string{"jkt": jkt}
		resp["token_type"] = "DPoP"
		as.flows.count("dpop")
	}
	as.flows.mu.Unlock()
	token, err := mint(as.Key(), "at+jwt", claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp["access_token"] = token
	writeJSON(w, resp)
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// checkProof verifies a token request's DPoP proof (RFC 9449 section 4.3: typ, an embedded
// public key, the signature, htm, htu and iat) and returns the key's thumbprint.
func (as *AuthServer) checkProof(r *http.Request) (string, error) {
	tok, err := jwt.ParseSigned(r.Header.Get("DPoP"), []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
	if err != nil {
		return "", fmt.Errorf("not a signed JWT: %w", err)
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", fmt.Errorf("typ %q, want dpop+jwt", typ)
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", fmt.Errorf("no public jwk header")
	}
	var c struct {
		HTM string `json:"htm"`
		HTU string `json:"htu"`
		IAT int64  `json:"iat"`
		JTI string `json:"jti"`
	}
	if err := tok.Claims(h.JSONWebKey.Key, &c); err != nil {
		return "", fmt.Errorf("the signature does not verify: %w", err)
	}
	if c.HTM != http.MethodPost || c.HTU != as.Issuer+"/token" || c.JTI == "" {
		return "", fmt.Errorf("htm %q, htu %q: not this request", c.HTM, c.HTU)
	}
	if d := as.now().Unix() - c.IAT; d > 300 || d < -300 {
		return "", fmt.Errorf("iat is %d s away", d)
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}
