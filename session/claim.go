package session

import (
	"context"
	"errors"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ErrClaimed is what a shared store's lookup returns when the request's Claim is held by another
// request of the session, on this process or another one: its request id is in flight, or the
// session's standalone GET stream is open. The session layer answers it 409, as the transport
// answers the same conflict within one process.
var ErrClaimed = errors.New("session: held by another request of the session")

// Claim is what one request of a legacy session holds in a shared store while it runs, so that
// the checks one process makes on its own (a request id already in flight on the session, a
// second standalone GET stream) hold across processes: the session layer fills in what the
// request would hold, a store that shares its sessions (see ClaimFrom) takes it inside the lookup
// that renews the session, and the session layer releases it once the request ended and its
// response was sent. A store that shares nothing ignores it. The zero Claim claims nothing.
type Claim struct {
	// Request is the id of a request being served (the zero ID for none).
	Request jsonrpc.ID
	// Stream is set for the standalone GET stream of the session.
	Stream bool

	kept   bool
	closed bool
	// hold is what Hold recorded (nil: no store took the claim). It has an allocation of its
	// own, made by the store that claims: the claim of a request on any other store stays small.
	hold *claimHold
}

// claimHold is what a store that took a claim recorded for releasing it.
type claimHold struct {
	by                  ClaimReleaser
	session, field, tok string
}

// ClaimReleaser is the store side of a Claim: it lets go of what Hold recorded.
type ClaimReleaser interface {
	// ReleaseClaim ends the claim (session, field, token) recorded with Claim.Hold, unless
	// another request holds it by then. It may return before the store has it: a shared store
	// queues the release and sends it off the request's path.
	ReleaseClaim(ctx context.Context, session, field, token string)
}

// Wants reports whether the claim asks for anything.
func (c *Claim) Wants() bool { return c != nil && (c.Request.IsValid() || c.Stream) }

// Hold records that the store by took the claim (under the given field and token, which only the
// store reads), for Release.
func (c *Claim) Hold(by ClaimReleaser, session, field, token string) {
	c.hold = &claimHold{by: by, session: session, field: field, tok: token}
}

// Held reports whether a store holds the claim.
func (c *Claim) Held() bool { return c != nil && c.hold != nil && c.hold.by != nil && !c.closed }

// Release lets go of a claim a store took, once (later calls, and calls on a claim no store took
// or that Keep handed on, do nothing).
func (c *Claim) Release(ctx context.Context) {
	if !c.Held() || c.kept {
		return
	}
	c.closed = true
	h := c.hold
	h.by.ReleaseClaim(ctx, h.session, h.field, h.tok)
}

// Keep hands the claim to work that outlives the request's handler (a call that goes on after
// its client left): Release then does nothing, and the function returned releases the claim
// instead, once. On a claim no store took it returns a function that does nothing.
func (c *Claim) Keep() func(context.Context) {
	if !c.Held() || c.kept {
		return func(context.Context) {}
	}
	c.kept = true
	h := c.hold
	done := false
	return func(ctx context.Context) {
		if !done {
			done = true
			h.by.ReleaseClaim(ctx, h.session, h.field, h.tok)
		}
	}
}

// Reset empties the claim for reuse.
func (c *Claim) Reset() { *c = Claim{} }

// ClaimKey is the context key under which the session layer puts the Claim of a request (the
// session layer of the middleware package keeps it in its per-exchange record, whose context
// answers this key); ClaimFrom reads it.
type ClaimKey struct{}

// ClaimFrom returns the Claim of the request ctx belongs to, or nil when the session layer put
// none (the request then claims nothing in a shared store).
func ClaimFrom(ctx context.Context) *Claim {
	c, _ := ctx.Value(ClaimKey{}).(*Claim)
	return c
}

// WithClaim returns ctx carrying c, for a session layer without the middleware's exchange record.
func WithClaim(ctx context.Context, c *Claim) context.Context {
	return context.WithValue(ctx, ClaimKey{}, c)
}
