package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ListenFilter is what a subscriptions/listen stream asks for; each kind is opt-in.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
	// TaskIDs asks for notifications/tasks of these tasks (the tasks extension).
	TaskIDs []string `json:"taskIds,omitzero"`
}

// Subscription is an open subscriptions/listen stream (2026-07-28), or its equivalent on a
// legacy session.
type Subscription struct {
	c   *Client
	key string
	id  jsonrpc.ID
	fn  func(Notification)
	ch  chan Notification
	// legacy marks a listen on a legacy session: the session's notifications, filtered here.
	legacy bool

	// Honored is what the server agreed to send (its acknowledgement); kinds it cannot deliver
	// are left out.
	Honored ListenFilter

	acked   chan struct{}
	ackOnce sync.Once
	done    chan struct{}
	once    sync.Once
	err     error
	stop    context.CancelFunc
}

// Listen opens a subscriptions/listen stream (2026-07-28) and returns once the server
// acknowledged it. Notifications go to fn when it is set (on the stream's reading path: fn must
// not block for long), otherwise to the channel of Notifications. The stream stays open until ctx
// ends, Close is called, the client closes, or the server ends it; Done is then closed and Err
// says why.
//
// On a legacy session Listen gives the same API over the session's own notifications: the list
// changes the filter asks for arrive from the session's stream (the GET stream on HTTP, which
// must be open), and each resource of ResourceSubscriptions is subscribed with
// resources/subscribe before Listen returns and unsubscribed when the last listen holding it
// ends. Honored leaves out what the server's capabilities do not offer, the resources it refused
// to subscribe, and TaskIDs (tasks are a 2026-07-28 extension). Notifications a legacy listen
// takes no longer reach Options.OnNotification. If the session expires, the stream carries on on
// the new session (see Options.DisableReconnect), or ends with the error.
func (c *Client) Listen(ctx context.Context, filter ListenFilter, fn func(Notification)) (*Subscription, error) {
	if !c.modern {
		return c.listenLegacy(ctx, filter, fn)
	}
	lctx, stop := context.WithCancel(ctx)
	id := jsonrpc.IntID(c.nextID.Add(1))
	s := &Subscription{c: c, key: id.String(), id: id, fn: fn, acked: make(chan struct{}), done: make(chan struct{}), stop: stop}
	if fn == nil {
		s.ch = make(chan Notification, 64)
	}
	msg, _, err := c.buildRequest(lctx, id, "subscriptions/listen", map[string]any{"notifications": filter}, &callOpts{})
	if err != nil {
		stop()
		return nil, err
	}
	msg.stream = true
	p, err := c.register(id, "", nil, nil)
	if err != nil {
		stop()
		return nil, err
	}
	c.mu.Lock()
	c.listens[s.key] = s
	c.handlers.Add(1)
	c.mu.Unlock()
	go s.run(lctx, msg, p)
	select {
	case <-s.acked:
		return s, nil
	case <-s.done:
		return nil, s.err
	case <-ctx.Done():
		stop()
		<-s.done
		return nil, context.Cause(ctx)
	}
}

// run sends the listen request, then waits for the end of the stream.
func (s *Subscription) run(ctx context.Context, msg *outMsg, p *pendingCall) {
	c := s.c
	defer c.handlers.Done()
	defer func() {
		c.unregister(s.id, "")
		c.mu.Lock()
		delete(c.listens, s.key)
		c.mu.Unlock()
	}()
	// The send reports on sendDone; sendErr is read only after it is closed.
	sendDone := make(chan struct{})
	var sendErr error
	go func() {
		sendErr = c.link.send(ctx, msg)
		close(sendDone)
	}()
	wait := sendDone
	for {
		select {
		case <-wait:
			if sendErr != nil && ctx.Err() == nil {
				s.finish(sendErr)
				return
			}
			wait = nil
			if ctx.Err() != nil {
				s.finish(nil)
				return
			}
		case m, ok := <-p.ch:
			if !ok {
				s.finish(ErrClosed)
			} else if m.Error != nil {
				s.finish(m.Error)
			} else {
				s.finish(nil)
			}
			<-sendDone // the outcome is settled; the send's own result adds nothing
			return
		case <-ctx.Done():
			if !c.link.cancelsByStream() {
				nctx, cancel := context.WithTimeout(c.baseCtx, 5*time.Second)
				_ = c.notify(nctx, "notifications/cancelled", map[string]any{"requestId": s.id, "reason": "listen closed by the client"})
				cancel()
			}
			<-sendDone // the outcome is settled; the send's own result adds nothing
			s.finish(nil)
			return
		}
	}
}

// deliver takes one notification of the stream.
func (s *Subscription) deliver(m *jsonrpc.Message) {
	if m.Method == "notifications/subscriptions/acknowledged" {
		var p struct {
			Notifications ListenFilter `json:"notifications"`
		}
		_ = jsonv2.Unmarshal(m.Params, &p)
		s.ackOnce.Do(func() {
			s.Honored = p.Notifications
			close(s.acked)
		})
		return
	}
	n := Notification{Method: m.Method, Params: append(json.RawMessage(nil), m.Params...)}
	if s.fn != nil {
		s.fn(n)
		return
	}
	select {
	case s.ch <- n:
	case <-s.done:
	}
}

func (s *Subscription) finish(err error) {
	s.once.Do(func() {
		s.err = err
		s.stop()
		close(s.done)
	})
}

// Notifications returns the channel notifications arrive on when Listen got no callback. It is
// never closed; watch Done.
func (s *Subscription) Notifications() <-chan Notification { return s.ch }

// Done is closed when the stream has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err reports why the stream ended: nil when the client ended it or the server closed it
// gracefully.
func (s *Subscription) Err() error {
	<-s.done
	return s.err
}

// Close ends the stream and waits until it is over.
func (s *Subscription) Close() error {
	s.stop()
	<-s.done
	return nil
}

// listenLegacy opens a Listen on a legacy session.
func (c *Client) listenLegacy(ctx context.Context, filter ListenFilter, fn func(Notification)) (*Subscription, error) {
	if err := c.link.notifications(); err != nil {
		return nil, fmt.Errorf("%w: listening on a legacy session: %w", ErrUnsupported, err)
	}
	caps := c.serverCaps
	var honored ListenFilter
	honored.ToolsListChanged = filter.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	honored.PromptsListChanged = filter.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	honored.ResourcesListChanged = filter.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	lctx, stop := context.WithCancel(ctx)
	s := &Subscription{c: c, key: "legacy:" + jsonrpc.IntID(c.nextID.Add(1)).String(), fn: fn, legacy: true,
		acked: make(chan struct{}), done: make(chan struct{}), stop: stop}
	if fn == nil {
		s.ch = make(chan Notification, 64)
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		for _, u := range filter.ResourceSubscriptions {
			if slices.Contains(honored.ResourceSubscriptions, u) {
				continue
			}
			err := c.holdURI(lctx, u)
			var werr *jsonrpc.Error
			switch {
			case err == nil:
				honored.ResourceSubscriptions = append(honored.ResourceSubscriptions, u)
			case errors.As(err, &werr) && ctx.Err() == nil:
				// refused by the server: left out of Honored, as a 2026-07-28 server would
			default:
				c.releaseURIs(honored.ResourceSubscriptions)
				stop()
				return nil, err
			}
		}
	}
	s.Honored = honored
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		stop()
		return nil, ErrClosed
	}
	c.listens[s.key] = s
	c.handlers.Add(1)
	c.mu.Unlock()
	close(s.acked)
	go func() {
		defer c.handlers.Done()
		<-lctx.Done()
		c.mu.Lock()
		delete(c.listens, s.key)
		c.mu.Unlock()
		c.releaseURIs(s.Honored.ResourceSubscriptions)
		s.finish(nil) // after the unsubscribes, so Close returns once they are done; no-op when an error ended it first
	}()
	return s, nil
}

// wants reports whether a legacy listen asked for the notification m.
func (s *Subscription) wants(m *jsonrpc.Message) bool {
	switch m.Method {
	case core.ToolsListChanged:
		return s.Honored.ToolsListChanged
	case core.PromptsListChanged:
		return s.Honored.PromptsListChanged
	case core.ResourcesListChanged:
		return s.Honored.ResourcesListChanged
	case core.ResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		return jsonv2.Unmarshal(m.Params, &p) == nil && slices.Contains(s.Honored.ResourceSubscriptions, p.URI)
	}
	return false
}

// toLegacyListens hands a session notification to the legacy listens that asked for it and
// reports whether any did.
func (c *Client) toLegacyListens(m *jsonrpc.Message) bool {
	c.mu.Lock()
	var subs []*Subscription
	for _, s := range c.listens {
		if s.legacy && s.wants(m) {
			subs = append(subs, s)
		}
	}
	c.mu.Unlock()
	for _, s := range subs {
		s.deliver(m)
	}
	return len(subs) > 0
}

// holdURI takes a hold on a resource subscription for a legacy listen, subscribing on the first.
func (c *Client) holdURI(ctx context.Context, uri string) error {
	c.mu.Lock()
	n := c.uris[uri]
	c.uris[uri] = n + 1
	subscribed := n > 0 || c.explicit[uri]
	c.mu.Unlock()
	if subscribed {
		return nil
	}
	err := c.call(ctx, "resources/subscribe", map[string]any{"uri": uri}, nil, nil)
	if err != nil {
		c.mu.Lock()
		c.dropHold(uri)
		c.mu.Unlock()
	}
	return err
}

// dropHold releases one hold on uri and reports whether it was the last; c.mu is held.
func (c *Client) dropHold(uri string) bool {
	if c.uris[uri] <= 1 {
		delete(c.uris, uri)
		return !c.explicit[uri]
	}
	c.uris[uri]--
	return false
}

// releaseURIs releases a legacy listen's holds, unsubscribing the resources no one else holds.
func (c *Client) releaseURIs(uris []string) {
	for _, u := range uris {
		c.mu.Lock()
		last := c.dropHold(u)
		closed := c.closed
		c.mu.Unlock()
		if last && !closed {
			ctx, cancel := context.WithTimeout(c.baseCtx, 5*time.Second)
			_ = c.call(ctx, "resources/unsubscribe", map[string]any{"uri": u}, nil, nil)
			cancel()
		}
	}
}
