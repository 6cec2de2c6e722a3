package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
)

// DefaultMaxTokenBytes is the longest access token RequireBearer accepts when
// BearerOptions.MaxTokenBytes is zero: 16 KiB.
const DefaultMaxTokenBytes = 16 << 10

// Wire messages of the bearer layer (JSON-RPC error bodies; the WWW-Authenticate header carries
// the OAuth error).
const (
	msgUnauthorized       = "Unauthorized: a valid bearer token is required"
	msgInvalidToken       = "Unauthorized: the access token is invalid or expired"
	msgVerifyUnavailable  = "Service unavailable: the access token could not be verified"
	msgInsufficientScope  = "Forbidden: insufficient scope"
	descInvalidToken      = "The access token is invalid or expired"
	descMalformed         = "The Authorization header is not a valid bearer credential"
	descMalformedDPoP     = "The Authorization header is not a valid DPoP credential"
	descTwoSchemes        = "The request carries both a Bearer and a DPoP credential: send one"
	descBoundAsBearer     = "The access token is bound to a DPoP key: send it with the DPoP scheme and a proof"
	descInsufficientScope = "The access token lacks scopes this operation needs"
)

// BearerOptions configure RequireBearer.
type BearerOptions struct {
	// ResourceMetadataURL is the absolute URL of the server's RFC 9728 protected resource
	// metadata (MetadataHandler.URL or MetadataURL), sent as resource_metadata in every
	// challenge so clients can find the authorization server. Required: RequireBearer panics
	// without a valid one (https, or http on a loopback host; no user information or fragment).
	ResourceMetadataURL string
	// Resource is the server's canonical resource URI (the audience its tokens name, as in
	// JWTOptions.Audience). When set, every admitted request carries it (core.WithResource), so a
	// requestState sealed for this resource never opens on a server behind another one sharing
	// the key. Empty names none; RequireBearer panics on an invalid one (as for
	// ResourceMetadataURL).
	Resource string
	// Scopes are scopes every request needs. They are sent as scope in 401 challenges (the
	// scopes a client should ask for first), and a valid token lacking one of them gets 403
	// insufficient_scope. Nil requires none and sends no scope parameter.
	Scopes []string
	// Principal names the request's principal for a verified token. Nil uses
	// TokenInfo.Subject. A token whose principal is empty is refused (401 invalid_token):
	// every authenticated request has someone to own its sessions.
	Principal func(*TokenInfo) string
	// MaxTokenBytes bounds the length of an access token; a longer one is refused as invalid
	// without calling the verifier. Zero means DefaultMaxTokenBytes (16384); negative panics.
	MaxTokenBytes int
	// DPoP turns on DPoP-bound access tokens (RFC 9449) and says whether plain bearer tokens
	// are still accepted. The zero value is DPoPOff: bearer tokens only.
	DPoP DPoPOptions
	// StructuredDenials adds the SEP-2643 (draft) authorization denial envelope to the 403
	// answer for want of Scopes, as ScopeOptions.StructuredDenials does. Off by default.
	StructuredDenials bool
}

// RequireBearer returns the layer that admits only requests carrying a valid bearer access
// token (RFC 6750, in the Authorization header only: tokens in the query string or body are
// never read). Every request except a CORS preflight (OPTIONS) needs one:
//
//   - no Authorization header, or another scheme: 401, JSON-RPC -32600 body, and
//     WWW-Authenticate: Bearer resource_metadata="...", scope="..." (scope when Scopes is set;
//     no error code, as RFC 6750 asks for requests without credentials);
//   - a malformed bearer credential (empty, not a token68, repeated Authorization headers,
//     longer than MaxTokenBytes) or a token the verifier refuses: 401 with
//     error="invalid_token" added;
//   - a token bound to a DPoP key (a cnf.jkt claim) presented as Bearer: 401 invalid_token,
//     whatever DPoP.Mode says (a bound token is worthless without its proof);
//   - a verifier error wrapping ErrUnavailable: 503 with -32603 (the token is not blamed);
//   - a valid token without every scope of Scopes: 403 with error="insufficient_scope" and the
//     scopes in the challenge.
//
// With DPoP on (DPoPOptions.Mode), Authorization: DPoP <token> is accepted with one DPoP proof
// header (RFC 9449 section 4.3, see DPoPOptions), challenges add (or, for DPoPRequired, are)
// WWW-Authenticate: DPoP algs="...", a bad proof is answered 401 error="invalid_dpop_proof",
// a token not bound to the proof's key 401 error="invalid_token", both a Bearer and a DPoP
// credential (two methods at once, RFC 6750 section 3.1) 400 error="invalid_request", a missing or stale nonce
// (RequireNonce) 401 error="use_dpop_nonce" with a DPoP-Nonce header, and a replay cache that
// fails 503. The challenge of the scheme at fault comes first.
//
// Otherwise the next handler runs with the TokenInfo in the context (TokenInfoFrom) and the
// principal set with core.WithPrincipal, which session ownership, listen ids, the requestState
// audience and task ownership all read, and Resource, when set, with core.WithResource. Every response of the layer carries
// Cache-Control: no-store.
//
// Mount it after the Origin guard and before the decode layer, so the body of an
// unauthenticated request is never read. It panics on invalid options.
func RequireBearer(v Verifier, opts BearerOptions) func(http.Handler) http.Handler {
	l := newBearerLayer(v, opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { l.serve(w, r, next) })
	}
}

// bearerLayer is the state of one RequireBearer layer: its options and its challenges, built
// once.
type bearerLayer struct {
	v         Verifier
	opts      BearerOptions
	maxLen    int
	principal func(*TokenInfo) string
	dpop      *dpopChecker // nil for DPoPOff
	meta      string
	scope     string
	// Bearer challenges: no credential, a refused token, a malformed credential, missing scopes.
	missing, invalid, malformed, insufficient string
	bound                                     string // a DPoP-bound token sent as Bearer
}

func newBearerLayer(v Verifier, opts BearerOptions) *bearerLayer {
	if v == nil {
		panic("auth: RequireBearer needs a Verifier")
	}
	if _, err := checkURL("BearerOptions.ResourceMetadataURL", opts.ResourceMetadataURL); err != nil {
		panic(err.Error())
	}
	checkScopes("BearerOptions.Scopes", opts.Scopes)
	checkResource(opts.Resource)
	maxLen := opts.MaxTokenBytes
	if maxLen < 0 {
		panic("auth: BearerOptions.MaxTokenBytes must not be negative")
	}
	if maxLen == 0 {
		maxLen = DefaultMaxTokenBytes
	}
	l := &bearerLayer{v: v, opts: opts, maxLen: maxLen, principal: opts.Principal,
		dpop: newDPoPChecker(opts.DPoP, opts.Resource), meta: opts.ResourceMetadataURL, scope: strings.Join(opts.Scopes, " ")}
	if l.principal == nil {
		l.principal = func(t *TokenInfo) string { return t.Subject }
	}
	meta, scope := l.meta, l.scope
	l.missing = challenge("resource_metadata", meta, "scope", scope)
	l.invalid = challenge("error", errInvalidToken, "error_description", descInvalidToken, "resource_metadata", meta, "scope", scope)
	l.malformed = challenge("error", errInvalidToken, "error_description", descMalformed, "resource_metadata", meta, "scope", scope)
	l.insufficient = challenge("error", errInsufficientScope, "error_description", descInsufficientScope, "resource_metadata", meta, "scope", scope)
	l.bound = challenge("error", errInvalidToken, "error_description", descBoundAsBearer, "resource_metadata", meta, "scope", scope)
	return l
}

func (l *bearerLayer) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method == http.MethodOptions {
		next.ServeHTTP(w, r)
		return
	}
	scheme, token, status := readCredential(r, l.maxLen, l.dpop != nil)
	if scheme == schemeBearer && l.dpop != nil && l.dpop.mode == DPoPRequired {
		status = credMissing // plain bearer tokens are not accepted at all
	}
	switch status {
	case credMissing:
		l.denyBearer(w, r, http.StatusUnauthorized, l.missing, msgUnauthorized)
		return
	case credTwoSchemes:
		// RFC 6750 section 3.1: a request using more than one method is invalid_request, 400.
		l.denyDPoP(w, r, &dpopProblem{code: errInvalidRequest, desc: descTwoSchemes, status: http.StatusBadRequest})
		return
	case credMalformed:
		if scheme == schemeDPoP {
			l.denyDPoP(w, r, &dpopProblem{code: errInvalidToken, desc: descMalformedDPoP, status: http.StatusUnauthorized})
		} else {
			l.denyBearer(w, r, http.StatusUnauthorized, l.malformed, msgInvalidToken)
		}
		return
	}
	var proof *verifiedProof
	if scheme == schemeDPoP {
		var p *dpopProblem
		if proof, p = l.dpop.checkProof(r, token); p != nil {
			l.denyDPoP(w, r, p)
			return
		}
	}
	info, err := l.v.Verify(r.Context(), token)
	switch {
	case err != nil && errors.Is(err, ErrUnavailable):
		w.Header().Set("Cache-Control", "no-store")
		middleware.Refuse(w, r, http.StatusServiceUnavailable, jsonrpc.ID{}, jsonrpc.CodeInternalError, msgVerifyUnavailable)
		return
	case err != nil || info == nil:
		l.refuseToken(w, r, scheme)
		return
	}
	p := l.principal(info)
	if p == "" {
		l.refuseToken(w, r, scheme)
		return
	}
	if proof != nil {
		if prob := l.dpop.bind(r.Context(), info, proof); prob != nil {
			l.denyDPoP(w, r, prob)
			return
		}
		if proof.renew {
			w.Header().Set(headerDPoPNonce, l.dpop.nonces.issue(l.dpop.now()))
		}
		r = r.WithContext(context.WithValue(r.Context(), dpopKeyCtx{}, proof.jkt))
	} else if boundKey(info) != "" {
		l.denyBearer(w, r, http.StatusUnauthorized, l.bound, msgInvalidToken)
		return
	}
	for _, s := range l.opts.Scopes {
		if !info.HasScope(s) {
			if scheme == schemeDPoP {
				l.denyDPoP(w, r, &dpopProblem{code: errInsufficientScope, desc: descInsufficientScope, status: http.StatusForbidden})
			} else {
				l.denyBearer(w, r, http.StatusForbidden, l.insufficient, msgInsufficientScope)
			}
			return
		}
	}
	next.ServeHTTP(w, withResource(withToken(r, info, p), l.opts.Resource))
}

// refuseToken answers a token the verifier refused, in the scheme it came with.
func (l *bearerLayer) refuseToken(w http.ResponseWriter, r *http.Request, scheme int) {
	if scheme == schemeDPoP {
		l.denyDPoP(w, r, &dpopProblem{code: errInvalidToken, desc: descInvalidToken, status: http.StatusUnauthorized})
		return
	}
	l.denyBearer(w, r, http.StatusUnauthorized, l.invalid, msgInvalidToken)
}

// Outcomes of reading the Authorization header.
const (
	credOK = iota
	credMissing
	credMalformed
	credTwoSchemes // both a Bearer and a DPoP credential: two methods at once
)

// Schemes of the Authorization header.
const (
	schemeNone = iota
	schemeBearer
	schemeDPoP
)

// readCredential reads the access token of the Authorization header and its scheme (DPoP only
// when dpop is on). A missing header or another scheme is credMissing; an empty or
// syntactically invalid token, a repeated header or a token longer than maxLen is
// credMalformed.
func readCredential(r *http.Request, maxLen int, dpop bool) (int, string, int) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return schemeNone, "", credMissing
	}
	v := values[0]
	name, rest, _ := strings.Cut(strings.TrimLeft(v, " "), " ")
	scheme := schemeNone
	switch {
	case strings.EqualFold(name, "Bearer"):
		scheme = schemeBearer
	case dpop && strings.EqualFold(name, "DPoP"):
		scheme = schemeDPoP
	}
	if len(values) > 1 {
		if dpop && scheme != schemeNone {
			for _, o := range values[1:] {
				n, _, _ := strings.Cut(strings.TrimLeft(o, " "), " ")
				if strings.EqualFold(n, "Bearer") != (scheme == schemeBearer) && (strings.EqualFold(n, "Bearer") || strings.EqualFold(n, "DPoP")) {
					return scheme, "", credTwoSchemes
				}
			}
		}
		return scheme, "", credMalformed
	}
	if scheme == schemeNone {
		return scheme, "", credMissing
	}
	token := strings.Trim(rest, " ")
	if token == "" || len(token) > maxLen || !isToken68(token) {
		return scheme, "", credMalformed
	}
	return scheme, token, credOK
}

// isToken68 reports whether s is a b64token of RFC 6750 section 2.1:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

func denyID(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, chal, message string) {
	h := w.Header()
	h.Set("WWW-Authenticate", chal)
	h.Set("Cache-Control", "no-store")
	middleware.Refuse(w, r, status, id, jsonrpc.CodeInvalidRequest, message)
}

// checkResource panics on a BearerOptions.Resource that is set but not a valid URL.
func checkResource(uri string) {
	if uri == "" {
		return
	}
	if _, err := checkURL("BearerOptions.Resource", uri); err != nil {
		panic(err.Error())
	}
}

// withResource names the resource the request was authorized for (core.WithResource); an empty
// uri leaves the request as it is.
func withResource(r *http.Request, uri string) *http.Request {
	if uri == "" {
		return r
	}
	return r.WithContext(transport.Core.WithResource(r.Context(), uri))
}
