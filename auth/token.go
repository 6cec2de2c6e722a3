package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/middleware"
)

// TokenInfo is what a Verifier learned about a valid access token. The verifiers of this package
// cache it and hand the same value to every request presenting the token: treat it as read-only.
type TokenInfo struct {
	// Subject is the token's subject (the sub claim): the request's principal unless
	// BearerOptions.Principal says otherwise. RequireBearer refuses a token without one.
	Subject string
	// Issuer is the authorization server that issued the token (iss), when known.
	Issuer string
	// ClientID is the OAuth client the token was issued to (client_id), when known.
	ClientID string
	// Scopes are the scopes granted to the token, in the order the token lists them.
	Scopes []string
	// Audience is the token's audience (aud).
	Audience []string
	// Expiration is when the token expires; the zero time means the verifier does not know.
	Expiration time.Time
	// ValidUntil is when the verifier stops accepting the token: Expiration plus the clock skew
	// it allows (Leeway). The zero time means Expiration. RequireBearer ends the request's
	// long-lived streams then (middleware.WithCredentialsExpiry).
	ValidUntil time.Time
	// Claims holds every claim of the token (or every member of the introspection response), as
	// decoded JSON values.
	Claims map[string]any
}

// HasScope reports whether the token was granted scope.
func (t *TokenInfo) HasScope(scope string) bool { return slices.Contains(t.Scopes, scope) }

// Verifier checks an access token. Verify returns the token's information when the token is
// valid for this server. An error that wraps ErrUnavailable means the token could not be
// checked right now (the authorization server is unreachable, say) and is answered 503; any
// other error means the token is not valid here and is answered 401 invalid_token. Error texts
// never reach the client.
type Verifier interface {
	Verify(ctx context.Context, token string) (*TokenInfo, error)
}

// VerifierFunc adapts a function to the Verifier interface.
type VerifierFunc func(ctx context.Context, token string) (*TokenInfo, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	return f(ctx, token)
}

// ErrInvalidToken is wrapped by the errors the kit's verifiers return for a token that is not
// valid for this server (malformed, badly signed, expired, issued by or for someone else).
var ErrInvalidToken = errors.New("auth: invalid token")

// ErrUnavailable is wrapped by verifier errors that say the token could not be checked at the
// moment (an unreachable or failing JWKS or introspection endpoint). RequireBearer answers them
// with 503 rather than telling the client its token is bad.
var ErrUnavailable = errors.New("auth: token verification unavailable")

type tokenInfoKey struct{}

// WithTokenInfo returns a copy of ctx carrying info, as RequireBearer stores it. It does not set
// the principal (core.WithPrincipal does).
func WithTokenInfo(ctx context.Context, info *TokenInfo) context.Context {
	return context.WithValue(ctx, tokenInfoKey{}, info)
}

// TokenInfoFrom returns the verified token information RequireBearer stored in ctx, and
// whether there is one.
func TokenInfoFrom(ctx context.Context) (*TokenInfo, bool) {
	info, ok := ctx.Value(tokenInfoKey{}).(*TokenInfo)
	return info, ok && info != nil
}

// withToken returns r carrying info, the principal p and when the token stops being accepted.
func withToken(r *http.Request, info *TokenInfo, p string) *http.Request {
	until := info.ValidUntil
	if until.IsZero() {
		until = info.Expiration
	}
	ctx := middleware.WithCredentialsExpiry(WithTokenInfo(r.Context(), info), until)
	return r.WithContext(core.WithPrincipal(ctx, p))
}
