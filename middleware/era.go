package middleware

import (
	"net/http"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// HeaderProtocolVersion is the header naming the protocol version of an HTTP request.
const HeaderProtocolVersion = "MCP-Protocol-Version"

// protocolVersionKey is HeaderProtocolVersion in net/http's canonical form. Lookups use it: a
// name spelled otherwise is canonicalized into a new string on every lookup.
var protocolVersionKey = http.CanonicalHeaderKey(HeaderProtocolVersion)

// headerKey returns the canonical form of one of the kit's header names without allocating.
func headerKey(name string) string {
	if name == HeaderProtocolVersion {
		return protocolVersionKey
	}
	return name
}

// Wire messages of the era router's guard.
const (
	msgLegacyLocked   = "Invalid Request: the session already negotiated the legacy lifecycle via `initialize`"
	msgEnvelopeHeader = "Header mismatch: MCP-Protocol-Version header is missing or legacy while the body carries the modern _meta envelope"
)

// EraRouterOptions configure the era router.
type EraRouterOptions struct {
	// Modern serves the requests of the 2026-07-28 lifecycle. It is required (EraRouter panics
	// without it).
	Modern http.Handler
}

// EraRouter is the layer that sends each request to the lifecycle it belongs to: the handler it
// wraps serves the legacy lifecycle (sessions, initialize), opts.Modern serves the 2026-07-28
// lifecycle. It must sit below Decode. The decision is header first, then shape:
//
//   - MCP-Protocol-Version absent, empty, or a handshake version (2024-11-05 .. 2025-11-25):
//     legacy. A body that nevertheless carries the modern _meta envelope is refused with 400
//     -32020: the header must say what the body claims.
//   - A version the kit does not know (say 1900-01-01): modern, which answers -32022 listing
//     the 2026-07-28 versions; with an Mcp-Session-Id, legacy, whose ProtocolVersion layer
//     answers 400 listing the versions a legacy session can use.
//   - 2026-07-28 with an Mcp-Session-Id: legacy, an established session (a body carrying the
//     envelope there is 400 -32600: the session chose the legacy lifecycle).
//   - 2026-07-28 without a session: modern, except a POST initialize without the envelope
//     claim, which a client probing with the newest header may still send: legacy.
//
// A POST the body sends to the 2026-07-28 lifecycle whose Accept check MethodAccept left open
// (see there) is refused here with 406 before the modern handler sees it.
//
// Without this layer an endpoint serves one lifecycle only.
func EraRouter(opts EraRouterOptions) func(http.Handler) http.Handler {
	modern := opts.Modern
	if modern == nil {
		panic("middleware: EraRouterOptions.Modern is required")
	}
	return func(legacy http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if routeModern(r) {
				if r.Method == http.MethodPost && !finishAccept(w, r, ExchangeFrom(r.Context())) {
					return
				}
				modern.ServeHTTP(w, r)
				return
			}
			if !refusedByGuard(w, r) {
				legacy.ServeHTTP(w, r)
			}
		})
	}
}

// RoutesModern reports whether EraRouter sends r to the 2026-07-28 handler, by the rules above.
// For a POST it looks at the message Decode stored in the request context (a POST without one
// is judged by its headers alone); other methods are judged by their headers, so an endpoint can
// ask before the body is read, for example to leave a GET with a 2026-07-28 header to the modern
// handler's 405 instead of checking its Accept header.
func RoutesModern(r *http.Request) bool { return routeModern(r) }

// routeModern decides the lifecycle of r.
func routeModern(r *http.Request) bool {
	v := r.Header.Get(protocolVersionKey)
	if v == "" || core.IsHandshakeVersion(v) {
		return false
	}
	if r.Header.Get(HeaderSessionID) != "" {
		return false // an established legacy session, whatever the header says
	}
	if !core.IsModernVersion(v) {
		return true
	}
	if r.Method != http.MethodPost {
		return true
	}
	msg, ok := MessageFrom(r.Context())
	if ok && msg.Method == "initialize" && !transport.Core.ClaimsModern(msg) {
		return false
	}
	return true
}

// refusedByGuard answers a legacy-routed POST whose body claims the modern envelope.
func refusedByGuard(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	msg, ok := MessageFrom(r.Context())
	if !ok || !transport.Core.ClaimsModern(msg) {
		return false
	}
	if core.IsModernVersion(r.Header.Get(protocolVersionKey)) {
		refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, msgLegacyLocked)
	} else {
		refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeHeaderMismatch, msgEnvelopeHeader)
	}
	return true
}
