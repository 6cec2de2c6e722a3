package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// minRSABits is the smallest RSA modulus a JWKS key may have to be used.
const minRSABits = 2048

// keySet is the cached JWKS of one issuer: fetched lazily on first use, trusted for ttl, and
// fetched again, at most once per minInterval, when a token names a key id it does not hold.
// Readers never wait for a fetch while the cache can answer them.
type keySet struct {
	fetch       fetcher
	issuer      string
	jwksURL     string // configured, or "" to discover from the issuer's metadata
	ttl         time.Duration
	minInterval time.Duration
	now         func() time.Time

	mu      sync.RWMutex
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched; zero before the first success

	fetchMu     sync.Mutex // serializes fetches
	lastAttempt time.Time  // the last refresh or failed fetch, guarded by fetchMu
	lastErr     error      // guarded by fetchMu
	discovered  string     // jwks_uri from the metadata, guarded by fetchMu
}

// candidates returns the keys that may have signed a token with this key id and algorithm,
// fetching the set first when it is missing, stale, or lacks the key id (rate-limited), and the
// fetch time of the set they come from.
func (ks *keySet) candidates(ctx context.Context, kid string, alg string) ([]jose.JSONWebKey, time.Time, error) {
	ks.mu.RLock()
	keys, fetched := ks.keys, ks.fetched
	ks.mu.RUnlock()
	now := ks.now()
	fresh := !fetched.IsZero() && now.Sub(fetched) < ks.ttl
	if c := matchKeys(keys, kid, alg); len(c) > 0 && fresh {
		return c, fetched, nil
	}
	keys, fetched, err := ks.refresh(ctx, fetched)
	if c := matchKeys(keys, kid, alg); len(c) > 0 {
		return c, fetched, nil
	}
	if err != nil && len(keys) == 0 {
		return nil, fetched, err
	}
	return nil, fetched, fmt.Errorf("%w: no key of the issuer matches kid %q and alg %s", ErrInvalidToken, kid, alg)
}

// recheck is called when no key of the set fetched at seen verified a token: the issuer may have
// replaced a key under the same id. It fetches the set again (rate-limited, like any refresh)
// and returns the matching keys of a newer set, or nothing when the set did not change.
func (ks *keySet) recheck(ctx context.Context, kid, alg string, seen time.Time) []jose.JSONWebKey {
	keys, fetched, _ := ks.refresh(ctx, seen)
	if !fetched.After(seen) {
		return nil
	}
	return matchKeys(keys, kid, alg)
}

// refresh fetches the key set unless another caller did so since seen (the fetch time the
// caller saw) or the last attempt is more recent than minInterval. It returns the keys in the
// cache afterwards, their fetch time, and the error of this or the last attempt.
func (ks *keySet) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, time.Time, error) {
	ks.fetchMu.Lock()
	defer ks.fetchMu.Unlock()
	ks.mu.RLock()
	keys, fetched := ks.keys, ks.fetched
	ks.mu.RUnlock()
	if fetched.After(seen) {
		return keys, fetched, nil // fetched while we waited
	}
	now := ks.now()
	if !ks.lastAttempt.IsZero() && now.Sub(ks.lastAttempt) < ks.minInterval {
		return keys, fetched, ks.lastErr
	}
	// The fetch outlives the request that triggered it: a client that hangs up must not turn
	// into a failed attempt that holds every other request back for the whole interval.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultFetchTimeout)
	fresh, err := ks.load(fctx)
	cancel()
	ks.lastErr = err
	if err != nil || !fetched.IsZero() {
		// Refreshes and failed attempts count against the interval; the first successful
		// load does not, so a rotation right after start-up is still picked up.
		ks.lastAttempt = now
	}
	if err != nil {
		return keys, fetched, err
	}
	at := ks.now()
	if !at.After(fetched) {
		at = fetched.Add(time.Nanosecond) // a coarse clock must still tell the sets apart
	}
	ks.mu.Lock()
	ks.keys, ks.fetched = fresh, at
	ks.mu.Unlock()
	return fresh, at, nil
}

// load fetches and parses the JWKS (discovering its URL first when needed).
func (ks *keySet) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	u := ks.jwksURL
	if u == "" {
		if ks.discovered == "" {
			d, err := discoverJWKS(ctx, ks.fetch, ks.issuer)
			if err != nil {
				return nil, err
			}
			ks.discovered = d
		}
		u = ks.discovered
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := ks.fetch.getJSON(ctx, u, &doc); err != nil {
		return nil, err
	}
	return parseKeys(doc.Keys), nil
}

// parseKeys keeps the usable signature keys of a JWKS: public asymmetric keys (RSA of at least
// 2048 bits, EC, Ed25519) whose "use" is absent or "sig". Symmetric keys, encryption keys and
// keys that do not parse are skipped one by one, so one odd key does not hide the others.
func parseKeys(raw []json.RawMessage) []jose.JSONWebKey {
	var keys []jose.JSONWebKey
	for _, r := range raw {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil || !k.Valid() {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		k = k.Public() // never keep private material, even if a JWKS publishes it
		switch pk := k.Key.(type) {
		case *rsa.PublicKey:
			if pk.N.BitLen() < minRSABits {
				continue
			}
		case *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			continue // symmetric or unknown
		}
		keys = append(keys, k)
	}
	return keys
}

// matchKeys returns the keys that fit a token's key id and algorithm: the keys with that kid (all
// keys when the token names none), whose declared alg (if any) is the token's, of a type that
// algorithm uses.
func matchKeys(keys []jose.JSONWebKey, kid, alg string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if !keyFitsAlg(k.Key, alg) {
			continue
		}
		out = append(out, k)
	}
	return out
}

func keyFitsAlg(key any, alg string) bool {
	switch pk := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pk.Curve.Params().Name == "P-256"
		case "ES384":
			return pk.Curve.Params().Name == "P-384"
		case "ES512":
			return pk.Curve.Params().Name == "P-521"
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// discoverJWKS reads the issuer's authorization server metadata (RFC 8414, then OpenID Connect
// discovery as a fallback) and returns its jwks_uri. The metadata must name the issuer exactly
// (RFC 8414 section 3.3).
func discoverJWKS(ctx context.Context, f fetcher, issuer string) (string, error) {
	var firstErr error
	for _, u := range metadataURLs(issuer) {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := f.getJSON(ctx, u, &meta); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if meta.Issuer != issuer {
			return "", fmt.Errorf("%w: the metadata at %s names issuer %q, not %q", ErrUnavailable, u, meta.Issuer, issuer)
		}
		if _, err := checkURL("jwks_uri", meta.JWKSURI); err != nil {
			return "", fmt.Errorf("%w: the metadata at %s: %w", ErrUnavailable, u, err)
		}
		return meta.JWKSURI, nil
	}
	if firstErr == nil {
		firstErr = errors.New("no metadata")
	}
	return "", firstErr
}

// metadataURLs returns where an issuer's metadata may live: the RFC 8414 well-known URI (path
// inserted after the host) and the OpenID Connect one (path appended).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := u.Scheme + "://" + u.Host
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}
