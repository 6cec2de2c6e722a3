package client

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
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

// Subscription is an open subscriptions/listen stream (2026-07-28).
type Subscription struct {
	c   *Client
	key string
	id  core.ID
	fn  func(Notification)
	ch  chan Notification

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
// says why. A legacy session has no listen: use Options.OnNotification and Subscribe.
func (c *Client) Listen(ctx context.Context, filter ListenFilter, fn func(Notification)) (*Subscription, error) {
	if !c.modern {
		return nil, fmt.Errorf("%w: subscriptions/listen (legacy sessions get notifications through Options.OnNotification)", ErrUnsupported)
	}
	lctx, stop := context.WithCancel(ctx)
	id := core.IntID(c.nextID.Add(1))
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
func (s *Subscription) deliver(m *core.Message) {
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
