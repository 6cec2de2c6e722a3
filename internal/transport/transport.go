// Package transport is core as the kit's own transports drive it: starting and feeding sessions
// (mcphttp, stdio, the client's in-memory pair), the JSON-RPC codec, the shared-state plumbing a
// replicated session store uses, subscriptions/listen outside dispatch and the observer's
// plumbing. None of it is API for a server author, so none of it is exported from core: core
// implements API with unexported methods and hands it over through internal/corehook; Core is
// that implementation, checked against API when the program starts.
package transport

import (
	"context"
	"encoding/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/corehook"
)

// Core is core's implementation of API.
var Core = corehook.Core.(API)

// Pipe is the transport of a session whose messages travel on a pipe (stdio), as observers see
// it.
var Pipe = core.Transport{Network: "pipe"}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, msg []byte) error

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, msg []byte) error { return f(ctx, msg) }

// SessionHooks connect a session to state shared with other processes (a shared session store
// and its message router); every hook is optional. Persist is called after a request changed
// the session's state, before the response is sent (an error answers -32603 "Service
// unavailable: the session could not be saved"); Forward receives a client response or a
// notifications/cancelled that nothing in this process waits for (it may concern another
// replica; the message must not be modified); Remote is the session-level path used while this
// process has none. Core documents each hook in full (sessionHooks).
type SessionHooks = struct {
	Persist func(ctx context.Context, st core.SessionState) error
	Forward func(ctx context.Context, msg *jsonrpc.Message)
	Remote  Sender
}

// ParamHeader is a tool argument that 2026-07-28 clients mirror into an HTTP header: the input
// schema property Argument carries "x-mcp-header": Name, and the client sends Mcp-Param-<Name>.
type ParamHeader = struct{ Name, Argument string }

// API is what the kit's transports call in core besides the server author's API.
type API interface {
	// NewSession starts a session on the server with the options of SessionOptions, field for
	// field (call it through NewSession). Close the session when the connection ends.
	NewSession(s *core.Server, id, principal string, out Sender, ephemeral, modern, changeNotifications bool,
		tr core.Transport, obs core.Observer, listen ListenServer, state *core.SessionState) *core.Session
	// SetOut sets the session-level path (nil removes it).
	SetOut(ss *core.Session, out Sender)
	// EndInput tells the session that the client can send nothing more (a stdio client closed
	// its input) while the session goes on: requests in flight keep running and their responses
	// are still sent, but server-to-client requests waiting for an answer fail at once and new
	// ones are refused, both with an error wrapping core.ErrInputEnded. It is safe to call more
	// than once.
	EndInput(ss *core.Session)
	// Handle serves one inbound message on the session. For a request it runs the handler and
	// returns the response to send, or nil when the client cancelled the request. Notifications
	// and responses from the client return nil. out is the path for messages related to this
	// request (progress, log messages, server-to-client requests); nil means the session-level
	// path.
	Handle(ss *core.Session, ctx context.Context, msg *jsonrpc.Message, out Sender) *core.Response
	// Begin registers a request as in flight, so that notifications/cancelled can reach it, and
	// returns the call to Run. The checks run in this order: an unknown method (or a
	// notification method sent with an id) and a capability the server does not offer give a
	// call whose Run answers with that error; then Begin fails with core.ErrSessionClosed after
	// Close, and with an error IsInFlight recognizes when the id is already in flight on the session (the
	// first request is not disturbed). initialize is never registered: it cannot be cancelled.
	Begin(ss *core.Session, ctx context.Context, msg *jsonrpc.Message, out Sender) (*core.Call, error)
	// Run serves the call Begin returned and builds its response (nil when the client
	// cancelled the request); a transport running requests concurrently calls it on the
	// request's own goroutine.
	Run(c *core.Call) *core.Response
	// RefusedResponse is the answer to a request that Begin refused with err: -32600 "request
	// id … is already in flight" for that error, -32603 for a closed session (or any
	// other error).
	RefusedResponse(id jsonrpc.ID, err error) *core.Response
	// InFlight reports whether a request with this id is in flight on the session.
	InFlight(ss *core.Session, id jsonrpc.ID) bool
	// Send writes an encoded message on the call's own path (how a transport serving
	// subscriptions/listen sends the acknowledgement and the changes).
	Send(c *core.Call, ctx context.Context, msg []byte) error

	// SetHooks installs the hooks connecting a session to state shared with other processes
	// (replacing earlier ones). Call it before the session serves requests.
	SetHooks(ss *core.Session, h SessionHooks)
	// State returns a copy of the session's shared state.
	State(ss *core.Session) core.SessionState
	// Restore replaces the session's shared state with st (another replica changed it).
	Restore(ss *core.Session, st core.SessionState)
	// Deliver hands a message forwarded by another replica to this process's waiters: a client
	// response to the server-to-client request waiting for it, or a notifications/cancelled to
	// the call it names. It reports whether anything here took it, and never forwards again.
	Deliver(ss *core.Session, msg *jsonrpc.Message) bool
	// SendLocal sends msg on this process's own session-level path, never the remote one: how
	// a message another replica routed here for the standalone stream reaches it. It returns
	// core.ErrNoPath when this process has no such path.
	SendLocal(ss *core.Session, ctx context.Context, msg []byte) error

	// Implementation returns the server's name and version.
	Implementation(s *core.Server) core.Implementation
	// Observer returns the server's observer (core.Options.Observer), or nil.
	Observer(s *core.Server) core.Observer
	// ToolParamHeaders returns the arguments of a tool that clients mirror into Mcp-Param-*
	// headers, and whether the tool exists.
	ToolParamHeaders(s *core.Server, tool string) ([]ParamHeader, bool)
	// MatchResource tells how resources/read would resolve uri: the exact resource registered
	// under it (uriTemplate ""), or the resource template that matches it with its variables.
	MatchResource(s *core.Server, uri string) (uriTemplate string, vars map[string]string, ok bool)

	// ParseEnvelope validates the 2026-07-28 envelope of a message outside of dispatch (a
	// transport serving subscriptions/listen itself): -32602 naming the missing or invalid
	// keys, -32022 for a version the server does not serve. A non-nil error is always a
	// *jsonrpc.Error.
	ParseEnvelope(m *jsonrpc.Message) (*core.Envelope, error)
	// ParseListenFilter reads the `notifications` filter of a subscriptions/listen request:
	// -32602 when it is missing or not a filter object. Members core does not know that are
	// arrays of strings go to SubscriptionFilter.Extensions, for HonorListen to give to the
	// extensions.
	ParseListenFilter(params []byte) (core.SubscriptionFilter, *jsonrpc.Error)
	// HonorListen returns the part of a subscriptions/listen filter the server delivers to this
	// request: the types its capabilities promise, plus the ids of each extension's member that
	// the extension admits (core.ListenMember.Admit). A member that is not an array of strings
	// is -32602; an extension's refusal is its error.
	HonorListen(s *core.Server, ctx context.Context, env *core.Envelope, f core.SubscriptionFilter) (core.SubscriptionFilter, error)

	// DecodeMessage parses one JSON-RPC message (an object) strictly; a non-nil error is a
	// *jsonrpc.DecodeError.
	DecodeMessage(data []byte) (*jsonrpc.Message, error)
	// DecodeOwned is DecodeMessage for data the caller hands over and never modifies (an HTTP
	// body read for this message alone): the message's raw members (params, result, error) point
	// into data instead of copies of it.
	DecodeOwned(data []byte) (*jsonrpc.Message, error)
	// DecodeBatch parses a JSON array of messages; a non-nil error is a *jsonrpc.DecodeError for
	// the whole array, and each item carries its own message or error.
	DecodeBatch(data []byte) ([]jsonrpc.BatchItem, error)
	// EncodeResponse encodes a result response; result must be valid JSON.
	EncodeResponse(id jsonrpc.ID, result []byte) []byte
	// EncodeError encodes an error response; an invalid id is written as null.
	EncodeError(id jsonrpc.ID, e *jsonrpc.Error) []byte
	// EncodeNotification encodes a notification; nil params are left out.
	EncodeNotification(method string, params any) ([]byte, error)
	// EncodeRequest encodes a request; nil params are left out.
	EncodeRequest(id jsonrpc.ID, method string, params any) ([]byte, error)
	// EncodeMessage returns a decoded message as JSON-RPC again: a response with its result or
	// error, or a request or notification with its params as received.
	EncodeMessage(m *jsonrpc.Message) []byte
	// MetaValue returns the raw value of a key of the message's params._meta, or nil.
	MetaValue(m *jsonrpc.Message, key string) json.RawMessage
	// ClaimsModern reports whether a request claims the 2026-07-28 lifecycle: its
	// params._meta carries a non-null protocol version.
	ClaimsModern(m *jsonrpc.Message) bool
	// UnsupportedVersion is the -32022 error for a protocol version the server does not serve,
	// its data listing the supported ones.
	UnsupportedVersion(requested string) *jsonrpc.Error
	// IDKey is the id as a map key: equal ids (the same number or the same string) have equal
	// keys.
	IDKey(id jsonrpc.ID) jsonrpc.ID
	// Unavailable reports whether e is the error of a backend that is down (core.UnavailableError):
	// HTTP answers it with 503.
	Unavailable(e *jsonrpc.Error) bool

	// Observers combines observers into one (nil ones left out; nil when none is left).
	Observers(obs ...core.Observer) core.Observer
	// WithOperation returns ctx carrying op, the operation of the exchange (the Tracing layer
	// starts it once the message is known).
	WithOperation(ctx context.Context, op *core.Operation) context.Context
	// SetMessage describes the operation from the decoded message (method, target, ids).
	SetMessage(op *core.Operation, msg *jsonrpc.Message)
	// Release ends the operation's transport part: end runs when the core is done with it too.
	Release(op *core.Operation, end func())
	// WithResource returns ctx naming the resource URI the request was authorized for (auth
	// sets it); sealed requestStates are bound to it.
	WithResource(ctx context.Context, uri string) context.Context
	// EncodeResponseMessage returns the response as a JSON-RPC message (in the buffer core wrote
	// the result into, when it can).
	EncodeResponseMessage(r *core.Response) []byte
	// Wants reports whether a stream with this (honored) filter receives the change.
	Wants(f core.SubscriptionFilter, c core.Change) bool
	// HandshakeVersions returns the versions initialize can negotiate, newest first.
	HandshakeVersions() []string
	// ModernVersions returns the versions served through the per-request _meta envelope.
	ModernVersions() []string
	// NewLocalBroadcaster returns the in-process Broadcaster a server uses by default: changes
	// published reach the subscribers of this process, in publication order.
	NewLocalBroadcaster() core.Broadcaster
	// IsInFlight reports whether err is Begin's refusal of a request whose id is already in
	// flight on the session.
	IsInFlight(err error) bool
	// ResourceFrom returns the resource URI recorded in ctx by WithResource, and whether there
	// is one.
	ResourceFrom(ctx context.Context) (string, bool)
}
