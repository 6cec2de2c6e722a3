package core

import "errors"

// streamCloser is implemented by the path of a request whose stream outlives the connection
// carrying it (a resumable SSE stream of the legacy HTTP lifecycle). CloseStream ends that
// connection now but not the stream: whatever the request sends afterwards, its response
// included, is kept for the client, which reconnects and receives it. A transport implements it
// on the sender it gives the request.
type streamCloser interface {
	CloseStream() error
}

// ErrNotResumable is what Call.CloseStream returns when the request's path cannot close its
// connection early without losing messages.
var ErrNotResumable = errors.New("mcpkit: the request's stream is not resumable")

// CloseStream asks the transport to close the connection that carries this request's stream
// while keeping the stream itself, so the client reconnects and picks up what follows (the
// polling pattern of the 2025-11-25 Streamable HTTP transport: a long call need not hold a
// connection open). The handler goes on working; what it sends from then on, and its response,
// reach the client once it has reconnected. It returns ErrNotResumable, and changes nothing,
// when the path cannot do this: resumability off, JSON responses, stdio, 2026-07-28 requests.
func (c *Call) CloseStream() error {
	if sc, ok := c.out.(streamCloser); ok {
		return sc.CloseStream()
	}
	return ErrNotResumable
}
