package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Grant types and token types of the flows.
const (
	grantCode          = "authorization_code"
	grantRefresh       = "refresh_token"
	grantClientCreds   = "client_credentials"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	assertionTypeJWT   = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// TokenError is an error answer of a token or registration endpoint (RFC 6749 section 5.2).
type TokenError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the error code ("invalid_grant", "invalid_client", ...), empty when the answer
	// had none.
	Code string
	// Description is error_description.
	Description string
	// Endpoint is the URL that answered.
	Endpoint string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("%s answered HTTP %d", e.Endpoint, e.StatusCode)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// tokenResponse is a successful token endpoint answer.
type tokenResponse struct {
	AccessToken     string  `json:"access_token"`
	TokenType       string  `json:"token_type"`
	ExpiresIn       seconds `json:"expires_in"`
	RefreshToken    string  `json:"refresh_token"`
	Scope           string  `json:"scope"`
	IssuedTokenType string  `json:"issued_token_type"`
}

// seconds is expires_in: a JSON number, or a string holding one as some servers send it.
type seconds float64

func (s *seconds) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		b = []byte(str)
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("expires_in: %w", err)
	}
	*s = seconds(f)
	return nil
}

// obtain gets a new token for key from the server described by meta, by the grant the options
// select.
func (t *Transport) obtain(ctx context.Context, meta *serverMetadata, key Key, scopes []string) (*Token, error) {
	form := url.Values{}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	var c *ClientInfo
	var err error
	switch {
	case t.opts.Enterprise != nil:
		c = t.preRegistered(key.Issuer)
		jag, err := t.exchangeIDToken(ctx, meta, key, scopes)
		if err != nil {
			return nil, err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", jag)
	case t.opts.Assertion != nil:
		c = t.preRegistered(key.Issuer)
		a, err := t.opts.Assertion(ctx)
		if err != nil {
			return nil, fmt.Errorf("the JWT-bearer assertion: %w", err)
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", a)
	case t.opts.ClientCredentials:
		c = t.preRegistered(key.Issuer)
		form.Set("grant_type", grantClientCreds)
	default:
		if t.opts.Authorizer == nil {
			return nil, errors.New("the server requires authorization and no Authorizer is set to ask a person (nor a grant without one)")
		}
		if c, err = t.register(ctx, meta, key.Issuer); err != nil {
			return nil, err
		}
		if form, err = t.authorizationCode(ctx, meta, key, c, scopes); err != nil {
			return nil, err
		}
	}
	if c == nil {
		return nil, fmt.Errorf("no client credentials for %s: set Options.ClientID", key.Issuer)
	}
	return t.token(ctx, meta, key, c, form, scopes)
}

// preRegistered returns the options' client when it may be used at issuer.
func (t *Transport) preRegistered(issuer string) *ClientInfo {
	if t.opts.ClientID == "" || (t.opts.ClientIssuer != "" && t.opts.ClientIssuer != issuer) {
		return nil
	}
	return &ClientInfo{ID: t.opts.ClientID, Secret: t.opts.ClientSecret}
}

// register returns the client's registration at the server: the stored one, the pre-registered
// client, the client ID metadata document URL where supported, else a dynamic registration.
func (t *Transport) register(ctx context.Context, meta *serverMetadata, issuer string) (*ClientInfo, error) {
	if c := t.preRegistered(issuer); c != nil {
		return c, nil
	}
	if c, err := t.store.Client(ctx, issuer); err != nil {
		return nil, fmt.Errorf("reading the registration: %w", err)
	} else if c != nil {
		return c, nil
	}
	if t.opts.ClientMetadataURL != "" && meta.ClientIDMetadataDocumentSupported {
		return &ClientInfo{ID: t.opts.ClientMetadataURL, AuthMethod: "none"}, nil
	}
	if meta.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("registration: %s supports neither dynamic client registration nor client ID metadata documents (set Options.ClientMetadataURL), and no client is pre-registered (Options.ClientID)", issuer)
	}
	redirect, err := t.opts.Authorizer.RedirectURL(ctx)
	if err != nil {
		return nil, fmt.Errorf("registration: the redirect URL: %w", err)
	}
	name := t.opts.ClientName
	if name == "" {
		name = DefaultClientName
	}
	body := map[string]any{
		"client_name":    name,
		"redirect_uris":  []string{redirect},
		"grant_types":    []string{grantCode, grantRefresh},
		"response_types": []string{"code"},
	}
	body["application_type"] = applicationType(redirect)
	if slices.Contains(meta.TokenEndpointAuthMethodsSupported, "none") {
		body["token_endpoint_auth_method"] = "none"
	}
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.RegistrationEndpoint, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var got struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := t.post(req, &got); err != nil {
		return nil, fmt.Errorf("registration at %s: %w", meta.RegistrationEndpoint, err)
	}
	if got.ClientID == "" {
		return nil, fmt.Errorf("registration at %s: the answer has no client_id", meta.RegistrationEndpoint)
	}
	c := &ClientInfo{ID: got.ClientID, Secret: got.ClientSecret, AuthMethod: got.AuthMethod, RedirectURI: redirect}
	if err := t.store.SetClient(ctx, issuer, c); err != nil {
		return nil, fmt.Errorf("storing the registration: %w", err)
	}
	return c, nil
}

// authorizationCode runs the person's part of the authorization code flow with PKCE and
// returns the token request's form.
func (t *Transport) authorizationCode(ctx context.Context, meta *serverMetadata, key Key, c *ClientInfo, scopes []string) (url.Values, error) {
	if meta.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("authorization: %s has no authorization endpoint", key.Issuer)
	}
	if !meta.legacy && !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("authorization: %s does not list PKCE S256 in code_challenge_methods_supported: refusing to proceed without PKCE", key.Issuer)
	}
	redirect := c.RedirectURI
	if redirect == "" {
		var err error
		if redirect, err = t.opts.Authorizer.RedirectURL(ctx); err != nil {
			return nil, fmt.Errorf("authorization: the redirect URL: %w", err)
		}
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	au, err := url.Parse(meta.AuthorizationEndpoint)
	if err != nil {
		return nil, fmt.Errorf("authorization: the endpoint %q: %w", meta.AuthorizationEndpoint, err)
	}
	q := au.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", redirect)
	q.Set("state", state)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", key.Resource)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	au.RawQuery = q.Encode()
	back, err := t.opts.Authorizer.Authorize(ctx, au.String())
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	if back.Get("state") != state {
		return nil, errors.New("authorization: the redirect's state does not match the request's: refusing it")
	}
	// RFC 9207: a present iss must be the issuer exactly; a server that advertises it must send it.
	if iss, ok := back["iss"]; ok {
		if len(iss) != 1 || iss[0] != key.Issuer {
			return nil, fmt.Errorf("authorization: the redirect's iss %q is not the issuer %q: refusing it (RFC 9207)", back.Get("iss"), key.Issuer)
		}
	} else if meta.IssParameterSupported {
		return nil, fmt.Errorf("authorization: %s advertises the iss parameter but the redirect has none: refusing it (RFC 9207)", key.Issuer)
	}
	if e := back.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization: refused: %s %s", e, back.Get("error_description"))
	}
	code := back.Get("code")
	if code == "" {
		return nil, errors.New("authorization: the redirect has no code")
	}
	form := url.Values{}
	form.Set("grant_type", grantCode)
	form.Set("code", code)
	form.Set("redirect_uri", redirect)
	form.Set("code_verifier", verifier)
	return form, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// refresh trades tok's refresh token for a new token (keeping it when none comes back).
func (t *Transport) refresh(ctx context.Context, st *resourceState, tok *Token) (*Token, error) {
	t.mu.Lock()
	key, meta := st.key, st.meta
	t.mu.Unlock()
	c := t.preRegistered(key.Issuer)
	if c == nil {
		var err error
		if c, err = t.store.Client(ctx, key.Issuer); err != nil || c == nil {
			return nil, fmt.Errorf("refresh: no registration at %s", key.Issuer)
		}
	}
	form := url.Values{}
	form.Set("grant_type", grantRefresh)
	form.Set("refresh_token", tok.RefreshToken)
	nt, err := t.token(ctx, meta, key, c, form, tok.Scopes)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && te.Code == "invalid_grant" {
			_ = t.store.SetToken(ctx, key, nil)
		}
		return nil, fmt.Errorf("refresh: %w", err)
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken
	}
	if err := t.store.SetToken(ctx, key, nt); err != nil {
		return nil, fmt.Errorf("storing the token: %w", err)
	}
	t.setToken(st, nt)
	return nt, nil
}

// token sends one token request (with the resource indicator, client authentication and a
// DPoP proof where the server supports it) and turns the answer into a Token.
func (t *Transport) token(ctx context.Context, meta *serverMetadata, key Key, c *ClientInfo, form url.Values, scopes []string) (*Token, error) {
	if meta.TokenEndpoint == "" {
		return nil, fmt.Errorf("%s has no token endpoint", key.Issuer)
	}
	form.Set("resource", key.Resource)
	if err := t.authenticate(form, nil, meta, c); err != nil {
		return nil, err
	}
	var tr tokenResponse
	useDPoP := t.dpop != nil && slices.Contains(meta.DPoPSigningAlgValuesSupported, t.dpop.alg)
	if err := t.postForm(ctx, meta.TokenEndpoint, form, meta, c, useDPoP, &tr); err != nil {
		return nil, fmt.Errorf("token request (%s): %w", form.Get("grant_type"), err)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token request (%s): the answer has no access_token", form.Get("grant_type"))
	}
	tok := &Token{Issuer: key.Issuer, Resource: key.Resource, AccessToken: tr.AccessToken, Type: tr.TokenType, RefreshToken: tr.RefreshToken, Scopes: scopes}
	if tr.Scope != "" {
		tok.Scopes = strings.Fields(tr.Scope)
	}
	if tr.ExpiresIn > 0 {
		tok.Expiry = t.now().Add(time.Duration(float64(tr.ExpiresIn) * float64(time.Second)))
	}
	return tok, nil
}

// authMethod is the token endpoint authentication the client uses at the server.
func (t *Transport) authMethod(meta *serverMetadata, c *ClientInfo) string {
	if c.AuthMethod != "" {
		return c.AuthMethod
	}
	supported := meta.TokenEndpointAuthMethodsSupported
	if t.opts.PrivateKey != nil && c.ID == t.opts.ClientID && (len(supported) == 0 || slices.Contains(supported, "private_key_jwt")) {
		return "private_key_jwt"
	}
	if c.Secret == "" {
		return "none"
	}
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") || !slices.Contains(supported, "client_secret_post") {
		return "client_secret_basic"
	}
	return "client_secret_post"
}

// authenticate adds the client's authentication to form (or to h for HTTP Basic; h nil only
// sets the form's part).
func (t *Transport) authenticate(form url.Values, h http.Header, meta *serverMetadata, c *ClientInfo) error {
	switch t.authMethod(meta, c) {
	case "client_secret_basic":
		if h != nil {
			h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret))))
		}
	case "client_secret_post":
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case "private_key_jwt":
		if h != nil {
			return nil
		}
		a, err := clientAssertion(t.opts.PrivateKey, t.opts.KeyID, c.ID, meta.Issuer, t.now())
		if err != nil {
			return fmt.Errorf("signing the client assertion: %w", err)
		}
		form.Set("client_assertion_type", assertionTypeJWT)
		form.Set("client_assertion", a)
	default:
		form.Set("client_id", c.ID)
	}
	return nil
}

// postForm posts form to endpoint and decodes the answer into v. With useDPoP it carries a
// proof and answers one use_dpop_nonce challenge.
func (t *Transport) postForm(ctx context.Context, endpoint string, form url.Values, meta *serverMetadata, c *ClientInfo, useDPoP bool, v any) error {
	eu, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if c != nil && meta != nil {
			if err := t.authenticate(url.Values{}, req.Header, meta, c); err != nil {
				return err
			}
		}
		if useDPoP {
			proof, err := t.dpop.proof(http.MethodPost, eu, t.nonce(eu), "", t.now())
			if err != nil {
				return err
			}
			req.Header.Set("DPoP", proof)
		}
		err = t.post(req, v)
		var te *TokenError
		if useDPoP && attempt == 0 && errors.As(err, &te) && te.Code == "use_dpop_nonce" && t.nonce(eu) != "" {
			continue
		}
		return err
	}
}

// post sends req to an authorization server and decodes a JSON answer into v: bounded in size,
// an error answer as *TokenError.
func (t *Transport) post(req *http.Request, v any) error {
	resp, err := t.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	t.noteNonce(req.URL, resp.Header)
	body, err := readLimited(resp.Body, t.maxBytes)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		te := &TokenError{StatusCode: resp.StatusCode, Endpoint: req.URL.String()}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			te.Code, te.Description = e.Error, e.Description
		}
		return te
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: not a JSON answer: %w", req.URL, err)
	}
	return nil
}

// exchangeIDToken trades the person's ID token at the identity provider for an ID-JAG for the
// authorization server and resource (RFC 8693).
func (t *Transport) exchangeIDToken(ctx context.Context, meta *serverMetadata, key Key, scopes []string) (string, error) {
	e := t.opts.Enterprise
	idt, err := e.IDToken(ctx)
	if err != nil {
		return "", fmt.Errorf("enterprise authorization: the ID token: %w", err)
	}
	form := url.Values{}
	form.Set("grant_type", grantTokenExchange)
	form.Set("requested_token_type", tokenTypeIDJAG)
	form.Set("subject_token", idt)
	form.Set("subject_token_type", tokenTypeIDToken)
	form.Set("audience", meta.Issuer)
	form.Set("resource", key.Resource)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if e.ClientID != "" {
		form.Set("client_id", e.ClientID)
	}
	if e.ClientSecret != "" {
		form.Set("client_secret", e.ClientSecret)
	}
	var tr tokenResponse
	if err := t.postForm(ctx, e.TokenEndpoint, form, nil, nil, false, &tr); err != nil {
		return "", fmt.Errorf("enterprise authorization: token exchange at the identity provider: %w", err)
	}
	if tr.AccessToken == "" || (tr.IssuedTokenType != "" && tr.IssuedTokenType != tokenTypeIDJAG) {
		return "", fmt.Errorf("enterprise authorization: the identity provider issued no ID-JAG (issued_token_type %q)", tr.IssuedTokenType)
	}
	return tr.AccessToken, nil
}

// applicationType is the registration's application_type (SEP-837): "native" for a loopback or
// private-scheme redirect (a program on the person's machine), "web" otherwise.
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err == nil && (loopbackHost(u.Hostname()) || u.Scheme != "http" && u.Scheme != "https") {
		return "native"
	}
	return "web"
}
