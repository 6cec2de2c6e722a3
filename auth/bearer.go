package auth

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/core"
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
//   - a verifier error wrapping ErrUnavailable: 503 with -32603 (the token is not blamed);
//   - a valid token without every scope of Scopes: 403 with error="insufficient_scope" and the
//     scopes in the challenge.
//
// Otherwise the next handler runs with the TokenInfo in the context (TokenInfoFrom) and the
// principal set with core.WithPrincipal, which session ownership, listen ids, the requestState
// audience and task ownership all read, and Resource, when set, with core.WithResource. Every response of the layer carries
// Cache-Control: no-store.
//
// Mount it after the Origin guard and before the decode layer, so the body of an
// unauthenticated request is never read. It panics on invalid options.
func RequireBearer(v Verifier, opts BearerOptions) func(http.Handler) http.Handler {
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
	principal := opts.Principal
	if principal == nil {
		principal = func(t *TokenInfo) string { return t.Subject }
	}
	meta := opts.ResourceMetadataURL
	scope := strings.Join(opts.Scopes, " ")
	missing := challenge("resource_metadata", meta, "scope", scope)
	invalid := challenge("error", errInvalidToken, "error_description", descInvalidToken, "resource_metadata", meta, "scope", scope)
	malformed := challenge("error", errInvalidToken, "error_description", descMalformed, "resource_metadata", meta, "scope", scope)
	insufficient := challenge("error", errInsufficientScope, "error_description", descInsufficientScope, "resource_metadata", meta, "scope", scope)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions {
				next.ServeHTTP(w, r)
				return
			}
			token, status := bearerToken(r, maxLen)
			switch status {
			case credMissing:
				deny(w, r, http.StatusUnauthorized, missing, msgUnauthorized)
				return
			case credMalformed:
				deny(w, r, http.StatusUnauthorized, malformed, msgInvalidToken)
				return
			}
			info, err := v.Verify(r.Context(), token)
			switch {
			case err != nil && errors.Is(err, ErrUnavailable):
				w.Header().Set("Cache-Control", "no-store")
				middleware.Refuse(w, r, http.StatusServiceUnavailable, core.ID{}, core.CodeInternalError, msgVerifyUnavailable)
				return
			case err != nil || info == nil:
				deny(w, r, http.StatusUnauthorized, invalid, msgInvalidToken)
				return
			}
			p := principal(info)
			if p == "" {
				deny(w, r, http.StatusUnauthorized, invalid, msgInvalidToken)
				return
			}
			for _, s := range opts.Scopes {
				if !info.HasScope(s) {
					deny(w, r, http.StatusForbidden, insufficient, msgInsufficientScope)
					return
				}
			}
			next.ServeHTTP(w, withResource(withToken(r, info, p), opts.Resource))
		})
	}
}

// Outcomes of reading the Authorization header.
const (
	credOK = iota
	credMissing
	credMalformed
)

// bearerToken reads the bearer token of the Authorization header. A missing header or another
// scheme is credMissing; an empty or syntactically invalid token, a repeated header or a token
// longer than maxLen is credMalformed.
func bearerToken(r *http.Request, maxLen int) (string, int) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", credMissing
	}
	v := values[0]
	scheme, rest, _ := strings.Cut(strings.TrimLeft(v, " "), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		if len(values) > 1 {
			return "", credMalformed
		}
		return "", credMissing
	}
	if len(values) > 1 {
		return "", credMalformed
	}
	token := strings.Trim(rest, " ")
	if token == "" || len(token) > maxLen || !isToken68(token) {
		return "", credMalformed
	}
	return token, credOK
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

// deny answers with status, the challenge in WWW-Authenticate and a JSON-RPC -32600 body.
func deny(w http.ResponseWriter, r *http.Request, status int, chal, message string) {
	denyID(w, r, status, core.ID{}, chal, message)
}

func denyID(w http.ResponseWriter, r *http.Request, status int, id core.ID, chal, message string) {
	h := w.Header()
	h.Set("WWW-Authenticate", chal)
	h.Set("Cache-Control", "no-store")
	middleware.Refuse(w, r, status, id, core.CodeInvalidRequest, message)
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
	return r.WithContext(core.WithResource(r.Context(), uri))
}
