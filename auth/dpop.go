package auth

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DPoPMode says whether RequireBearer accepts DPoP-bound access tokens (RFC 9449).
type DPoPMode int

const (
	// DPoPOff accepts bearer tokens only (the zero value): an Authorization: DPoP credential is
	// answered like a missing one.
	DPoPOff DPoPMode = iota
	// DPoPAccepted accepts both schemes: Authorization: Bearer for plain tokens and
	// Authorization: DPoP with a proof for bound ones.
	DPoPAccepted
	// DPoPRequired accepts only Authorization: DPoP with a proof: a plain bearer token is
	// answered like a missing credential, with a DPoP challenge alone.
	DPoPRequired
)

// Defaults of DPoPOptions.
const (
	// DefaultProofWindow is how far a proof's iat may be from the server's clock.
	DefaultProofWindow = 5 * time.Minute
	// DefaultReplayEntries bounds the in-memory replay cache.
	DefaultReplayEntries = 100000
	// DefaultNonceLifetime is how long a server nonce is accepted after it was issued.
	DefaultNonceLifetime = 5 * time.Minute
)

// DefaultDPoPAlgorithms are the proof algorithms accepted when DPoPOptions.Algorithms is nil:
// the asymmetric JWS algorithms, as for access tokens ("none" and HMAC can never be configured).
var DefaultDPoPAlgorithms = slices.Clone(asymmetricAlgorithms)

// DPoPOptions configure DPoP on RequireBearer (BearerOptions.DPoP). The zero value is DPoPOff.
// Every field is checked whatever the Mode: an invalid one panics even with DPoPOff.
type DPoPOptions struct {
	// Mode is DPoPOff (zero), DPoPAccepted or DPoPRequired; any other value panics.
	Mode DPoPMode
	// Algorithms is the allow-list of proof signature algorithms, advertised in the algs
	// parameter of the DPoP challenge. Nil means DefaultDPoPAlgorithms; "none", HMAC and
	// unknown names panic, and so does an empty list.
	Algorithms []string
	// URL is the external URL clients reach the server at: a proof's htu must name its scheme
	// and authority (host and port) with the path of the request (the request-target the client
	// sent), compared after RFC 3986 normalization (scheme and host case, default port,
	// percent-encoding, dot segments; query and fragment ignored). So a proof made for one path
	// is refused on any other, and any path of URL or of BearerOptions.Resource is not used.
	// Behind a proxy that rewrites the host or scheme, set it (or BearerOptions.Resource) to the
	// URL clients use; a proxy that rewrites the path is not supported (a proof names the
	// external path, the process sees another). Empty means BearerOptions.Resource when set,
	// else the scheme and host the request arrived with (https when the connection is TLS, the
	// Host header; forwarding headers are never trusted). RequireBearer panics on an invalid URL.
	URL string
	// ProofWindow bounds how far in the past or future a proof's iat may be. Zero means
	// DefaultProofWindow (5 min); negative panics.
	ProofWindow time.Duration
	// Replay remembers the proofs seen (by key thumbprint and jti) until they leave the window,
	// so a proof is accepted once. Nil means an in-memory cache of MaxReplayEntries, which only
	// sees this process: replicas need a shared one (redisstore.NewReplayCache).
	Replay ReplayCache
	// MaxReplayEntries bounds the in-memory replay cache (the oldest entry goes first when it is
	// full: size it above the proofs expected in 2*ProofWindow). Zero means
	// DefaultReplayEntries (100000); negative panics. Ignored when Replay is set.
	MaxReplayEntries int
	// RequireNonce makes every proof carry a nonce this server issued (RFC 9449 section 8): a
	// proof without one, or with a stale or foreign one, is answered 401 use_dpop_nonce with a
	// fresh nonce in DPoP-Nonce. Nonces are stateless: an HMAC of their issue time under
	// NonceKey, good for NonceLifetime on every replica sharing the key.
	RequireNonce bool
	// NonceKey is the 32-byte key nonces are sealed with. Nil means a random key per process:
	// replicas must share one, or a nonce issued by one is refused by another. Any other length
	// panics.
	NonceKey []byte
	// OldNonceKeys are earlier keys whose nonces are still accepted (a rotation: give every
	// replica the new key here first, then make it NonceKey). Each must be 32 bytes.
	OldNonceKeys [][]byte
	// NonceLifetime is how long a nonce is accepted. Zero means DefaultNonceLifetime (5 min);
	// negative panics. A request whose nonce is past half its life gets a new one in DPoP-Nonce.
	NonceLifetime time.Duration
}

// ReplayCache records the DPoP proofs a server accepted. Seen records id until until and
// reports whether id was already recorded and still live (a replay). It must be atomic: two
// concurrent calls with one id see exactly one false. An error refuses the request with 503.
// The kit's implementations are the in-memory default and redisstore.ReplayCache.
type ReplayCache interface {
	Seen(ctx context.Context, id string, until time.Time) (bool, error)
}

// OAuth error codes of DPoP (RFC 9449 sections 7.1 and 8).
const (
	errInvalidDPoPProof = "invalid_dpop_proof"
	errUseDPoPNonce     = "use_dpop_nonce"
)

// dpopProblem is why a DPoP request is refused: the OAuth error code and its description.
type dpopProblem struct {
	code, desc string
	status     int // 401, or 503 when the replay cache failed
}

func proofProblem(desc string) *dpopProblem {
	return &dpopProblem{code: errInvalidDPoPProof, desc: desc, status: http.StatusUnauthorized}
}

// dpopChecker verifies DPoP proofs for one endpoint.
type dpopChecker struct {
	mode     DPoPMode
	algs     []jose.SignatureAlgorithm
	algNames string
	origin   string // scheme://authority of the external URL, "" to take it from the request
	window   time.Duration
	replay   ReplayCache
	nonces   *nonceSealer // nil unless RequireNonce
	now      func() time.Time
}

// newDPoPChecker validates every field of opts (panicking, naming the option), then returns nil
// for DPoPOff.
func newDPoPChecker(opts DPoPOptions, resource string) *dpopChecker {
	switch opts.Mode {
	case DPoPOff, DPoPAccepted, DPoPRequired:
	default:
		panic(fmt.Sprintf("auth: BearerOptions.DPoP.Mode must be DPoPOff, DPoPAccepted or DPoPRequired, not %d", opts.Mode))
	}
	algs := signatureAlgorithms("BearerOptions.DPoP.Algorithms", opts.Algorithms)
	external := opts.URL
	if external == "" {
		external = resource // checked by RequireBearer
	} else if _, err := checkURL("BearerOptions.DPoP.URL", external); err != nil {
		panic(err.Error())
	}
	window := positiveOr(opts.ProofWindow, DefaultProofWindow, "BearerOptions.DPoP.ProofWindow")
	if opts.MaxReplayEntries < 0 {
		panic("auth: BearerOptions.DPoP.MaxReplayEntries must not be negative")
	}
	lifetime := positiveOr(opts.NonceLifetime, DefaultNonceLifetime, "BearerOptions.DPoP.NonceLifetime")
	checkNonceKeys(opts.NonceKey, opts.OldNonceKeys)
	if opts.Mode == DPoPOff {
		return nil
	}
	c := &dpopChecker{mode: opts.Mode, algs: algs, algNames: joinAlgorithms(algs), window: window,
		replay: opts.Replay, now: time.Now}
	if external != "" {
		u, _ := url.Parse(external)
		c.origin = u.Scheme + "://" + u.Host
	}
	if c.replay == nil {
		max := opts.MaxReplayEntries
		if max == 0 {
			max = DefaultReplayEntries
		}
		c.replay = NewMemoryReplayCache(max)
	}
	if opts.RequireNonce {
		c.nonces = &nonceSealer{keys: newNonceKeys(opts.NonceKey, opts.OldNonceKeys), lifetime: lifetime}
	}
	return c
}

// proofClaims are the claims of a DPoP proof (RFC 9449 section 4.2).
type proofClaims struct {
	JTI   string           `json:"jti"`
	HTM   string           `json:"htm"`
	HTU   string           `json:"htu"`
	IAT   *jwt.NumericDate `json:"iat"`
	ATH   *string          `json:"ath"`
	Nonce *string          `json:"nonce"`
}

// verifiedProof is what a valid proof says: its key's thumbprint, its jti and iat, and whether
// its nonce is past half its life (a new one is sent).
type verifiedProof struct {
	jkt   string
	jti   string
	iat   time.Time
	renew bool
}

// checkProof runs the checks of RFC 9449 section 4.3 that need no token verification: one
// DPoP header holding a signed JWT with typ dpop+jwt, an allowed asymmetric alg and a public
// jwk that verifies it; jti, htm, htu and iat present; htm and htu naming this request; iat
// within the window; ath the hash of token; the server nonce when one is required.
func (c *dpopChecker) checkProof(r *http.Request, token string) (*verifiedProof, *dpopProblem) {
	values := r.Header.Values("DPoP")
	switch {
	case len(values) == 0:
		return nil, proofProblem("A DPoP proof is required with the DPoP scheme")
	case len(values) > 1 || strings.Contains(values[0], ","):
		return nil, proofProblem("Exactly one DPoP header is allowed")
	}
	tok, err := jwt.ParseSigned(values[0], c.algs)
	if err != nil {
		return nil, proofProblem("The DPoP proof is not a JWT signed with an accepted algorithm (" + c.algNames + ")")
	}
	if len(tok.Headers) != 1 {
		return nil, proofProblem("The DPoP proof must carry one signature")
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "dpop+jwt") {
		return nil, proofProblem("The DPoP proof's typ must be dpop+jwt")
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.Valid() {
		return nil, proofProblem("The DPoP proof must carry its public key in the jwk header")
	}
	if !h.JSONWebKey.IsPublic() {
		return nil, proofProblem("The DPoP proof's jwk must not contain a private key")
	}
	if rk, ok := h.JSONWebKey.Key.(*rsa.PublicKey); ok && rk.N.BitLen() < minRSABits {
		return nil, proofProblem("The DPoP proof's RSA key is shorter than 2048 bits")
	}
	var cl proofClaims
	if err := tok.Claims(h.JSONWebKey.Key, &cl); err != nil {
		return nil, proofProblem("The DPoP proof's signature does not verify with its jwk")
	}
	if p := c.checkClaims(r, &cl, token); p != nil {
		return nil, p
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, proofProblem("The DPoP proof's jwk has no thumbprint")
	}
	vp := &verifiedProof{jkt: base64.RawURLEncoding.EncodeToString(tp), jti: cl.JTI, iat: cl.IAT.Time()}
	if c.nonces != nil {
		nonce := ""
		if cl.Nonce != nil {
			nonce = *cl.Nonce
		}
		fresh, ok := c.nonces.open(nonce, c.now())
		if !ok {
			return nil, &dpopProblem{code: errUseDPoPNonce, desc: "The resource server requires a fresh nonce in the DPoP proof", status: http.StatusUnauthorized}
		}
		vp.renew = !fresh
	}
	return vp, nil
}

// checkClaims checks the claims of a proof whose signature verified.
func (c *dpopChecker) checkClaims(r *http.Request, cl *proofClaims, token string) *dpopProblem {
	switch {
	case cl.JTI == "":
		return proofProblem("The DPoP proof has no jti")
	case len(cl.JTI) > 256:
		return proofProblem("The DPoP proof's jti is longer than 256 bytes")
	case cl.HTM == "":
		return proofProblem("The DPoP proof has no htm")
	case cl.HTU == "":
		return proofProblem("The DPoP proof has no htu")
	case cl.IAT == nil:
		return proofProblem("The DPoP proof has no iat")
	case cl.HTM != r.Method:
		return proofProblem("The DPoP proof's htm does not match the request method")
	case !c.htuMatches(r, cl.HTU):
		return proofProblem("The DPoP proof's htu does not match the request URL")
	}
	now := c.now()
	if iat := cl.IAT.Time(); iat.Before(now.Add(-c.window)) || iat.After(now.Add(c.window)) {
		return proofProblem(fmt.Sprintf("The DPoP proof's iat is more than %s from the server's time", c.window))
	}
	if cl.ATH == nil {
		return proofProblem("The DPoP proof has no ath for the access token")
	}
	sum := sha256.Sum256([]byte(token))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(*cl.ATH), []byte(want)) != 1 {
		return proofProblem("The DPoP proof's ath does not match the access token")
	}
	return nil
}

// requestURL is the normalized URL a proof's htu must name for r: the scheme and authority of
// the configured external URL (else of the request: https on TLS, the Host header), and the path
// the client sent (the request-target, so that a handler rewriting r.URL, as http.StripPrefix
// does, changes nothing).
func (c *dpopChecker) requestURL(r *http.Request) string {
	origin := c.origin
	if origin == "" {
		origin = "http://" + r.Host
		if r.TLS != nil {
			origin = "https://" + r.Host
		}
	}
	return normalizeHTU(origin + requestPath(r))
}

// htuMatches reports whether htu names the URL of r (requestURL); a URL that does not normalize
// matches nothing, not even another one.
func (c *dpopChecker) htuMatches(r *http.Request, htu string) bool {
	got := normalizeHTU(htu)
	return got != "" && got == c.requestURL(r)
}

// requestPath is the escaped path of the request-target r arrived with (r.RequestURI), or of
// r.URL for a request made in process without one.
func requestPath(r *http.Request) string {
	target := r.RequestURI
	switch {
	case strings.HasPrefix(target, "/"):
		p, _, _ := strings.Cut(target, "?")
		return p
	case target != "":
		if u, err := url.ParseRequestURI(target); err == nil {
			return u.EscapedPath()
		}
	}
	return r.URL.EscapedPath()
}

// bind checks that the verified token is bound to the proof's key (cnf.jkt) and that the proof
// was not seen before. A token without cnf.jkt is not a DPoP token (invalid_token).
func (c *dpopChecker) bind(ctx context.Context, info *TokenInfo, p *verifiedProof) *dpopProblem {
	jkt := boundKey(info)
	if jkt == "" {
		return &dpopProblem{code: errInvalidToken, desc: "The access token is not bound to a DPoP key", status: http.StatusUnauthorized}
	}
	if subtle.ConstantTimeCompare([]byte(jkt), []byte(p.jkt)) != 1 {
		return &dpopProblem{code: errInvalidToken, desc: "The access token is bound to another key than the DPoP proof's", status: http.StatusUnauthorized}
	}
	id := sha256.Sum256([]byte(p.jkt + "." + p.jti))
	replayed, err := c.replay.Seen(ctx, base64.RawURLEncoding.EncodeToString(id[:]), p.iat.Add(c.window))
	switch {
	case err != nil:
		return &dpopProblem{status: http.StatusServiceUnavailable}
	case replayed:
		return proofProblem("The DPoP proof was already used (a jti is accepted once)")
	}
	return nil
}

// boundKey returns the JWK thumbprint a token is bound to (its cnf.jkt claim, RFC 9449 section
// 6), or "".
func boundKey(info *TokenInfo) string {
	cnf, _ := info.Claims["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	return jkt
}

// joinAlgorithms names algs as a challenge's algs parameter lists them: separated by spaces.
func joinAlgorithms(algs []jose.SignatureAlgorithm) string {
	var b strings.Builder
	for i, a := range algs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(a))
	}
	return b.String()
}
