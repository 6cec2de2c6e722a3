package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of IntrospectionOptions.
const (
	DefaultIntrospectionCacheTTL = time.Minute
)

// IntrospectionOptions configure NewIntrospectionVerifier.
type IntrospectionOptions struct {
	// Endpoint is the authorization server's RFC 7662 introspection endpoint. Required (https,
	// or http on a loopback host).
	Endpoint string
	// ClientID and ClientSecret authenticate this server to the endpoint (HTTP Basic, RFC 6749
	// section 2.3.1). Empty ClientID sends no credentials.
	ClientID, ClientSecret string
	// Audience is the server's canonical resource URI: the response's aud must name it, so a
	// token issued for another resource (or for no resource) is refused. Required.
	Audience string
	// Issuer, when set, must equal the response's iss.
	Issuer string
	// CacheTTL is how long an active answer is reused (never past the token's expiry). Zero
	// means DefaultIntrospectionCacheTTL (1 min); negative turns caching off. Inactive answers
	// are never cached. Tokens are cached by their SHA-256 digest, never in clear.
	CacheTTL time.Duration
	// MaxCacheEntries bounds the cache. Zero means DefaultCacheEntries (10000);
	// negative panics.
	MaxCacheEntries int
	// Leeway is the clock skew allowed when checking exp and nbf. Zero means DefaultLeeway
	// (30 s); negative means none.
	Leeway time.Duration
	// HTTPClient calls the endpoint. Nil means a client with a 10 s timeout.
	HTTPClient *http.Client
	// MaxDocumentBytes bounds an introspection response. Zero means DefaultMaxDocumentBytes
	// (1 MiB); negative panics.
	MaxDocumentBytes int64
}

// IntrospectionVerifier verifies opaque access tokens by asking the authorization server
// (RFC 7662). It is safe for concurrent use.
type IntrospectionVerifier struct {
	opts     IntrospectionOptions
	audience string
	cache    *tokenCache
	leeway   time.Duration
	fetch    fetcher
	now      func() time.Time
}

// NewIntrospectionVerifier returns a verifier that asks opts.Endpoint about each token. It
// panics on invalid options, naming the option.
func NewIntrospectionVerifier(opts IntrospectionOptions) *IntrospectionVerifier {
	if _, err := checkURL("IntrospectionOptions.Endpoint", opts.Endpoint); err != nil {
		panic(err.Error())
	}
	if _, err := checkURL("IntrospectionOptions.Audience", opts.Audience); err != nil {
		panic(err.Error())
	}
	return &IntrospectionVerifier{
		opts:     opts,
		audience: canonicalResource(opts.Audience),
		cache:    newTokenCache(opts.CacheTTL, DefaultIntrospectionCacheTTL, opts.MaxCacheEntries, DefaultCacheEntries, "IntrospectionOptions.MaxCacheEntries"),
		leeway:   leewayOr(opts.Leeway),
		fetch:    newFetcher(opts.HTTPClient, opts.MaxDocumentBytes, "IntrospectionOptions.MaxDocumentBytes"),
		now:      time.Now,
	}
}

// introspection is the part of an RFC 7662 response the verifier reads.
type introspection struct {
	Active   bool            `json:"active"`
	Scope    string          `json:"scope"`
	ClientID string          `json:"client_id"`
	Subject  string          `json:"sub"`
	Issuer   string          `json:"iss"`
	Audience json.RawMessage `json:"aud"`
	Expiry   *float64        `json:"exp"`
	NotBef   *float64        `json:"nbf"`
}

// Verify returns the cached answer for token when there is a live one, and otherwise asks the
// endpoint. Errors wrap ErrInvalidToken, or ErrUnavailable when the endpoint could not answer.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := v.now()
	if info, ok := v.cache.get(key, now); ok {
		return info, nil
	}
	info, err := v.introspect(ctx, token)
	if err != nil {
		return nil, err
	}
	v.cache.put(key, info, now)
	return info, nil
}

func (v *IntrospectionVerifier) introspect(ctx context.Context, token string) (*TokenInfo, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.opts.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if v.opts.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(v.opts.ClientID), url.QueryEscape(v.opts.ClientSecret))
	}
	var raw json.RawMessage
	if err := v.fetch.do(req, &raw); err != nil {
		return nil, err
	}
	var resp introspection
	var all map[string]any
	if json.Unmarshal(raw, &resp) != nil || json.Unmarshal(raw, &all) != nil {
		return nil, fmt.Errorf("%w: the introspection response is not an object", ErrUnavailable)
	}
	if !resp.Active {
		return nil, fmt.Errorf("%w: the token is not active", ErrInvalidToken)
	}
	aud, ok := audienceList(resp.Audience)
	now := v.now()
	switch {
	case !ok || !audienceHas(aud, v.audience):
		return nil, fmt.Errorf("%w: the token was not issued for this resource", ErrInvalidToken)
	case v.opts.Issuer != "" && resp.Issuer != v.opts.Issuer:
		return nil, fmt.Errorf("%w: issuer %q is not trusted", ErrInvalidToken, resp.Issuer)
	case resp.Expiry != nil && now.After(unixTime(*resp.Expiry).Add(v.leeway)):
		return nil, fmt.Errorf("%w: the token has expired", ErrInvalidToken)
	case resp.NotBef != nil && now.Add(v.leeway).Before(unixTime(*resp.NotBef)):
		return nil, fmt.Errorf("%w: the token is not valid yet", ErrInvalidToken)
	case resp.Subject == "":
		return nil, fmt.Errorf("%w: the token has no subject", ErrInvalidToken)
	}
	info := &TokenInfo{
		Subject:  resp.Subject,
		Issuer:   resp.Issuer,
		ClientID: resp.ClientID,
		Scopes:   strings.Fields(resp.Scope),
		Audience: aud,
		Claims:   all,
	}
	if resp.Expiry != nil {
		info.Expiration = unixTime(*resp.Expiry)
	}
	return info, nil
}

// audienceList reads an aud member: a string or an array of strings.
func audienceList(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

func unixTime(secs float64) time.Time {
	return time.Unix(0, int64(secs*float64(time.Second)))
}
