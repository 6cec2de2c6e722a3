package core

import "context"

// principalKey is the context key of the request's principal.
type principalKey struct{}

// WithPrincipal returns a copy of ctx that names who is calling: the authenticated subject of
// the request (a user, a service account, a token's subject). It is resolved once per request,
// by the transport or an authentication layer in front of it, and everything that ties state to
// a caller reads it from the context: legacy session ownership, the scope of listen ids, the
// audience sealed into requestState and the owner of a task.
//
// An empty principal means "nobody is authenticated" and is the same as not calling
// WithPrincipal at all: PrincipalFrom reports it as absent, so two anonymous callers are never
// taken for the same principal by accident.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	if principal == "" {
		return ctx
	}
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the principal recorded in ctx by WithPrincipal, and whether there is
// one. It never reports an empty principal as present.
func PrincipalFrom(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(principalKey{}).(string)
	return p, ok && p != ""
}

// resourceKey is the context key of the resource URI the request was authorized for.
type resourceKey struct{}

// withResource returns a copy of ctx that names the protected resource the request was
// authorized for: the server's canonical resource URI (RFC 8707, RFC 9728), as an authentication
// layer knows it (auth.BearerOptions.Resource). A requestState sealed for a request with a
// resource opens only for a request naming the same one, so two servers sharing a key behind
// different resource URIs never accept each other's states. An empty uri leaves ctx as it is.
func withResource(ctx context.Context, uri string) context.Context {
	if uri == "" {
		return ctx
	}
	return context.WithValue(ctx, resourceKey{}, uri)
}

// resourceFrom returns the resource URI recorded in ctx by withResource, and whether there is
// one.
func resourceFrom(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(resourceKey{}).(string)
	return u, ok && u != ""
}
