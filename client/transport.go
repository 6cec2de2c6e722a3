package client

import (
	"context"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// A Transport carries JSON-RPC messages between a client and one server. The kit provides
// HTTPTransport (Streamable HTTP), CommandTransport (stdio to a spawned server), IOTransport
// (stdio over any reader and writer) and InMemoryTransport (a *core.Server in the same process).
type Transport interface {
	open(ctx context.Context, s sink) (link, error)
}

// sink is where a link hands what it receives.
type sink interface {
	// deliver takes one inbound message and reports the id of a response (zero otherwise).
	// stream is the request whose own answer stream carried it (zero for any other path).
	deliver(raw []byte, stream jsonrpc.ID) jsonrpc.ID
	// connLost reports that the connection ended on its own.
	connLost(err error)
	// streamEnded reports that the path for messages outside any request (the standalone GET
	// stream of a legacy HTTP session) closed for good, and why.
	streamEnded(err error)
}

// link is an open transport.
type link interface {
	// send delivers one outbound message. For a request on HTTP it also reads the answer's
	// stream, handing every message to the sink, until the response arrived; ctx ending closes
	// that stream.
	send(ctx context.Context, m *outMsg) error
	// negotiated records the version initialize settled on (legacy), for the transport's headers.
	negotiated(version string)
	// ready is called once the legacy handshake is complete.
	ready(ctx context.Context)
	// sessionID is the transport's session id, if any.
	sessionID() string
	// cancelsByStream reports that closing a 2026-07-28 request's stream cancels it (HTTP), so
	// no notifications/cancelled is needed.
	cancelsByStream() bool
	// close ends the connection.
	close(ctx context.Context) error
	// peer describes the connection for telemetry.
	peer() peerInfo
	// notifications reports why messages outside any request cannot reach the client now (nil
	// when they can).
	notifications() error
}

// restarter is a link whose session can expire: restart leaves it, so that the next initialize
// starts a new one (false once the link is closed), and holds back every message but those
// marked replacing until settled; endSession deletes the current session.
type restarter interface {
	restart() bool
	settled()
	endSession(ctx context.Context) error
}

// peerInfo is what telemetry says about a connection: network.transport, network.protocol.name,
// server.address and server.port (zero values are left out).
type peerInfo struct {
	network  string
	protocol string
	address  string
	port     int
}
