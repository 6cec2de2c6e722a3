package client

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
)

// listenQueue bounds the changes one in-memory listen stream holds for its client; past it a
// change is dropped (they are hints to list again, and the next one carries the same news).
const listenQueue = 64

// InMemoryTransport connects a client straight to a *core.Server in the same process, for unit
// tests of servers: no sockets and no pipes, one server session per client, the messages
// encoded and decoded exactly as on a wire. Requests are served concurrently; closing the client
// closes the session, cancels its requests and waits for their handlers, so no goroutine is left.
// It serves subscriptions/listen itself (2026-07-28), from the server's Broadcaster.
type InMemoryTransport struct {
	Server *core.Server
}

type memLink struct {
	sink    sink
	session *core.Session

	server *core.Server

	mu      sync.Mutex
	closed  bool
	listens map[core.ID]chan struct{}
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

func (t *InMemoryTransport) open(_ context.Context, s sink) (link, error) {
	if t.Server == nil {
		panic("mcpkit/client: InMemoryTransport.Server: must be set")
	}
	l := &memLink{sink: s, server: t.Server, listens: map[core.ID]chan struct{}{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.session = t.Server.NewSession(core.SessionOptions{Out: core.SenderFunc(l.toClient), ChangeNotifications: true})
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
	l.sink.deliver(append([]byte(nil), msg...), core.ID{})
	return nil
}

func (l *memLink) send(ctx context.Context, m *outMsg) error {
	msg, err := core.DecodeMessage(m.body)
	if err != nil {
		var derr *core.DecodeError
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
		stop := l.listenFor(msg)
		l.mu.Unlock()
		if stop != nil {
			close(stop)
			return nil
		}
		l.session.Handle(l.ctx, msg, nil)
		return nil
	}
	l.wg.Add(1)
	if msg.Method == "subscriptions/listen" {
		stop := make(chan struct{})
		l.listens[msg.ID.Key()] = stop
		l.mu.Unlock()
		go l.listen(msg, stop)
		return nil
	}
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		if resp := l.session.Handle(l.ctx, msg, nil); resp != nil {
			_ = l.toClient(l.ctx, resp.Encode())
		}
	}()
	return nil
}

// listenFor returns the stop channel of the listen stream a notifications/cancelled names (and
// forgets it), or nil. l.mu is held.
func (l *memLink) listenFor(msg *core.Message) chan struct{} {
	if msg.Method != "notifications/cancelled" || len(l.listens) == 0 {
		return nil
	}
	var p struct {
		RequestID core.ID `json:"requestId"`
	}
	if jsonv2.Unmarshal(msg.Params, &p) != nil {
		return nil
	}
	stop := l.listens[p.RequestID.Key()]
	delete(l.listens, p.RequestID.Key())
	return stop
}

// listen serves one subscriptions/listen stream: the acknowledgement with the honored filter,
// then every wanted change from the server's broadcaster, until the client cancels it or the
// connection closes; the final result ends it.
func (l *memLink) listen(msg *core.Message, stop chan struct{}) {
	defer l.wg.Done()
	defer func() {
		l.mu.Lock()
		if l.listens[msg.ID.Key()] == stop {
			delete(l.listens, msg.ID.Key())
		}
		l.mu.Unlock()
	}()
	if _, err := core.ParseEnvelope(msg); err != nil {
		_ = l.toClient(l.ctx, core.EncodeError(msg.ID, wireError(err)))
		return
	}
	var p struct {
		Notifications *core.SubscriptionFilter `json:"notifications"`
	}
	if jsonv2.Unmarshal(msg.Params, &p) != nil || p.Notifications == nil {
		_ = l.toClient(l.ctx, core.EncodeError(msg.ID, core.InvalidParams("Invalid params: `notifications` must be an object")))
		return
	}
	honored := l.server.Honor(*p.Notifications)
	sid := json.RawMessage(msg.ID.String())
	meta := map[string]any{core.MetaSubscriptionID: sid}
	frame := func(method string, params map[string]any) {
		params["_meta"] = meta
		if b, err := core.EncodeNotification(method, params); err == nil {
			_ = l.toClient(l.ctx, b)
		}
	}
	frame("notifications/subscriptions/acknowledged", map[string]any{"notifications": honored})
	queue := make(chan core.Change, listenQueue)
	unsubscribe := l.server.Broadcaster().Subscribe(func(c core.Change) {
		if honored.Wants(c) {
			select {
			case queue <- c:
			default:
			}
		}
	})
	defer unsubscribe()
	for {
		select {
		case c := <-queue:
			params := map[string]any{}
			if c.URI != "" {
				params["uri"] = c.URI
			}
			frame(c.Method, params)
		case <-stop:
			final, _ := jsonv2.Marshal(map[string]any{"resultType": "complete", "_meta": meta})
			_ = l.toClient(l.ctx, core.EncodeResponse(msg.ID, final))
			return
		case <-l.ctx.Done():
			return
		}
	}
}

func (l *memLink) negotiated(string)     {}
func (l *memLink) ready(context.Context) {}
func (l *memLink) sessionID() string     { return "" }
func (l *memLink) cancelsByStream() bool { return false }

func (l *memLink) close(context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.session.Close()
	l.cancel()
	l.wg.Wait()
	return nil
}
