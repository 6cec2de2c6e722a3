package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Defaults of JWTOptions.
const (
	DefaultLeeway          = 30 * time.Second
	DefaultKeyCacheTTL     = time.Hour
	DefaultRefreshInterval = 30 * time.Second
	DefaultJWTCacheTTL     = time.Minute
	// DefaultCacheEntries bounds the verified-token caches of the verifiers when their
	// MaxCacheEntries option is zero.
	DefaultCacheEntries = 10000
)

// DefaultAlgorithms are the signature algorithms a JWTVerifier accepts when
// JWTOptions.Algorithms is nil: the asymmetric JWS algorithms. Neither "none" nor an HMAC
// algorithm can ever be configured: a resource server holds no secret shared with the
// authorization server, and an HMAC check keyed with a public key is the classic forgery.
var DefaultAlgorithms = slices.Clone(asymmetricAlgorithms)

// asymmetricAlgorithms is the fixed set JWTOptions.Algorithms may draw from (DefaultAlgorithms
// is a copy a program could change; the check never reads it).
var asymmetricAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// DefaultTokenTypes are the JWT "typ" header values a JWTVerifier accepts when
// JWTOptions.Types is nil (RFC 9068 section 4), compared case-insensitively.
var DefaultTokenTypes = []string{"at+jwt", "application/at+jwt"}

// JWTOptions configure NewJWTVerifier.
type JWTOptions struct {
	// Issuer is the authorization server whose tokens are trusted, compared exactly with the
	// iss claim. Required (https, or http on a loopback host).
	Issuer string
	// Audience is the server's canonical resource URI (the resource of its protected resource
	// metadata). A token is accepted only when its aud claim names it (scheme and host compared
	// case-insensitively, a default port ignored): tokens issued for another resource, or for no
	// resource at all, are refused. Required.
	Audience string
	// JWKSURL is where the issuer publishes its keys. Empty means discovered, on first use, from
	// the issuer's RFC 8414 metadata (/.well-known/oauth-authorization-server), falling back to
	// OpenID Connect discovery; the metadata must name Issuer exactly.
	JWKSURL string
	// Algorithms is the allow-list of JWS algorithms. Nil means DefaultAlgorithms. "none", the
	// HMAC algorithms (HS256, HS384, HS512) and unknown names panic.
	Algorithms []string
	// Types are the accepted "typ" header values. Nil means DefaultTokenTypes (RFC 9068
	// access tokens only, so an ID token or another JWT of the same issuer is not taken for an
	// access token).
	Types []string
	// Leeway is the clock skew allowed when checking exp, nbf and iat. Zero means
	// DefaultLeeway (30 s); negative means none.
	Leeway time.Duration
	// KeyCacheTTL is how long fetched keys are used before the set is fetched again. Zero means
	// DefaultKeyCacheTTL (1 h); negative panics. The fetch runs in the background while the keys
	// held keep verifying tokens; when it fails, they keep being used.
	KeyCacheTTL time.Duration
	// RefreshInterval is the least time between two fetches of the key set, which bounds the
	// fetches tokens with unknown key ids can cause. Zero means DefaultRefreshInterval (30 s);
	// negative panics.
	RefreshInterval time.Duration
	// CacheTTL is how long a verified token is remembered (by its SHA-256 digest, never past its
	// expiry), so a client sending the same token on every request costs one signature check
	// per CacheTTL rather than one per request. Zero means DefaultJWTCacheTTL (1 min);
	// negative turns the cache off. A key removed from the JWKS stops verifying tokens at the
	// latest CacheTTL after the set was fetched again.
	CacheTTL time.Duration
	// MaxCacheEntries bounds that cache. Zero means DefaultCacheEntries (10000); negative
	// panics.
	MaxCacheEntries int
	// HTTPClient fetches the metadata and keys. Nil means a client with a 10 s timeout that
	// follows at most three redirects, each to https (or http on a loopback host).
	HTTPClient *http.Client
	// MaxDocumentBytes bounds the metadata and JWKS documents. Zero means
	// DefaultMaxDocumentBytes (1 MiB); negative panics.
	MaxDocumentBytes int64
}

// JWTVerifier verifies JWT access tokens (RFC 9068) issued by one authorization server. It is
// safe for concurrent use.
type JWTVerifier struct {
	issuer   string
	audience string
	algs     []jose.SignatureAlgorithm
	types    []string
	leeway   time.Duration
	keys     *keySet
	cache    *tokenCache
	now      func() time.Time
}

// NewJWTVerifier returns a verifier for the issuer's access tokens. Nothing is fetched until
// the first token arrives. It panics on invalid options, naming the option.
func NewJWTVerifier(opts JWTOptions) *JWTVerifier {
	if _, err := checkURL("JWTOptions.Issuer", opts.Issuer); err != nil {
		panic(err.Error())
	}
	if _, err := checkURL("JWTOptions.Audience", opts.Audience); err != nil {
		panic(err.Error())
	}
	if opts.JWKSURL != "" {
		if _, err := checkURL("JWTOptions.JWKSURL", opts.JWKSURL); err != nil {
			panic(err.Error())
		}
	}
	algs := signatureAlgorithms("JWTOptions.Algorithms", opts.Algorithms)
	types := opts.Types
	if types == nil {
		types = DefaultTokenTypes
	}
	if len(types) == 0 {
		panic("auth: JWTOptions.Types must not be empty")
	}
	leeway := leewayOr(opts.Leeway)
	ttl := positiveOr(opts.KeyCacheTTL, DefaultKeyCacheTTL, "JWTOptions.KeyCacheTTL")
	interval := positiveOr(opts.RefreshInterval, DefaultRefreshInterval, "JWTOptions.RefreshInterval")
	v := &JWTVerifier{
		issuer:   opts.Issuer,
		audience: canonicalResource(opts.Audience),
		algs:     algs,
		types:    types,
		leeway:   leeway,
		cache:    newTokenCache(opts.CacheTTL, DefaultJWTCacheTTL, opts.MaxCacheEntries, DefaultCacheEntries, "JWTOptions.MaxCacheEntries"),
		now:      time.Now,
	}
	v.keys = &keySet{
		fetch:       newFetcher(opts.HTTPClient, opts.MaxDocumentBytes, "JWTOptions.MaxDocumentBytes"),
		issuer:      opts.Issuer,
		jwksURL:     opts.JWKSURL,
		ttl:         ttl,
		minInterval: interval,
		now:         func() time.Time { return v.now() },
	}
	return v
}

// positiveOr returns d, or def when d is zero; a negative d panics naming the option.
func positiveOr(d, def time.Duration, option string) time.Duration {
	if d < 0 {
		panic("auth: " + option + " must not be negative")
	}
	if d == 0 {
		return def
	}
	return d
}

// leewayOr applies the rule of the Leeway options: zero means DefaultLeeway, negative none.
func leewayOr(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultLeeway
	case d < 0:
		return 0
	}
	return d
}

// accessClaims are the claims the verifier reads beyond the registered ones.
type accessClaims struct {
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	Scp      any    `json:"scp"`
}

// Verify checks the token's signature against the issuer's keys, its type, issuer, audience,
// expiry, not-before and issued-at times and subject, and returns what it says. Errors wrap
// ErrInvalidToken, or ErrUnavailable when the keys could not be fetched and none are held.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	if info, ok := v.cache.get(key, v.now()); ok {
		return info, nil
	}
	info, err := v.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	v.cache.put(key, info, v.now())
	return info, nil
}

// verify does the checks of Verify.
func (v *JWTVerifier) verify(ctx context.Context, token string) (*TokenInfo, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: one signature expected", ErrInvalidToken)
	}
	h := tok.Headers[0]
	typ, _ := h.ExtraHeaders[jose.HeaderType].(string)
	if !slices.ContainsFunc(v.types, func(t string) bool { return strings.EqualFold(t, typ) }) {
		return nil, fmt.Errorf("%w: token type %q is not accepted", ErrInvalidToken, typ)
	}
	keys, fetched, err := v.keys.candidates(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	var reg jwt.Claims
	var extra accessClaims
	var all map[string]any
	verify := func(keys []jose.JSONWebKey) bool {
		for _, k := range keys {
			if tok.Claims(k.Key, &reg, &extra, &all) == nil {
				return true
			}
		}
		return false
	}
	if !verify(keys) && !verify(v.keys.recheck(ctx, h.KeyID, h.Algorithm, fetched)) {
		return nil, fmt.Errorf("%w: the signature does not verify with the issuer's keys", ErrInvalidToken)
	}
	if err := v.checkClaims(&reg); err != nil {
		return nil, err
	}
	info := &TokenInfo{
		Subject:  reg.Subject,
		Issuer:   reg.Issuer,
		ClientID: extra.ClientID,
		Scopes:   tokenScopes(extra.Scope, extra.Scp),
		Audience: []string(reg.Audience),
		Claims:   all,
	}
	if reg.Expiry != nil {
		info.Expiration = reg.Expiry.Time()
		info.ValidUntil = info.Expiration.Add(v.leeway)
	}
	return info, nil
}

func (v *JWTVerifier) checkClaims(c *jwt.Claims) error {
	now := v.now()
	switch {
	case c.Issuer != v.issuer:
		return fmt.Errorf("%w: issuer %q is not trusted", ErrInvalidToken, c.Issuer)
	case !audienceHas(c.Audience, v.audience):
		return fmt.Errorf("%w: the token was not issued for this resource", ErrInvalidToken)
	case c.Expiry == nil:
		return fmt.Errorf("%w: the token has no expiry", ErrInvalidToken)
	case now.After(c.Expiry.Time().Add(v.leeway)):
		return fmt.Errorf("%w: the token has expired", ErrInvalidToken)
	case c.NotBefore != nil && now.Add(v.leeway).Before(c.NotBefore.Time()):
		return fmt.Errorf("%w: the token is not valid yet", ErrInvalidToken)
	case c.IssuedAt != nil && now.Add(v.leeway).Before(c.IssuedAt.Time()):
		return fmt.Errorf("%w: the token was issued in the future", ErrInvalidToken)
	case c.Subject == "":
		return fmt.Errorf("%w: the token has no subject", ErrInvalidToken)
	}
	return nil
}

// audienceHas reports whether aud names the canonical resource want.
func audienceHas(aud []string, want string) bool {
	for _, a := range aud {
		if canonicalResource(a) == want {
			return true
		}
	}
	return false
}

// tokenScopes reads the granted scopes: the space-separated "scope" claim (RFC 9068, RFC 8693),
// else "scp" as a list or a space-separated string (a common variant).
func tokenScopes(scope string, scp any) []string {
	if scope != "" {
		return strings.Fields(scope)
	}
	switch s := scp.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			if str, ok := e.(string); ok && str != "" {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// signatureAlgorithms applies the option rule to an allow-list of JWS algorithms (the option
// named option): nil means every asymmetric algorithm, an empty list or a name outside them
// panics naming the option.
func signatureAlgorithms(option string, names []string) []jose.SignatureAlgorithm {
	if names == nil {
		names = asymmetricAlgorithms
	}
	if len(names) == 0 {
		panic("auth: " + option + " must not be empty")
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		if !slices.Contains(asymmetricAlgorithms, n) {
			panic(fmt.Sprintf("auth: %s: %q is not an accepted algorithm (asymmetric JWS algorithms only: %s)", option, n, strings.Join(asymmetricAlgorithms, ", ")))
		}
		algs = append(algs, jose.SignatureAlgorithm(n))
	}
	return algs
}
