// Package core is the transport-agnostic heart of the kit: the JSON-RPC 2.0 codec, the MCP types,
// the Server registry, per-connection Sessions and the dispatch of requests to handlers. Both the
// Streamable HTTP endpoint and the stdio adapter drive it the same way.
//
// # The registry
//
// A Server holds the configuration (Options) and what users register: tools (Server.AddTool for a
// hand-written input schema, the generic AddTool for typed handlers whose schemas are derived from
// Go types), prompts, resources and resource templates, a completion handler and custom methods
// (Server.HandleMethod). It is safe for concurrent use and shared by every session. Capabilities
// are derived from what is registered unless Options.Capabilities pins them; a method whose
// capability is not offered is answered with -32603 "Server does not support <cap> (required for
// <method>)".
//
// # Driving the core from a transport
//
// A transport decodes each inbound frame with DecodeMessage (or DecodeBatch for a JSON array).
// Decoding is strict: exact member names, no duplicate members anywhere in the message, nesting at
// most MaxNesting deep, integer or [A-Za-z0-9_-]+ string ids. A *DecodeError carries the wire
// error and, when it could be read, the id to echo; when DecodeError.Notification is set the frame
// was a notification and must not be answered at all.
//
// Each connection has one Session (Server.NewSession), with an optional session-level Sender for
// messages not tied to a request. Session.Handle serves a message and returns the Response to
// write, or nil (notifications, client responses, and requests the client cancelled). A transport
// that runs requests concurrently calls Session.Begin on its read loop, so that a later
// notifications/cancelled always finds the request, and Call.Run on a goroutine; RefusedResponse
// answers a request Begin refused. Messages a handler sends while it works (progress, log
// messages) travel on the Sender given for that request, or on the session's when there is none.
//
// # Errors
//
// A handler that returns a *Error sends exactly that error (code, message, data). Any other error
// becomes -32603 "Internal error" whose data names the tool or method, never the error's text,
// which goes to Options.ErrorLog instead; so does a panic, after which the server keeps serving.
// Tool failures the model should see are results with IsError set (ErrorResult), not errors.
package core
