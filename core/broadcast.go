package core

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// Change is a change notification the server publishes: a list changed
// (notifications/tools/list_changed, .../prompts/..., .../resources/...), a resource was
// updated (notifications/resources/updated, with URI), or an extension's notification for
// subscriptions/listen streams (see ListenMember).
type Change struct {
	Method string `json:"method"`
	URI    string `json:"uri,omitzero"`
	// Key and Params are set on an extension's notification: the id a listen filter names it by
	// (a task id) and the notification's params, an object without _meta. Only the
	// subscriptions/listen streams whose filter names Key receive it, never legacy sessions.
	Key    string          `json:"key,omitzero"`
	Params json.RawMessage `json:"params,omitzero"`
	// Principal, when set, aims a list change at one caller (Server.FilterChanged): only the
	// legacy sessions and subscriptions/listen streams of that principal receive it.
	Principal string `json:"principal,omitzero"`
	// Name, when set on a list change, is the entry whose registration caused it (a tool's or a
	// prompt's name, a resource's URI, a template's URI template): a subscriptions/listen stream
	// whose caller may not see that entry (see Visibility) does not receive it, nor does a legacy
	// session whose principal may not (judged by the entry's predicate and Options.Visibility
	// only). A change naming no entry (a removal, a replacement) reaches every one.
	Name string `json:"name,omitzero"`
}

// Change notification methods.
const (
	ToolsListChanged     = "notifications/tools/list_changed"
	PromptsListChanged   = "notifications/prompts/list_changed"
	ResourcesListChanged = "notifications/resources/list_changed"
	ResourceUpdated      = "notifications/resources/updated"
)

// Broadcaster carries change notifications from whoever publishes them to every subscriber: the
// legacy sessions and the subscriptions/listen streams of this process. The default,
// localBroadcaster, is in-process; a shared implementation (for example over Redis pub/sub)
// delivers each change to the subscribers of every replica, so a change published on one
// replica reaches clients connected to any of them, without touching handlers.
type Broadcaster interface {
	// Publish hands a change to every subscriber. It must not block on slow subscribers.
	Publish(ctx context.Context, c Change) error
	// Subscribe registers f to receive every change, until the returned function is called. f
	// must return quickly (queue the work, never write to a client).
	Subscribe(f func(Change)) (unsubscribe func())
}

// localBroadcaster is the in-process Broadcaster: Publish calls every subscriber in turn, in the
// order they subscribed. Publishing takes no lock and allocates nothing: it reads the current
// set of subscribers, which Subscribe and unsubscribe replace as a whole.
type localBroadcaster struct {
	mu   sync.Mutex // serializes Subscribe and unsubscribe
	subs atomic.Pointer[[]*localSub]
}

// localSub is one subscriber; its address identifies it for unsubscribe.
type localSub struct{ f func(Change) }

// newLocalBroadcaster returns an in-process broadcaster.
func newLocalBroadcaster() *localBroadcaster { return &localBroadcaster{} }

// Publish implements Broadcaster.
func (b *localBroadcaster) Publish(_ context.Context, c Change) error {
	if subs := b.subs.Load(); subs != nil {
		for _, s := range *subs {
			s.f(c)
		}
	}
	return nil
}

// Subscribe implements Broadcaster.
func (b *localBroadcaster) Subscribe(f func(Change)) func() {
	sub := &localSub{f: f}
	b.mu.Lock()
	var next []*localSub
	if cur := b.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, sub)
	b.subs.Store(&next)
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			cur := b.subs.Load()
			next := make([]*localSub, 0, len(*cur))
			for _, s := range *cur {
				if s != sub {
					next = append(next, s)
				}
			}
			b.subs.Store(&next)
		})
	}
}

// Broadcaster returns the server's broadcaster (Options.Broadcaster, or the in-process one).
func (s *Server) Broadcaster() Broadcaster { return s.broadcaster }

// publish sends a change through the broadcaster; the server's own subscription delivers it to
// legacy sessions. A failure is logged and returned.
func (s *Server) publish(ctx context.Context, c Change) error {
	err := s.broadcaster.Publish(ctx, c)
	if err != nil {
		s.logError(err)
	}
	return err
}

// deliverToSessions is the server's own subscriber: it passes a change to the legacy sessions
// that want it (initialized sessions for list changes, subscribed ones for resource updates),
// on their session-level path. Each session's path queues the message: nothing here waits on a
// client.
func (s *Server) deliverToSessions(c Change) {
	if c.Key != "" {
		return // an extension's notification goes to the listen streams that name it only
	}
	var params any
	if c.Method == ResourceUpdated {
		params = map[string]string{"uri": c.URI}
	}
	msg, err := encodeNotification(c.Method, params)
	if err != nil {
		return
	}
	// A list change naming a new entry that a predicate or Options.Visibility may hide is
	// judged per session, by its principal (see sessionSees).
	var own Visibility
	var view View
	judge := false
	if c.Method != ResourceUpdated && c.Name != "" {
		var found bool
		own, view, found = s.namedEntry(c)
		judge = found && (own != nil || s.opts.Visibility != nil)
	}
	for _, ss := range s.liveSessions() {
		if c.Principal != "" && ss.Principal() != c.Principal {
			continue
		}
		if c.Method == ResourceUpdated {
			if !ss.Subscribed(c.URI) {
				continue
			}
		} else if !ss.Initialized() || judge && !s.sessionSees(ss, own, view) {
			continue
		}
		ss.mu.Lock()
		out := ss.out
		ss.mu.Unlock()
		if out != nil {
			_ = out.Send(context.Background(), msg)
		}
	}
}

// sessionSees reports whether the owner of a legacy session may see an entry (own is its
// predicate, v its view), as far as a session can tell: it keeps no request context, so the
// entry's predicate and Options.Visibility are asked with a context holding only the session's
// principal (PrincipalFrom), and the filters of a request's context (WithVisibility) do not
// apply.
func (s *Server) sessionSees(ss *Session, own Visibility, v View) bool {
	ss.mu.Lock()
	principal, version := ss.principal, ss.version
	ss.mu.Unlock()
	vw := viewer{ctx: WithPrincipal(context.Background(), principal), server: s.opts.Visibility, version: version}
	return vw.sees(own, &v)
}
