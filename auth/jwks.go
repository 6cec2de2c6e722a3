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
// One fetch runs at a time, in the background: readers never wait for it while the cache holds
// a key for them (stale keys are served while the set is fetched again), and a reader that must
// wait (no key matches) waits no longer than its context.
type keySet struct {
	fetch       fetcher
	issuer      string
	jwksURL     string // configured, or "" to discover from the issuer's metadata
	ttl         time.Duration
	minInterval time.Duration
	now         func() time.Time

	mu      sync.RWMutex // read-locked by every verification (snapshot), locked to change
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched; zero before the first success
	// inflight is closed when the running fetch ends; nil while none runs.
	inflight    chan struct{}
	lastAttempt time.Time // the start of the last refresh or failed fetch
	lastErr     error     // the error of the last fetch
	discovered  string    // jwks_uri from the metadata, used by one fetch at a time
}

// snapshot returns the cached keys and their fetch time.
func (ks *keySet) snapshot() ([]jose.JSONWebKey, time.Time) {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return ks.keys, ks.fetched
}

// candidates returns the keys that may have signed a token with this key id and algorithm and
// the fetch time of the set they come from. Keys past ttl are still served while one background
// fetch replaces them; the caller waits for a fetch (rate-limited) only when the set is missing
// or lacks the key id.
func (ks *keySet) candidates(ctx context.Context, kid string, alg string) ([]jose.JSONWebKey, time.Time, error) {
	keys, fetched := ks.snapshot()
	if c := matchKeys(keys, kid, alg); len(c) > 0 {
		if ks.now().Sub(fetched) >= ks.ttl {
			ks.start(ctx, fetched)
		}
		return c, fetched, nil
	}
	keys, fetched, err := ks.refresh(ctx, fetched)
	if c := matchKeys(keys, kid, alg); len(c) > 0 {
		return c, fetched, nil
	}
	if err != nil && (len(keys) == 0 || ctx.Err() != nil) {
		return nil, fetched, err // no keys at all, or the caller stopped waiting for them
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

// start begins a fetch of the key set in the background, unless one runs, another caller
// replaced the set fetched at seen, or the last attempt is more recent than minInterval. It
// returns the channel closed when the running fetch ends (nil when none runs).
func (ks *keySet) start(ctx context.Context, seen time.Time) <-chan struct{} {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.inflight != nil {
		return ks.inflight
	}
	if ks.fetched.After(seen) {
		return nil
	}
	now := ks.now()
	if !ks.lastAttempt.IsZero() && now.Sub(ks.lastAttempt) < ks.minInterval {
		return nil
	}
	ch := make(chan struct{})
	ks.inflight = ch
	// The fetch outlives the request that triggered it: a client that hangs up must not turn
	// into a failed attempt that holds every other request back for the whole interval.
	go ks.run(context.WithoutCancel(ctx), now, ch)
	return ch
}

// refresh waits, no longer than ctx allows, for a fetch of the key set (starting one as start
// does) and returns the keys in the cache afterwards, their fetch time, and the error of the
// last attempt when the set is still the one fetched at seen.
func (ks *keySet) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, time.Time, error) {
	if ch := ks.start(ctx, seen); ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			keys, fetched := ks.snapshot()
			return keys, fetched, fmt.Errorf("%w: waiting for the issuer's keys: %w", ErrUnavailable, context.Cause(ctx))
		}
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.fetched.After(seen) {
		return ks.keys, ks.fetched, nil
	}
	return ks.keys, ks.fetched, ks.lastErr
}

// run is the one fetch in flight, begun at now; it closes ch when the cache holds its outcome.
func (ks *keySet) run(ctx context.Context, now time.Time, ch chan struct{}) {
	fctx, cancel := context.WithTimeout(ctx, defaultFetchTimeout)
	fresh, err := ks.load(fctx)
	cancel()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.lastErr = err
	if err != nil || !ks.fetched.IsZero() {
		// Refreshes and failed attempts count against the interval; the first successful
		// load does not, so a rotation right after start-up is still picked up.
		ks.lastAttempt = now
	}
	if err == nil {
		at := ks.now()
		if !at.After(ks.fetched) {
			at = ks.fetched.Add(time.Nanosecond) // a coarse clock must still tell the sets apart
		}
		ks.keys, ks.fetched = fresh, at
	}
	ks.inflight = nil
	close(ch)
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
