// Package middleware holds the layers of the Streamable HTTP endpoint. Each one is an ordinary
// func(http.Handler) http.Handler, usable alone or in any stack, and each answers its own
// failures with the exact HTTP status and JSON-RPC error body the protocol requires
// ({"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}, Content-Type application/json, see
// WriteError).
//
// # Layers
//
//   - Recover: a panic becomes 500 / -32603 "Internal server error" (or an aborted connection if
//     the response had started); the panic is logged, never echoed.
//   - Tracing: one OpenTelemetry SERVER span per exchange, named and attributed per the MCP
//     semantic conventions once the message is decoded, parented from params._meta or the headers;
//     it reports through the core.Observer it is given (otelmcp.New builds one), and builds none
//     itself.
//   - RequestLog: one zerolog line per exchange (method, path, MCP method, id, session, status,
//     duration, bytes in and out); never bodies or other headers.
//   - OriginGuard: DNS-rebinding protection, Host and Origin checks (403).
//   - MethodAccept: the HTTP method (405) and Accept (406) checks, before the body is read.
//   - Decode: the body limit and the one bounded decode of the POST body (415, 413, 400); later
//     layers read the message with MessageFrom and never read the body again.
//   - EraRouter: sends each request to the legacy chain or the 2026-07-28 handler, header first
//     (MCP-Protocol-Version), then shape (Mcp-Session-Id, a sessionless initialize, the _meta
//     envelope claim); refuses an envelope body on the legacy path (400 -32020 / -32600).
//   - ProtocolVersion: the MCP-Protocol-Version check of legacy requests (400), before the
//     session lookup on a POST, after it on GET and DELETE.
//   - SessionValidator: ties legacy requests to their session (400 missing id, 404 unknown or
//     expired, 403 when the request's principal is not the one that opened the session or the
//     Origin differs from the one seen at initialize).
//   - Principal: resolves the request's principal once (core.WithPrincipal) for everything
//     below that ties state to a caller; an authentication layer in front may set it instead.
//   - MirrorHeaders: on the 2026-07-28 path, MCP-Protocol-Version, Mcp-Method, Mcp-Name and the
//     Mcp-Param-* headers of a tool's x-mcp-header arguments must say what the body says
//     (400 -32020; -32022 for a version the kit does not serve).
//   - SSE: the event streams of the handler below it (Exchange.SSE makes the SSEWriter, with the
//     layer's keepalive and write timeout: framing, flushing, proxy-buffering headers, keepalive
//     comments, per-write deadlines); it closes the stream when the handler returns and bounds
//     what follows it. A handler that needs a stream without one in front answers 500.
//
// The handlers themselves (legacy POST/GET/DELETE, the 2026-07-28 handler, subscriptions/listen)
// are package mcphttp.
//
// # The shared record
//
// The outermost layer that needs it puts an Exchange in the request context (ExchangeFrom). Decode
// stores the message and raw body there and runs the hooks other layers registered (OnMessage),
// which is how Tracing starts its span as soon as the MCP method is known, before the handler
// runs. Later layers record the session id (SetSessionID) and the JSON-RPC error the exchange
// ended with (SetErrorCode), which the request log and the span report.
//
// # Default order
//
// Outermost first:
//
//	recover → tracing → request log → origin/host guard → method + Accept
//	        → body limit + decode → era router
//	        → protocol version → session validator / mirror headers → SSE → handler
//
// Each check has exactly one of these layers as its owner and runs once per request; the
// handlers below them (package mcphttp) repeat none of them, and answer through the same refusal
// functions (Refuse, RefuseMethod, RefuseMissingSession, RefuseShuttingDown). What the headers
// say of the lifecycle is read once, by MethodAccept, and the era router routes by that record.
//
// What a team gives up by dropping a layer:
//
//   - Recover: a panic reaches net/http, which logs it and drops the connection; the client gets
//     no JSON-RPC error, and the panic never reaches the team's logger or OnPanic reporter.
//   - Tracing: no spans; a caller's trace context (in _meta or headers) is not continued.
//   - RequestLog: no access log; nothing else in the stack logs successful exchanges.
//   - OriginGuard: no DNS-rebinding protection. Only drop it when something in front already
//     checks Host and Origin, or the server is never reachable from a browser; a local server
//     without it can be driven by any web page the user visits.
//   - Decode: no body cap and no early 415/413/400 answers; MessageFrom reports nothing, so the
//     endpoint and the era router, which need the message, do not work without it or an
//     equivalent that calls WithMessage.
//   - MethodAccept: no 405 and 406 answers; a handler gets methods and Accept headers it does
//     not serve (the endpoint answers what it cannot serve, without the layer's precedence).
//   - EraRouter: the endpoint serves one lifecycle only (the handler it is given).
//   - ProtocolVersion: an empty MCP-Protocol-Version header on a legacy request is accepted.
//   - SessionValidator: no sessions; a stateful endpoint refuses every non-initialize POST with
//     400 "Missing session ID" (a team that resolves sessions itself hands them over with
//     WithSession instead).
//   - MirrorHeaders: a gateway routing on Mcp-Method or Mcp-Name can be told one thing while the
//     body does another.
//   - SSE: the 2026-07-28 handler answers every request 500 -32603, and the legacy endpoint
//     every GET and every request of a session outside JSON mode (a stateless legacy endpoint
//     streams nothing and does without it; so does initialize).
//
// Keeping recover outermost lets it turn panics in every other layer into a 500. Tracing and the
// request log sit outside the guard and the decoder so that refused requests are traced and
// logged too. The guard runs before the body is read, so a forbidden page never makes the server
// read or parse anything.
package middleware
