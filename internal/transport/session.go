package transport

import (
	"context"

	"github.com/mcpkit/mcpkit/core"
)

// Sender delivers encoded JSON-RPC messages to the client along one path: the standalone stream
// of a session, the stream of one request, or stdout. Send must be safe for concurrent use and
// must not be called while holding a lock shared with other sessions. It is the interface literal
// core names unexported, so that both sides are one type. A Sender may also implement
// RefuseRequests() error (it cannot carry server-to-client requests, and says why) and
// CloseStream() error (the request's stream outlives its connection: Call.CloseStream).
type Sender = interface {
	Send(ctx context.Context, msg []byte) error
}

// ListenServer serves subscriptions/listen on a session whose one channel carries everything
// (SessionOptions.Listen): the kit's stdio and in-memory transports give the registry of their
// open subscriptions. ServeListen serves one subscriptions/listen request until its subscription
// ends, sending the acknowledgement and the changes on the request's own path.
type ListenServer = interface {
	ServeListen(c *core.Call) (any, error)
}

// SessionOptions configure a session NewSession starts. The zero value is a process-local legacy
// session with no path to the client yet.
type SessionOptions struct {
	// ID is the transport's session id (the Mcp-Session-Id on HTTP); empty on stdio.
	ID string
	// Out is the session-level path for messages not related to a request (the GET stream on
	// HTTP, stdout on stdio). Nil means there is none yet (the transport sets it later).
	Out Sender
	// Ephemeral marks a session that lives for one request (stateless HTTP, 2026-07-28
	// requests): it gets no broadcasts and cannot carry server-to-client requests.
	Ephemeral bool
	// Modern locks the session to the 2026-07-28 lifecycle from the start (an HTTP request
	// carrying the envelope): every request must carry it, removed methods are -32601.
	Modern bool
	// ChangeNotifications says the transport can deliver list-changed and resource-updated
	// notifications to 2026-07-28 clients (subscriptions/listen). Without it server/discover
	// leaves the listChanged and subscribe flags out.
	ChangeNotifications bool
	// Transport describes how the session's messages arrive, for observers (Network "pipe" on
	// stdio; tcp/http on Streamable HTTP). The zero value reports nothing.
	Transport core.Transport
	// Observer, when set, observes this session's operations instead of Options.Observer (the
	// stdio adapter adds its message log this way).
	Observer core.Observer
	// Listen, when set, lets the core serve subscriptions/listen on the session's request
	// paths, registering each subscription there (a transport whose one channel carries
	// everything, such as stdio). It implies ChangeNotifications. Without it
	// subscriptions/listen is -32601 (an HTTP endpoint serves it itself).
	Listen ListenServer
	// State, when set, restores the shared state of a session another replica created (see
	// core.SessionState): the session then serves requests as if initialize had run here.
	State *core.SessionState
	// Principal is whom the session belongs to (the owner of a legacy HTTP session), for the
	// change notifications Server.FilterChanged aims at one principal. Empty means the principal
	// of the initialize request's context (core.PrincipalFrom), if any.
	Principal string
}

// NewSession starts a session on the server. Close it when the connection ends.
func NewSession(s *core.Server, o SessionOptions) *core.Session {
	return Core.NewSession(s, o.ID, o.Principal, o.Out, o.Ephemeral, o.Modern, o.ChangeNotifications,
		o.Transport, o.Observer, o.Listen, o.State)
}
