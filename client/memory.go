package client

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/listen"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// InMemoryTransport connects a client straight to a *core.Server in the same process, for unit
// tests of servers: no sockets and no pipes, one server session per client, the messages
// encoded and decoded exactly as on a wire. Requests are served concurrently; closing the client
// closes the session, cancels its requests and waits for their handlers, so no goroutine is left.
// It serves subscriptions/listen (2026-07-28) through the core, as stdio does.
type InMemoryTransport struct {
	Server *core.Server
}

type memLink struct {
	sink    sink
	session *core.Session

	listen *listen.Registry

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

func (t *InMemoryTransport) open(_ context.Context, s sink) (link, error) {
	if t.Server == nil {
		panic("mcpkit/client: InMemoryTransport.Server: must be set")
	}
	l := &memLink{sink: s, listen: listen.New(t.Server, 0)}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.session = transport.NewSession(t.Server, transport.SessionOptions{Out: transport.SenderFunc(l.toClient), Listen: l.listen})
	return l, nil
}

// toClient is the session's path to the client: a copy of every message goes to the sink.
func (l *memLink) toClient(ctx context.Context, msg []byte) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return core.ErrSessionClosed
	}
	l.sink.deliver(append([]byte(nil), msg...), jsonrpc.ID{})
	return nil
}

func (l *memLink) send(ctx context.Context, m *outMsg) error {
	msg, err := transport.Core.DecodeMessage(m.body)
	if err != nil {
		var derr *jsonrpc.DecodeError
		if errors.As(err, &derr) {
			return derr.Err
		}
		return err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if !msg.IsRequest() {
		l.mu.Unlock()
		transport.Core.Handle(l.session, l.ctx, msg, nil)
		return nil
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		if resp := transport.Core.Handle(l.session, l.ctx, msg, nil); resp != nil {
			_ = l.toClient(l.ctx, transport.Core.EncodeResponseMessage(resp))
		}
	}()
	return nil
}

func (l *memLink) negotiated(string)     {}
func (l *memLink) ready(context.Context) {}
func (l *memLink) sessionID() string     { return "" }
func (l *memLink) cancelsByStream() bool { return false }
func (l *memLink) notifications() error  { return nil }
func (l *memLink) peer() peerInfo        { return peerInfo{} }

func (l *memLink) close(context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.listen.Close(nil) // open listen streams end first, gracefully
	l.session.Close()
	l.cancel()
	l.wg.Wait()
	return nil
}
