package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Defaults of IntrospectionOptions.
const (
	DefaultIntrospectionCacheTTL = time.Minute
	// DefaultIntrospectionNegativeCacheTTL is how long a refused token's verdict is reused.
	DefaultIntrospectionNegativeCacheTTL = 10 * time.Second
	// DefaultIntrospectionsPerSecond bounds the calls to the introspection endpoint.
	DefaultIntrospectionsPerSecond = 50
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
	// means DefaultIntrospectionCacheTTL (1 min); negative turns caching off. Tokens are cached
	// by their SHA-256 digest, never in clear.
	CacheTTL time.Duration
	// NegativeCacheTTL is how long the verdict on a refused token (inactive, or not for this
	// resource) is reused, so a client repeating a bad token costs one call per NegativeCacheTTL.
	// Zero means DefaultIntrospectionNegativeCacheTTL (10 s); negative turns it off. A failed
	// call (ErrUnavailable) is never cached.
	NegativeCacheTTL time.Duration
	// MaxCacheEntries bounds each of the two caches (answers, refusals). Zero means
	// DefaultCacheEntries (10000); negative panics.
	MaxCacheEntries int
	// MaxCallsPerSecond bounds the calls to the endpoint (with bursts of as many): past it, a
	// token that no cache answers and no call in flight covers fails with ErrUnavailable (503)
	// instead of reaching the authorization server. Whatever the bound, simultaneous checks of
	// one token share one call. Zero means DefaultIntrospectionsPerSecond (50); negative means
	// no bound.
	MaxCallsPerSecond int
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
	refused  *tokenCache // verdicts on refused tokens
	leeway   time.Duration
	fetch    fetcher
	now      func() time.Time
	limit    *rateLimit // nil: no bound

	mu      sync.Mutex
	flights map[[sha256.Size]byte]*flight
	joined  func() // tests: called when a check joins a call in flight
}

// flight is one call to the endpoint, shared by the checks of one token made meanwhile.
type flight struct {
	done chan struct{}
	info *TokenInfo
	err  error
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
	v := &IntrospectionVerifier{
		opts:     opts,
		audience: canonicalResource(opts.Audience),
		cache:    newTokenCache(opts.CacheTTL, DefaultIntrospectionCacheTTL, opts.MaxCacheEntries, DefaultCacheEntries, "IntrospectionOptions.MaxCacheEntries"),
		refused:  newTokenCache(opts.NegativeCacheTTL, DefaultIntrospectionNegativeCacheTTL, opts.MaxCacheEntries, DefaultCacheEntries, "IntrospectionOptions.MaxCacheEntries"),
		leeway:   leewayOr(opts.Leeway),
		fetch:    newFetcher(opts.HTTPClient, opts.MaxDocumentBytes, "IntrospectionOptions.MaxDocumentBytes"),
		now:      time.Now,
		flights:  map[[sha256.Size]byte]*flight{},
	}
	if opts.MaxCallsPerSecond >= 0 {
		rate := opts.MaxCallsPerSecond
		if rate == 0 {
			rate = DefaultIntrospectionsPerSecond
		}
		v.limit = &rateLimit{rate: float64(rate), tokens: float64(rate)}
	}
	return v
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

// Verify returns the cached answer for token when there is a live one (or the cached verdict on
// a token refused a moment ago), joins the call in flight for the same token, and otherwise asks
// the endpoint, within MaxCallsPerSecond. It waits for the answer no longer than ctx. Errors
// wrap ErrInvalidToken, or ErrUnavailable when the endpoint could not answer in time or the
// bound on calls was reached.
func (v *IntrospectionVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := v.now()
	if info, ok := v.cache.get(key, now); ok {
		return info, nil
	}
	if err, ok := v.refused.refusal(key, now); ok {
		return nil, err
	}
	f, err := v.join(ctx, key, token, now)
	if err != nil {
		return nil, err
	}
	select {
	case <-f.done:
		return f.info, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the introspection endpoint: %w", ErrUnavailable, context.Cause(ctx))
	}
}

// join returns the call in flight for the token with digest key, starting one (within the rate
// bound) when there is none. The call outlives the check that started it: the others may wait
// for it.
func (v *IntrospectionVerifier) join(ctx context.Context, key [sha256.Size]byte, token string, now time.Time) (*flight, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if f := v.flights[key]; f != nil {
		if v.joined != nil {
			v.joined()
		}
		return f, nil
	}
	if !v.limit.allow(now) {
		return nil, fmt.Errorf("%w: more than %d introspection calls a second (IntrospectionOptions.MaxCallsPerSecond)", ErrUnavailable, int(v.limit.rate))
	}
	f := &flight{done: make(chan struct{})}
	v.flights[key] = f
	go v.run(context.WithoutCancel(ctx), key, token, now, f)
	return f, nil
}

// run makes the call of flight f, caches its outcome and lets its waiters go.
func (v *IntrospectionVerifier) run(ctx context.Context, key [sha256.Size]byte, token string, now time.Time, f *flight) {
	fctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	f.info, f.err = v.introspect(fctx, token)
	cancel()
	switch {
	case f.err == nil:
		v.cache.put(key, f.info, now)
	case errors.Is(f.err, ErrInvalidToken):
		v.refused.putRefusal(key, f.err, now)
	}
	v.mu.Lock()
	delete(v.flights, key)
	v.mu.Unlock()
	close(f.done)
}

// rateLimit is a token bucket of rate tokens a second, holding at most rate. A nil *rateLimit
// allows everything.
type rateLimit struct {
	rate   float64
	tokens float64
	last   time.Time
}

// allow takes one token at now, if there is one (the caller holds the verifier's lock).
func (r *rateLimit) allow(now time.Time) bool {
	if r == nil {
		return true
	}
	if !r.last.IsZero() && now.After(r.last) {
		r.tokens = min(r.rate, r.tokens+now.Sub(r.last).Seconds()*r.rate)
	}
	if r.last.IsZero() || now.After(r.last) {
		r.last = now
	}
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
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
		info.ValidUntil = info.Expiration.Add(v.leeway)
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
