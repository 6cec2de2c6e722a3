package middleware

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// PrincipalOptions configure the principal layer.
type PrincipalOptions struct {
	// Resolve names who is calling (for example the subject an existing authentication layer
	// put in the request's context); "" means nobody. It is called once per request. It is
	// required (Principal panics without it).
	Resolve func(r *http.Request) string
}

// Principal is the layer that resolves the request's principal once and stores it with
// core.WithPrincipal for everything below it: the session validator (a session answers only the
// principal that opened it), the endpoint (which records that principal at initialize),
// subscriptions/listen (listen ids are scoped per principal), requestState (sealed for the
// principal) and tasks (owned by their creator's principal). A request for which Resolve returns
// "" keeps whatever principal a layer in front already set, so an auth layer in front is never
// overridden by an anonymous answer.
//
// Teams whose authentication layer calls core.WithPrincipal itself do not need this layer.
func Principal(opts PrincipalOptions) func(http.Handler) http.Handler {
	if opts.Resolve == nil {
		panic("middleware: PrincipalOptions.Resolve is required")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := opts.Resolve(r); p != "" {
				r = r.WithContext(core.WithPrincipal(r.Context(), p))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// credentialsKey is the context key of when the request's credentials expire.
type credentialsKey struct{}

// WithCredentialsExpiry returns a copy of ctx saying when the credentials that authenticated the
// request stop being accepted (for a bearer token, its expiry as the verifier enforces it;
// auth.RequireBearer records it). The endpoint's long-lived streams end then: a legacy GET
// stream closes (one resuming a request's stream too; the request goes on), and a
// subscriptions/listen stream is answered with CredentialsExpired, so that
// a stream outlives no token; the client's next request with the same credentials is refused
// by the authentication layer. The zero time leaves ctx as it is (the credentials never expire).
func WithCredentialsExpiry(ctx context.Context, t time.Time) context.Context {
	if t.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, credentialsKey{}, t)
}

// CredentialsExpiry returns when the request's credentials expire (WithCredentialsExpiry), and
// whether they do.
func CredentialsExpiry(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(credentialsKey{}).(time.Time)
	return t, ok
}

// CredentialsExpired is the JSON-RPC error that ends a request still pending on a long-lived
// stream when the credentials it was opened with expire (see WithCredentialsExpiry): -32600,
// "Unauthorized: the access token expired", the same text as data.
func CredentialsExpired() *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Unauthorized: the access token expired")
}
