// Package client is a Go client for the Model Context Protocol: it connects to any MCP server
// over Streamable HTTP (HTTPTransport), stdio (CommandTransport, IOTransport) or directly to a
// *core.Server in the same process (InMemoryTransport), in either lifecycle of the current
// specification: the initialize handshake with a session (protocol versions 2024-11-05 to
// 2025-11-25) or the stateless 2026-07-28 lifecycle (server/discover, a _meta envelope on every
// request, input_required results, subscriptions/listen). Connect with Auto chooses for you.
//
// Calls take a context: cancelling it cancels the request on the server, and every call without
// a deadline gets Options.Timeout. Requests from the server (sampling, elicitation, roots) are
// answered by the handlers in Options; on 2026-07-28 the same handlers answer input_required
// results, and the call is retried with the responses without the caller noticing. Results and
// parameters are package core's types, shared with the server side of the kit.
//
// A misbehaving server is bounded too: at most Options.MaxServerRequests of its requests run at
// once (the rest are refused), an application/json answer that cannot be the response fails
// the call at once (ErrInvalidResponse), a redirect to another origin is refused, and a stream
// that keeps ending empty is reconnected with a growing wait.
//
// A Client is safe for concurrent use. Close it when done: it ends calls in flight, awaits the
// handlers it started, deletes a legacy HTTP session and stops a spawned server.
package client
