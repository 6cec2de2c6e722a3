// Package core is the transport-agnostic heart of the kit: the MCP types, the Server registry,
// per-connection Sessions and the dispatch of requests to handlers, on the JSON-RPC 2.0 codec of
// package core/jsonrpc. Both the Streamable HTTP endpoint and the stdio adapter drive it the
// same way.
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
// # Who sees what
//
// What a caller sees is decided per request: an entry's own Visible predicate (Tool.Visible,
// Prompt.Visible, Resource.Visible, ResourceTemplate.Visible), the server-wide
// Options.Visibility and the filters a layer in front put in the request's context
// (WithVisibility; auth.RequireScopes with ScopeOptions.Hide) each get the request's context
// (its principal, its token) and a View of the entry. A hidden entry is left out of the list
// methods (cursors count what the caller sees: no empty pages, nothing learnt of hidden
// entries; on 2026-07-28 such a list is cacheScope "private"), and naming it in tools/call,
// prompts/get, resources/read or completion/complete is answered exactly as an unknown name.
// A listen stream is not told of a new entry its caller may not see, nor of updates of a
// resource hidden from it. Server.FilterChanged
// tells one principal's sessions and listen streams, on every replica, that its view changed.
// A server with none of these pays nothing.
//
// # Extensions
//
// Core serves the protocol's own methods and nothing else. A protocol extension (the packages
// under ext/: tasks, skills) is an Extension given to NewServer in Options.Extensions: through
// its ExtensionSpec it declares the request methods it serves, its entry in
// capabilities.extensions (initialize, server/discover) and the hooks it needs: Tools and
// CallTool around the tool registry and tools/call (a ToolCall, run later on a Call that Detach
// made, whose server-to-client requests go to an InputAsker), Listen for a member of the
// subscriptions/listen filter and the notifications it selects (published as a Change with a
// Key), Resources for the resources of a URI scheme. A method core or another extension serves
// panics at NewServer, naming it; a server without extensions pays nothing for the seam.
//
// # Driving the core from a transport
//
// The kit's transports (mcphttp, stdio, the client's in-memory pair) drive core through an
// internal package, so what only they call is not part of this package's API. A transport
// decodes each inbound frame strictly: exact member names, no duplicate members anywhere in the
// message, nesting at most jsonrpc.MaxNesting deep, integer or string ids (any string, echoed
// exactly as sent). A *jsonrpc.DecodeError carries the wire error and, when it could be read,
// the id to echo; when DecodeError.Notification is set the frame was a notification and must
// not be answered at all.
//
// Each connection has one Session, with an optional session-level sender for messages not tied
// to a request. The transport hands the session each message and writes the Response it gets
// back, or nothing (notifications, client responses, and requests the client cancelled); a
// transport that runs requests concurrently registers each request on its read loop, so that a
// later notifications/cancelled always finds it, and runs it on a goroutine. Messages a handler
// sends while it works (progress, log messages) travel on the sender given for that request, or
// on the session's when there is none.
//
// # Two lifecycles
//
// A request whose params._meta carries a non-null io.modelcontextprotocol/protocolVersion claims
// the stateless 2026-07-28 lifecycle; anything else is legacy. A modern request must carry the
// whole envelope (protocolVersion and clientCapabilities; clientInfo and logLevel when it wants
// them): bad keys are -32602 naming them, an unsupported version is -32022. What the client is
// (Call.ClientInfo, Call.ClientCapabilities, Call.ProtocolVersion) comes from the envelope on a
// modern request and from initialize otherwise; nothing an envelope says is kept. A session is
// locked to one lifecycle by its first success: initialize locks legacy, a modern request or
// server/discover locks modern (an HTTP request carrying the envelope locks from the start, an ephemeral session
// never locks), and a failed request decides nothing. Modern results carry resultType, the
// server's identity in _meta and, on the cacheable methods, the ttlMs/cacheScope hints;
// initialize, ping, logging/setLevel and the subscription methods do not exist there (-32601).
//
// # Server-to-client requests
//
// On a legacy request a handler can ask the client for things (Call.CreateMessage, Call.Elicit,
// Call.ListRoots, Call.Ping, or Call.Request for any method): the request goes out on the
// request's own path, and the transport hands the client's answer back to the session. The
// wait ends with the answer, a timeout (Options.ServerToClientRequestTimeout, WithTimeout or the
// ctx deadline: *RequestTimeoutError, -32001 when the handler returns it), the cancellation of
// the originating request (the client is told to drop the nested request), or the session
// closing. Ephemeral sessions and paths that cannot carry requests (a JSON response) refuse them
// with an error wrapping ErrRequestsRefused. A 2026-07-28 request has no server-to-client
// requests at all: there they fail at once with a *NeedInputError, which says to return
// NeedInput instead (the portable way, below, serves both lifecycles from one handler).
//
// # Multi round-trip results (input_required)
//
// A tools/call, prompts/get or resources/read handler that needs something from the client
// returns NeedInput (an *InputRequiredError) as its error: embedded requests built with ElicitInput,
// SamplingInput and RootsInput under keys it chooses, and/or a state string. At least one is
// required, only those three methods may be embedded and their params must be objects; a
// handler breaking a rule, or any other method returning it, gets -32603. On a 2026-07-28
// request the client receives {"resultType":"input_required",...} after a capability gate
// (-32021 naming exactly the missing client capabilities; a bare elicitation declaration implies
// form, one naming url alone does not) and retries with inputResponses and the echoed
// requestState; the handler reads them with Call.InputResponses, Call.InputResponse,
// Call.ElicitResponse, Call.SamplingResponse, Call.RootsResponse and Call.RequestState. The
// state leaves the server sealed (Options.RequestState: AES-256-GCM bound to method, target,
// canonical arguments, expiry and the request's principal); before the handler of a retry runs, a
// state that fails any check, and inputResponses that are not an object of results, are
// -32602. On the legacy lifecycle the server fulfils the requests itself as server-to-client
// requests on the call's own path and runs the handler again with the answers and the
// plaintext state (at most MaxLegacyInputRounds rounds); where that is impossible (an
// ephemeral session, a path that refuses requests, Options.DisableInputShim) the call fails
// with -32603.
//
// # Elicitation forms
//
// A form's schema has a typed form: FormOf derives it from a Go struct, NewForm takes a
// *jsonschema.Schema; either must be the flat object of primitive properties the elicitation
// specification allows (strings with an optional format, numbers, booleans, single and
// multi-select enumerations, with titles, descriptions and defaults). Put it in
// ElicitParams.Form for Call.Elicit or ElicitInput. The answer is checked against the requested
// schema, its defaults filling what the user left out: by Call.Elicit and ElicitAs on a legacy
// request, by Call.FormResponse and FormResponseAs on a NeedInput retry or a legacy shim round.
// A wrong answer is an *ElicitAnswerError.
//
// # Errors
//
// A tool handler that returns a plain error reports a tool execution error: the client gets a
// result with isError set and the error's text, which the model reads (ErrorResult does the same
// without logging). Protocol errors stay JSON-RPC errors: a handler that returns a *Error (also
// wrapped) sends exactly that error (code, message, data); an unknown tool or invalid params are
// -32602. The plain error of any other handler (prompts, resources, custom methods) becomes
// -32603 "Internal error" whose data names the method, never the error's text. A panic is -32603
// too, its value never sent, and the server keeps serving. All of these are logged at error
// level on Options.Logger: zerolog's global logger (stderr) unless set, silenced with a pointer
// to zerolog.Nop().
package core
