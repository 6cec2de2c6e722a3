package middleware

import (
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Wire messages of the method, Accept and protocol-version checks, and of the refusals the
// handlers below the layers share.
const (
	msgMethodNotAllowed = "Method not allowed"
	msgMissingSessionID = "Missing session ID"
	msgShuttingDown     = "Service unavailable: the server is shutting down"
	msgUndecoded        = "Internal error: the request reached the handler without a Decode layer in front of it"
)

// MethodAcceptOptions configure the MethodAccept layer. The zero value is a stateful endpoint
// that answers requests with SSE streams.
type MethodAcceptOptions struct {
	// Stateless says the endpoint keeps no sessions: GET and DELETE answer 405 (Allow: POST).
	Stateless bool
	// JSONResponse says legacy requests are answered with one JSON object: the Accept header of
	// a legacy POST then needs only application/json (a 2026-07-28 POST needs both media types
	// whatever this says).
	JSONResponse bool
}

// MethodAccept is the layer that owns the HTTP method and Accept checks of the endpoint. It runs
// before the body is read, so its answers take precedence over the decode layer's and the
// session validator's, as the reference ladders put them:
//
//   - a method the endpoint does not serve: 405 -32600 "Method not allowed", with Allow "GET,
//     POST, DELETE" (stateful) or "POST" (stateless, where GET and DELETE are refused too). A
//     request the era router sends to the 2026-07-28 lifecycle by its headers (see RoutesModern)
//     has only POST: any other method is 405 with Allow "POST", whatever its Accept header;
//   - a POST whose Accept header does not list application/json and text/event-stream (a legacy
//     POST in JSONResponse mode: application/json alone): 406 -32600 "Not Acceptable: Accept
//     header must include ...";
//   - a GET whose Accept header does not list text/event-stream: 406.
//
// Media types are compared without regard to case or parameters; */* accepts anything; no
// header accepts nothing. The one POST whose lifecycle only its body can tell (2026-07-28
// without a session, and an Mcp-Method of initialize or none: see EraRouter) in JSONResponse
// mode, accepting application/json but not text/event-stream, is left to the era router, which
// finishes this check with the same answer once it knows the lifecycle.
//
// The lifecycle the headers say is the era router's rule (see EraRouter); the layer reads it once,
// and records it in the request's Exchange (creating the record when no layer in front did,
// which Decode would otherwise do), so that the router reads the headers no second time.
func MethodAccept(opts MethodAcceptOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lc := headerLifecycle(r)
			acceptOpen := false
			switch {
			case r.Method == http.MethodPost:
				var ok bool
				if ok, acceptOpen = opts.postAcceptable(w, r, lc); !ok {
					return
				}
			case lc == lcModern:
				RefuseMethod(w, r, true) // 2026-07-28 has only POST
				return
			case r.Method == http.MethodGet:
				if opts.Stateless {
					RefuseMethod(w, r, true)
					return
				}
				if acceptMask(r)&acceptSSE == 0 {
					refuseNotAcceptable(w, r, mediaSSE)
					return
				}
			case r.Method == http.MethodDelete:
				if opts.Stateless {
					RefuseMethod(w, r, true)
					return
				}
			default:
				RefuseMethod(w, r, opts.Stateless)
				return
			}
			// What the headers say of the lifecycle goes to the era router with the request, so
			// that they are read once.
			r, ex := ensureExchange(r)
			ex.lifecycle, ex.acceptOpen = lc, acceptOpen
			next.ServeHTTP(w, r)
		})
	}
}

const (
	mediaJSON = "application/json"
	mediaSSE  = "text/event-stream"
)

// The Accept values MCP clients send (the kit's client, the SDKs), which acceptMask recognises
// whole before it splits anything.
const (
	acceptClients         = mediaJSON + ", " + mediaSSE
	acceptClientsSSEFirst = mediaSSE + ", " + mediaJSON
)

// Bits of acceptMask.
const (
	acceptJSON uint8 = 1 << iota
	acceptSSE
	acceptBoth = acceptJSON | acceptSSE
)

// postAcceptable checks the Accept header of a POST whose headers say lc: both media types, or
// application/json alone for a legacy POST in JSON mode. It answers 406 and returns false when
// the header falls short. It reports in later whether it let through a header that only the
// legacy lifecycle accepts while the body is yet to say which lifecycle the POST belongs to: the
// era router finishes that check (see EraRouter).
func (o MethodAcceptOptions) postAcceptable(w http.ResponseWriter, r *http.Request, lc lifecycle) (ok, later bool) {
	got := acceptMask(r)
	if o.JSONResponse && !lc.byHeaders() {
		if got&acceptJSON == 0 {
			refuseNotAcceptable(w, r, mediaJSON)
			return false, false
		}
		// Legacy accepts this header, 2026-07-28 does not: the body decides.
		return true, lc == lcBody && got != acceptBoth
	}
	if got != acceptBoth {
		refuseNotAcceptable(w, r, mediaJSON, mediaSSE)
		return false, false
	}
	return true, false
}

// acceptMask reads the Accept header of r once: acceptJSON when it lists application/json,
// acceptSSE when it lists text/event-stream, both for */*. Every value is split at commas, each
// media type taken before any ";", trimmed and compared without regard to case; no header
// accepts nothing. It does not allocate.
func acceptMask(r *http.Request) uint8 {
	vals := r.Header["Accept"]
	if len(vals) == 1 && (vals[0] == acceptClients || vals[0] == acceptClientsSSEFirst) {
		return acceptBoth // the value clients send, spelled as they spell it: nothing to split
	}
	var found uint8
	for _, h := range vals {
		for h != "" {
			var part string
			part, h, _ = strings.Cut(h, ",")
			mt, _, _ := strings.Cut(part, ";")
			switch mt = strings.TrimSpace(mt); {
			case mt == "*/*":
				return acceptBoth
			case strings.EqualFold(mt, mediaJSON):
				found |= acceptJSON
			case strings.EqualFold(mt, mediaSSE):
				found |= acceptSSE
			}
		}
	}
	return found
}

func refuseNotAcceptable(w http.ResponseWriter, r *http.Request, wanted ...string) {
	refuse(w, r, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Not Acceptable: Accept header must include "+strings.Join(wanted, " and "))
}

// ProtocolVersionOptions configure the ProtocolVersion layer. The zero value sits in front of a
// session layer (a stateful endpoint).
type ProtocolVersionOptions struct {
	// Stateless says no session layer follows: a POST that names no session is checked at once.
	// Otherwise such a POST is left to the session layer, whose 400 "Missing session ID" comes
	// first.
	Stateless bool
}

// ProtocolVersion is the layer that owns the MCP-Protocol-Version check of legacy requests. It
// sits between the era router (on its legacy branch) and the session validator. A header that
// is absent means 2025-03-26; one that is present must name a version the kit speaks (the era
// router sends every other non-empty value of a request without a session to the 2026-07-28
// lifecycle, so here that is an empty header or a request naming a session): else 400 -32600
// "Bad Request: Unsupported protocol version: <v>. Supported versions: 2025-11-25, ...", which
// lists the versions a legacy request can use (the handshake versions), echoing the request id.
//
// initialize (which negotiates the version) and server/discover are not checked. A POST naming a
// session is checked before the session is looked up (a bad header is 400 before any 404 or
// 403); a GET or DELETE after it (the ladders put the lookup first there): the layer leaves that
// check to the session layer, which runs it once the session is resolved.
func ProtocolVersion(opts ProtocolVersionOptions) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodPost:
				msg, ok := MessageFrom(r.Context())
				if ok && versionChecked(msg) && (opts.Stateless || headerValue(r.Header, HeaderSessionID) != "") && !checkVersion(w, r, msg.ID) {
					return
				}
			case http.MethodGet, http.MethodDelete:
				var ex *Exchange
				r, ex = ensureExchange(r)
				ex.versionAfterSession = true
			}
			next.ServeHTTP(w, r)
		})
	}
}

// versionChecked reports whether a POSTed message is subject to the MCP-Protocol-Version check:
// everything but initialize (which negotiates the version) and server/discover.
func versionChecked(msg *jsonrpc.Message) bool {
	return msg.Method != "initialize" && msg.Method != "server/discover"
}

// checkVersion is the protocol-version check; it answers 400 and returns false on a bad header.
func checkVersion(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) bool {
	vals, present := r.Header[protocolVersionKey]
	if !present {
		return true
	}
	v := ""
	if len(vals) > 0 {
		v = vals[0]
	}
	if v != "" && (core.IsHandshakeVersion(v) || core.IsModernVersion(v)) {
		return true
	}
	refuseVersion(w, r, id, v)
	return false
}

// refuseVersion answers a legacy request whose MCP-Protocol-Version header v the kit does not
// speak: 400 -32600 naming v and the versions a legacy request can use. It is the one owner of
// that refusal.
func refuseVersion(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, v string) {
	refuse(w, r, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
		"Bad Request: Unsupported protocol version: "+v+". Supported versions: "+strings.Join(transport.Core.HandshakeVersions(), ", "))
}

// Refuse answers the exchange with a transport-level JSON-RPC error (WriteError) and records its
// code and message in the request's Exchange, so that the tracing layer and the request log
// report it. Every refusal of the layers and of the handlers below them goes through it.
func Refuse(w http.ResponseWriter, r *http.Request, status int, id jsonrpc.ID, code int64, message string) {
	refuse(w, r, status, id, code, message)
}

// RefuseMethod answers 405 -32600 "Method not allowed" with the Allow header of the endpoint:
// "POST" when postOnly (a stateless endpoint, the 2026-07-28 lifecycle), else "GET, POST,
// DELETE". The MethodAccept layer answers with it; a handler below it has no other method to
// refuse.
func RefuseMethod(w http.ResponseWriter, r *http.Request, postOnly bool) {
	if postOnly {
		w.Header().Set("Allow", "POST")
	} else {
		w.Header().Set("Allow", "GET, POST, DELETE")
	}
	refuse(w, r, http.StatusMethodNotAllowed, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgMethodNotAllowed)
}

// RefuseMissingSession answers 400 -32600 "Missing session ID": a legacy request that needs a
// session named none. The session validator answers with it, and so does the endpoint for a
// request no session layer resolved.
func RefuseMissingSession(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	refuse(w, r, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, msgMissingSessionID)
}

// RefuseSessionNotFound answers 404 -32600 "Session not found": the session the request names is
// unknown or has expired (the client starts a new one). The session validator answers with it, and
// so does the endpoint for a session that ended while the request was on its way.
func RefuseSessionNotFound(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	refuse(w, r, http.StatusNotFound, id, jsonrpc.CodeInvalidRequest, msgSessionNotFound)
}

// RefuseInFlight answers 409 -32600 "Conflict: Request id is already in flight for this session":
// a request of the session with the same id is running, on this process or (with a shared store)
// another one. The session validator answers with it, and so does the endpoint.
func RefuseInFlight(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	refuse(w, r, http.StatusConflict, id, jsonrpc.CodeInvalidRequest, msgInFlight)
}

// RefuseSecondStream answers 409 -32600 "Conflict: Only one SSE stream is allowed per session":
// the session's standalone GET stream is open already, on this process or (with a shared store)
// another one. The session validator answers with it, and so does the endpoint.
func RefuseSecondStream(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, http.StatusConflict, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, msgSecondStream)
}

// RefuseShuttingDown answers 503 -32603 "Service unavailable: the server is shutting down": the
// endpoint or the session store is closed.
func RefuseShuttingDown(w http.ResponseWriter, r *http.Request, id jsonrpc.ID) {
	refuse(w, r, http.StatusServiceUnavailable, id, jsonrpc.CodeInternalError, msgShuttingDown)
}

// RefuseUndecoded answers 500 -32603 for a POST that reached a handler with no decoded message:
// the stack lacks the Decode layer (or an equivalent calling WithMessage) in front of it.
func RefuseUndecoded(w http.ResponseWriter, r *http.Request) {
	refuse(w, r, http.StatusInternalServerError, jsonrpc.ID{}, jsonrpc.CodeInternalError, msgUndecoded)
}
