package mcphttp

import (
	"context"
	"errors"
	"sync"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/session"
)

// live is a legacy session this process serves: the record the store keeps, the protocol session
// and the endpoint's streams of it. It implements session.Live.
type live struct {
	rec *session.Entry
	cs  *core.Session
	st  *streams
}

func (l *live) Entry() *session.Entry  { return l.rec }
func (l *live) Session() *core.Session { return l.cs }
func (l *live) End()                   { l.rec.End() }

// liveSessions owns the legacy sessions this process serves: it creates them (initialize),
// rebuilds one from a shared store's record when a request for a session another replica
// created lands here, and ends them with their record (DELETE, expiry, the store closing). The
// store keeps the records; nothing else keeps a live session but a shared store, which holds the
// ones this owner hands it (session.Holder).
type liveSessions struct {
	e     *Endpoint
	store session.Store

	mu   sync.Mutex
	live map[string]*live
}

func newLiveSessions(e *Endpoint, store session.Store) *liveSessions {
	return &liveSessions{e: e, store: store, live: map[string]*live{}}
}

// errNotHeld: the store returned a record of a session this process does not serve, and cannot
// take one built from it (it is no session.Holder).
var errNotHeld = errors.New("mcphttp: the store returned a session this process does not serve and cannot hold one")

// build makes the live session of a record: its protocol session (from the record's state, if
// any) and its streams. Its end, which the record's end runs, closes the protocol session and
// ends the streams, and forgets the session here.
func (o *liveSessions) build(rec *session.Entry) *live {
	e := o.e
	cs := transport.NewSession(e.server, transport.SessionOptions{ID: rec.ID, State: rec.State, Transport: sessionTransport, Observer: e.opts.Observer, Principal: rec.Owner})
	l := &live{rec: rec, cs: cs, st: &streams{}}
	if e.res != nil {
		l.st.shared = e.res.shared != nil
	}
	rec.OnClose(func() {
		o.forget(l)
		cs.Close()
		if e.res != nil {
			l.st.endSession(e.res, rec.ID)
		}
	})
	return l
}

// create is the live session of a new record (initialize): stored, handed to a shared store,
// and known here. A failure leaves nothing behind (the session is ended).
func (o *liveSessions) create(ctx context.Context, rec *session.Entry) (*live, error) {
	l := o.build(rec)
	if err := o.store.Add(ctx, rec); err != nil {
		l.End()
		return nil, err
	}
	if h, ok := o.store.(session.Holder); ok {
		if _, err := h.Hold(ctx, l); err != nil {
			o.store.Delete(ctx, rec.ID)
			l.End()
			return nil, err
		}
	}
	o.remember(l)
	return l, nil
}

// Lookup implements session.Lookup for the Endpoint: the store's one lookup (with the checks the
// validator gives), then the live session of this process; on a miss, the session rebuilt from a
// shared store's record and handed to that store.
func (o *liveSessions) Lookup(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (session.Live, error) {
	rec, err := session.Find(ctx, o.store, id, touch, allow)
	if err != nil {
		return nil, err
	}
	if l := o.get(id); l != nil {
		return l, nil
	}
	h, ok := o.store.(session.Holder)
	if !ok || rec.State == nil {
		return nil, errNotHeld
	}
	l := o.build(rec)
	got, err := h.Hold(ctx, l)
	if err != nil {
		l.End()
		return nil, err
	}
	if got != session.Live(l) {
		l.End() // another request of this process built it first
		return got, nil
	}
	o.remember(l)
	return l, nil
}

// Known implements session.Lookup: the record only, neither rebuilt nor renewed.
func (o *liveSessions) Known(ctx context.Context, id string) error {
	_, err := session.Find(ctx, o.store, id, false, nil)
	return err
}

func (o *liveSessions) get(id string) *live {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.live[id]
}

func (o *liveSessions) remember(l *live) {
	o.mu.Lock()
	o.live[l.rec.ID] = l
	o.mu.Unlock()
}

func (o *liveSessions) forget(l *live) {
	o.mu.Lock()
	if o.live[l.rec.ID] == l {
		delete(o.live, l.rec.ID)
	}
	o.mu.Unlock()
}

// liveOf is the endpoint's view of the session the session layer resolved: the live session this
// owner made. A session.Live of another kind (a hand-written session layer's) is served through
// its protocol session, without the endpoint's streams.
func liveOf(s session.Live) *live {
	if l, ok := s.(*live); ok {
		return l
	}
	return &live{rec: s.Entry(), cs: s.Session()}
}
