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

// headerValue is h.Get(key) for a key already in canonical form (this package's header names,
// protocolVersionKey for MCP-Protocol-Version): the request's headers are read several times per
// request, and Get would canonicalize the key again each time.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
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
// The headers are read once per request: MethodAccept in front records what they say in the
// Exchange (it needs it for its own answers), and the router reads that record; without
// MethodAccept the router reads the headers itself. A POST the body sends to the 2026-07-28
// lifecycle whose Accept check MethodAccept left open (see there) is refused here with 406
// before the modern handler sees it.
//
// Without this layer an endpoint serves one lifecycle only.
func EraRouter(opts EraRouterOptions) func(http.Handler) http.Handler {
	modern := opts.Modern
	if modern == nil {
		panic("middleware: EraRouterOptions.Modern is required")
	}
	return func(legacy http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ex := ExchangeFrom(r.Context())
			var msg *jsonrpc.Message
			if ex != nil {
				msg = ex.msg
			}
			if lifecycleOf(r, ex).modern(msg) {
				if ex != nil && ex.acceptOpen {
					// The Accept check MethodAccept left open: 2026-07-28 needs both media types.
					refuseNotAcceptable(w, r, mediaJSON, mediaSSE)
					return
				}
				modern.ServeHTTP(w, r)
				return
			}
			if !refusedByGuard(w, r, msg) {
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
func RoutesModern(r *http.Request) bool {
	ex := ExchangeFrom(r.Context())
	var msg *jsonrpc.Message
	if ex != nil {
		msg = ex.msg
	}
	return lifecycleOf(r, ex).modern(msg)
}

// lifecycle is what the headers of a request say of the lifecycle it belongs to, before its body
// is read. It is decided once per request (headerLifecycle) and recorded in the Exchange.
type lifecycle uint8

const (
	lcUnknown lifecycle = iota // not decided yet
	lcLegacy                   // legacy, whatever the body says
	lcModern                   // 2026-07-28, whatever the body says (every method but POST, an unknown version)
	// lcModernHeaders: a POST, 2026-07-28 without a session, whose Mcp-Method names a method
	// other than initialize. It is modern by its headers (its Accept header must list both
	// media types) and goes to the legacy lifecycle only if its body is an initialize without
	// the envelope claim.
	lcModernHeaders
	// lcBody: a POST, 2026-07-28 without a session, with no Mcp-Method or initialize: the body
	// decides (an initialize without the envelope claim is legacy).
	lcBody
)

// headerLifecycle reads the lifecycle of r from its headers, by the rules of EraRouter.
func headerLifecycle(r *http.Request) lifecycle {
	v := headerValue(r.Header, protocolVersionKey)
	if v == "" || core.IsHandshakeVersion(v) {
		return lcLegacy
	}
	if headerValue(r.Header, HeaderSessionID) != "" {
		return lcLegacy // an established legacy session, whatever the header says
	}
	if !core.IsModernVersion(v) || r.Method != http.MethodPost {
		return lcModern
	}
	if m := headerValue(r.Header, HeaderMethod); m != "" && m != "initialize" {
		return lcModernHeaders
	}
	return lcBody
}

// lifecycleOf returns the lifecycle recorded in ex, or reads it from the headers (and records
// it, when there is an Exchange).
func lifecycleOf(r *http.Request, ex *Exchange) lifecycle {
	if ex == nil {
		return headerLifecycle(r)
	}
	if ex.lifecycle == lcUnknown {
		ex.lifecycle = headerLifecycle(r)
	}
	return ex.lifecycle
}

// modern decides the lifecycle of a request whose headers say lc and whose decoded message is
// msg (nil when none was decoded: the headers alone decide).
func (lc lifecycle) modern(msg *jsonrpc.Message) bool {
	switch lc {
	case lcLegacy:
		return false
	case lcModern:
		return true
	}
	return msg == nil || msg.Method != "initialize" || transport.Core.ClaimsModern(msg)
}

// byHeaders reports whether the headers alone send a POST to the 2026-07-28 lifecycle.
func (lc lifecycle) byHeaders() bool { return lc == lcModern || lc == lcModernHeaders }

// refusedByGuard answers a legacy-routed POST whose body msg claims the modern envelope.
func refusedByGuard(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
	if r.Method != http.MethodPost || msg == nil || !transport.Core.ClaimsModern(msg) {
		return false
	}
	if core.IsModernVersion(headerValue(r.Header, protocolVersionKey)) {
		refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, msgLegacyLocked)
	} else {
		refuse(w, r, http.StatusBadRequest, msg.ID, jsonrpc.CodeHeaderMismatch, msgEnvelopeHeader)
	}
	return true
}
