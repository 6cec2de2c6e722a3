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
	// pending marks the ids whose live session is being made (built and handed to the store,
	// not known here yet): the channel is closed when it is known, or the attempt failed. A
	// lookup of such an id waits for it rather than finding the store's record without the live
	// session beside it.
	pending map[string]chan struct{}

	waiting func(id string) // tests: a lookup starts waiting for a pending session
}

func newLiveSessions(e *Endpoint, store session.Store) *liveSessions {
	return &liveSessions{e: e, store: store, live: map[string]*live{}, pending: map[string]chan struct{}{}}
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
	h, holder := o.store.(session.Holder)
	if holder {
		// From Add on, the record is found; lookups wait until the session is known here.
		// The id is fresh, so nothing else is pending under it.
		o.begin(rec.ID)
	}
	if err := o.store.Add(ctx, rec); err != nil {
		o.settle(rec.ID, nil)
		l.End()
		return nil, err
	}
	if holder {
		if _, err := h.Hold(ctx, l); err != nil {
			o.settle(rec.ID, nil)
			o.store.Delete(ctx, rec.ID)
			l.End()
			return nil, err
		}
		o.settle(rec.ID, l)
		return l, nil
	}
	o.remember(l)
	return l, nil
}

// Lookup implements session.Lookup for the Endpoint: the store's one lookup (with the checks the
// validator gives), then the live session of this process; on a miss, the session rebuilt from a
// shared store's record and handed to that store (see rebuild: one rebuild per id at a time).
func (o *liveSessions) Lookup(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (session.Live, error) {
	rec, err := session.Find(ctx, o.store, id, touch, allow)
	if err != nil {
		return nil, err
	}
	if l := o.get(id); l != nil {
		return l, nil
	}
	h, ok := o.store.(session.Holder)
	if !ok {
		return nil, errNotHeld
	}
	return o.rebuild(ctx, h, rec)
}

// rebuild is the live session of a record a shared store returned for a session this process
// did not know when it looked: made by one request at a time per id, the others waiting for it
// (each as long as its context allows) and then served the one it made. The wait spans the
// store's Hold, never a lock: lookups of other sessions and hits of this one go on.
func (o *liveSessions) rebuild(ctx context.Context, h session.Holder, rec *session.Entry) (session.Live, error) {
	id := rec.ID
	for {
		o.mu.Lock()
		if l := o.live[id]; l != nil {
			o.mu.Unlock()
			return l, nil
		}
		wait := o.pending[id]
		if wait == nil {
			break // o.mu still held: this request makes it
		}
		o.mu.Unlock()
		if o.waiting != nil {
			o.waiting(id)
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	if rec.State == nil {
		// The store's copy of a session this process neither knows nor is making: nothing to
		// build it from.
		o.mu.Unlock()
		return nil, errNotHeld
	}
	o.pending[id] = make(chan struct{})
	o.mu.Unlock()
	l := o.build(rec)
	got, err := h.Hold(ctx, l)
	if err != nil {
		o.settle(id, nil)
		l.End()
		return nil, err
	}
	if got != session.Live(l) {
		// The store held a session of this id that this process does not know (never
		// remembered, or forgotten): served as it is, and l let go without ending the record
		// when the store returned that session's own.
		o.settle(id, nil)
		if got.Entry() == rec {
			l.cs.Close()
		} else {
			l.End()
		}
		return got, nil
	}
	o.settle(id, l)
	return l, nil
}

// begin marks id pending; the caller settles it.
func (o *liveSessions) begin(id string) {
	o.mu.Lock()
	o.pending[id] = make(chan struct{})
	o.mu.Unlock()
}

// settle ends the pending mark of id, remembering l (nil: the attempt failed) and waking the
// lookups that wait for it.
func (o *liveSessions) settle(id string, l *live) {
	o.mu.Lock()
	wait := o.pending[id]
	delete(o.pending, id)
	if l != nil {
		o.live[id] = l
	}
	o.mu.Unlock()
	if wait != nil {
		close(wait)
	}
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
