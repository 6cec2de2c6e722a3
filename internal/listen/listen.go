// Package listen is the transport-independent part of subscriptions/listen that the kit's
// transports share: the registry of open subscriptions (their cap, the uniqueness of their ids,
// the fan-out of the server's changes, encoded once), the encodings of the acknowledgement, the
// changes and the graceful end, and the serving of listen requests on a channel that carries
// everything (Registry.ServeListen, for stdio and the in-memory client transport).
package listen

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// DefaultMax caps the open subscriptions/listen subscriptions of a Registry
// registry when its max is zero.
const DefaultMax = 1000

// listenQueue is how many change notifications may wait for one slow subscription; one that
// falls further behind is ended (its client listens again and lists again).
const listenQueue = 256

// Why Registry.Open opened nothing.
var (
	// ErrLimit: the registry holds its maximum of subscriptions.
	ErrLimit = errors.New("mcpkit: maximum concurrent subscriptions/listen streams reached")
	// ErrDuplicate: a subscription with the same scope and id is open.
	ErrDuplicate = errors.New("mcpkit: a subscriptions/listen stream with this id is already open")
	// ErrClosed: the registry is closing.
	ErrClosed = errors.New("mcpkit: subscriptions are closing")
)

// Registry is the transport-independent part of subscriptions/listen: the open
// subscriptions of one transport (an HTTP endpoint, a stdio connection), their cap, the
// uniqueness of their ids within a scope, and the fan-out of the server's changes to the
// subscriptions whose filter wants them. Publishing never waits on a client: a change is encoded
// once (EncodedChange) and queued on each matching subscription, whose writer (the transport's,
// one per subscription) takes it and splices in its subscription id; a subscription that falls a
// whole queue behind is marked so its writer can end it.
type Registry struct {
	server *core.Server
	max    int64

	count   atomic.Int64
	mu      sync.RWMutex // guards subs and byKey; publishing holds it for reading
	subs    []*Listener
	byKey   map[listenKey]*Listener
	unsub   func()
	closing chan struct{}
	once    sync.Once
}

type listenKey struct {
	scope string
	id    jsonrpc.ID
}

// Listener is one open subscriptions/listen subscription.
type Listener struct {
	// ID is the listen request's id, which names the subscription; IDJSON is its wire form.
	ID     jsonrpc.ID
	IDJSON []byte
	// Filter is the honored subset of what the request asked for.
	Filter core.SubscriptionFilter
	// Conn is the transport's own state of the subscription, as passed to Open.
	Conn any

	reg   *Registry
	key   listenKey
	index int // in reg.subs, guarded by reg.mu

	mu      sync.Mutex
	pending []EncodedChange
	behind  bool
	wake    chan struct{} // capacity 1: changes are pending, the subscription fell behind, or Nudge
	closed  bool          // guarded by reg.mu
}

// EncodedChange is a change notification as subscriptions/listen sends it, encoded once for every
// subscription that wants it: everything up to the subscription id in _meta, which each
// subscription splices in (AppendTo). The zero EncodedChange appends nothing.
type EncodedChange struct {
	head []byte // shared by every subscription: read only
}

// EncodeChange encodes c for subscriptions/listen (see EncodedChange).
func EncodeChange(c core.Change) EncodedChange {
	return EncodedChange{head: appendChangeHead(make([]byte, 0, 96+len(c.URI)+len(c.Params)), c)}
}

// AppendTo appends the notification for the subscription whose id is idJSON (its wire form).
func (e EncodedChange) AppendTo(b, idJSON []byte) []byte {
	if e.head == nil {
		return b
	}
	b = append(b, e.head...)
	b = append(b, idJSON...)
	return append(b, "}}}"...)
}

// New returns a registry of at most max subscriptions (zero means
// DefaultMax; negative panics) subscribed to the server's broadcaster.
func New(s *core.Server, max int) *Registry {
	switch {
	case max == 0:
		max = DefaultMax
	case max < 0:
		panic("mcpkit: the maximum of subscriptions must not be negative")
	}
	r := &Registry{server: s, max: int64(max), byKey: map[listenKey]*Listener{}, closing: make(chan struct{})}
	r.unsub = s.Broadcaster().Subscribe(r.deliver)
	return r
}

// Max returns the registry's cap.
func (r *Registry) Max() int { return int(r.max) }

// Len returns the number of open subscriptions.
func (r *Registry) Len() int { return int(r.count.Load()) }

// Open registers a subscription for the listen request id within scope (ids are unique per
// scope; "" is one scope like any other), with the filter Server.HonorListen returned.
// It fails with ErrLimit, ErrDuplicate or ErrClosed.
// The caller writes the acknowledgement first, then what Take returns, and calls Close at the
// end.
func (r *Registry) Open(scope string, id jsonrpc.ID, filter core.SubscriptionFilter, conn any) (*Listener, error) {
	// Reserve a slot atomically: concurrent opens never overshoot the cap.
	if r.count.Add(1) > r.max {
		r.count.Add(-1)
		return nil, ErrLimit
	}
	idJSON, _ := id.MarshalJSON()
	sub := &Listener{ID: id, IDJSON: idJSON, Filter: filter, Conn: conn, reg: r,
		key: listenKey{scope: scope, id: transport.Core.IDKey(id)}, wake: make(chan struct{}, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.closing:
		r.count.Add(-1)
		return nil, ErrClosed
	default:
	}
	if _, dup := r.byKey[sub.key]; dup {
		r.count.Add(-1)
		return nil, ErrDuplicate
	}
	r.byKey[sub.key] = sub
	sub.index = len(r.subs)
	r.subs = append(r.subs, sub)
	return sub, nil
}

// Close unregisters the subscription and frees its slot. It is safe to call more than once.
func (sub *Listener) Close() {
	r := sub.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if sub.closed {
		return
	}
	sub.closed = true
	delete(r.byKey, sub.key)
	last := len(r.subs) - 1
	moved := r.subs[last]
	r.subs[sub.index] = moved
	moved.index = sub.index
	r.subs[last] = nil
	r.subs = r.subs[:last]
	r.count.Add(-1)
}

// Close stops receiving changes and starts the graceful end of every subscription: Closing is
// closed, and no subscription opens from then on. each, when not nil, runs for every open
// subscription while no other can open or close (an HTTP transport bounds its writes there).
func (r *Registry) Close(each func(*Listener)) {
	r.once.Do(func() {
		r.unsub()
		r.mu.Lock()
		close(r.closing)
		if each != nil {
			for _, sub := range r.subs {
				each(sub)
			}
		}
		r.mu.Unlock()
	})
}

// Closing is closed when Close was called: each subscription's writer then ends it gracefully.
func (r *Registry) Closing() <-chan struct{} { return r.closing }

// Closed reports whether Close was called.
func (r *Registry) Closed() bool {
	select {
	case <-r.closing:
		return true
	default:
		return false
	}
}

// Each calls f for every open subscription, holding the registry's read lock: f must return
// quickly and never write to a client (a transport's keepalive sweep marks and nudges there).
func (r *Registry) Each(f func(*Listener)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sub := range r.subs {
		f(sub)
	}
}

// deliver queues a change on every subscription whose filter wants it, encoded once for all of
// them. It never blocks on a client: it holds the registry's read lock only to append to each
// queue.
func (r *Registry) deliver(c core.Change) {
	var enc EncodedChange
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sub := range r.subs {
		if transport.Core.Wants(sub.Filter, c) {
			if enc.head == nil {
				enc = EncodeChange(c)
			}
			sub.push(enc)
		}
	}
}

// push queues a change for the subscription's writer. It never blocks.
func (sub *Listener) push(c EncodedChange) {
	sub.mu.Lock()
	switch {
	case sub.behind:
		sub.mu.Unlock()
		return
	case len(sub.pending) >= listenQueue:
		sub.behind = true
		sub.pending = nil
	default:
		sub.pending = append(sub.pending, c)
	}
	sub.mu.Unlock()
	sub.Nudge()
}

// Nudge wakes the subscription's writer (Wake receives) without queueing anything: a transport
// uses it to have the writer do something of its own, such as a keepalive. It never blocks.
func (sub *Listener) Nudge() {
	select {
	case sub.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Wake receives when changes are pending (see Take), the subscription fell behind, or Nudge was
// called.
func (sub *Listener) Wake() <-chan struct{} { return sub.wake }

// Take returns the pending changes, leaving spare (emptied) in their place, and whether the
// subscription fell a whole queue behind (its changes were dropped: end it). The writer appends
// each with AppendTo(b, sub.IDJSON).
func (sub *Listener) Take(spare []EncodedChange) ([]EncodedChange, bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	out := sub.pending
	sub.pending = spare[:0]
	return out, sub.behind
}

// AppendAck appends notifications/subscriptions/acknowledged for the subscription: the
// honored filter, tagged with the subscription id.
func AppendAck(b []byte, sub *Listener) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":`...)
	b = appendFilter(b, &sub.Filter)
	b = append(b, `,"_meta":{"`+metakey.SubscriptionID+`":`...)
	b = append(b, sub.IDJSON...)
	return append(b, "}}}"...)
}

// appendFilter appends the filter as its JSON object, the members that are set only (as
// core.SubscriptionFilter's JSON tags say), without the reflection of a marshaller: the
// acknowledgement is written at the bottom of a deep handler stack.
func appendFilter(b []byte, f *core.SubscriptionFilter) []byte {
	b = append(b, '{')
	n := len(b)
	member := func(name string) {
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
	}
	for _, flag := range [...]struct {
		name string
		on   bool
	}{{"toolsListChanged", f.ToolsListChanged}, {"promptsListChanged", f.PromptsListChanged}, {"resourcesListChanged", f.ResourcesListChanged}} {
		if flag.on {
			member(flag.name)
			b = append(b, "true"...)
		}
	}
	list := func(name string, v []string) {
		if len(v) == 0 {
			return
		}
		member(name)
		b = append(b, '[')
		for i, id := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, id)
		}
		b = append(b, ']')
	}
	list("resourceSubscriptions", f.ResourceSubscriptions)
	for _, name := range slices.Sorted(maps.Keys(f.Extensions)) {
		list(name, f.Extensions[name])
	}
	return append(b, '}')
}

// AppendChange appends a change notification for one subscription, tagged with its id
// (EncodeChange(c).AppendTo(b, idJSON), without the shared encoding).
func AppendChange(b []byte, c core.Change, idJSON []byte) []byte {
	b = appendChangeHead(b, c)
	b = append(b, idJSON...)
	return append(b, "}}}"...)
}

// appendChangeHead appends a change notification up to the subscription id in its _meta. The
// result has no line break (a server-sent event carries it on one data line).
func appendChangeHead(b []byte, c core.Change) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, c.Method)
	b = append(b, `,"params":{`...)
	if len(c.Params) > 0 {
		// An extension's notification: its params as encoded once (an object without _meta).
		if p := bytes.TrimSpace(c.Params); len(p) > 2 && p[0] == '{' && p[len(p)-1] == '}' {
			if bytes.ContainsAny(p, "\r\n") {
				if v := jsontext.Value(bytes.Clone(p)); v.Compact() == nil {
					p = v
				}
			}
			b = append(b, p[1:len(p)-1]...)
			b = append(b, ',')
		}
	}
	if c.Method == core.ResourceUpdated {
		b = append(b, `"uri":`...)
		b = appendString(b, c.URI)
		b = append(b, ',')
	}
	return append(b, `"_meta":{"`+metakey.SubscriptionID+`":`...)
}

// ShutdownReason is the reason of the notifications/cancelled that ends a subscription
// when its transport shuts down.
const ShutdownReason = "The server is shutting down"

// AppendCancelled appends the notifications/cancelled a server sends to end a
// subscription (the only request it ever cancels), with the given reason.
func AppendCancelled(b []byte, idJSON []byte, reason string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	b = append(b, idJSON...)
	b = append(b, `,"reason":`...)
	b = appendString(b, reason)
	return append(b, "}}"...)
}

// AppendResult appends the complete result that answers a listen request when its
// subscription ends gracefully: {"resultType":"complete","_meta":{subscriptionId, serverInfo}}
// (info is the encoded Implementation, left out when empty).
func AppendResult(b []byte, idJSON, info []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, idJSON...)
	b = append(b, `,"result":{"resultType":"complete","_meta":{"`+metakey.SubscriptionID+`":`...)
	b = append(b, idJSON...)
	if len(info) > 0 {
		b = append(b, `,"`+metakey.ServerInfo+`":`...)
		b = append(b, info...)
	}
	return append(b, "}}}"...)
}

// listenResult is the result of a listen request served by the core (see handleListen).
type listenResult struct {
	Meta map[string]jsontext.Value `json:"_meta"`
}

// ServeListen serves a subscriptions/listen request on a transport that lets the core do it
// (transport.SessionOptions.Listen; stdio, the in-memory client transport): the acknowledgement, then the changes the filter wants,
// all on the request's own path, each tagged with the subscription id. The client's
// notifications/cancelled for the listen id ends the subscription without an answer; the end of
// the session ends it too; a graceful close of the registry (or a subscription that fell a whole
// queue behind) sends notifications/cancelled for the listen id and then the complete result,
// the subscription's last message.
func (r *Registry) ServeListen(c *core.Call) (any, error) {
	sub, err := r.openListen(c)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	buf := AppendAck(make([]byte, 0, 256), sub)
	if err := transport.Core.Send(c, c.Context(), buf); err != nil {
		return nil, err
	}
	var spare []EncodedChange
	for {
		select {
		case <-sub.reg.closing:
			return endListen(c, sub, buf)
		case <-sub.wake:
			changes, behind := sub.Take(spare)
			if behind {
				return endListen(c, sub, buf)
			}
			var done bool
			if buf, done, err = sendChanges(c, sub, changes, buf); done {
				return nil, err
			}
			if sub.reg.Closed() {
				return endListen(c, sub, buf)
			}
			spare = changes
		case <-c.Context().Done():
			if sub.reg.Closed() {
				return endListen(c, sub, buf) // a shutdown cancels the call too: the graceful end wins
			}
			return nil, context.Cause(c.Context())
		}
	}
}

// openListen checks a subscriptions/listen request and opens its subscription, or says why not
// with the error the client gets.
func (r *Registry) openListen(c *core.Call) (*Listener, error) {
	reg := r
	ctx := c.Context()
	if c.Modern() == nil {
		return nil, jsonrpc.InvalidRequest("Invalid Request: subscriptions/listen requires the 2026-07-28 `_meta` envelope")
	}
	filter, perr := transport.Core.ParseListenFilter(c.Params())
	if perr != nil {
		return nil, perr
	}
	filter, err := transport.Core.HonorListen(r.server, ctx, c.Modern(), filter)
	if err != nil {
		return nil, err
	}
	scope, _ := core.PrincipalFrom(ctx)
	sub, err := reg.Open(scope, c.ID(), filter, nil)
	switch {
	case errors.Is(err, ErrLimit):
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Service unavailable: maximum concurrent subscriptions/listen streams ("+strconv.Itoa(reg.Max())+") reached")
	case errors.Is(err, ErrDuplicate):
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Conflict: a subscriptions/listen stream with this id is already open")
	case err != nil:
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Service unavailable: the server is shutting down")
	}
	return sub, nil
}

// sendChanges sends the taken changes in order, emptying each entry it sent. It stops early
// (done) when the call is cancelled or a send fails, with the error the call ends with, and
// without an error (done false) when the registry is closing: the caller then ends gracefully.
func sendChanges(c *core.Call, sub *Listener, changes []EncodedChange, buf []byte) (_ []byte, done bool, _ error) {
	for i, ch := range changes {
		if sub.reg.Closed() {
			return buf, false, nil
		}
		if c.Context().Err() != nil {
			return buf, true, context.Cause(c.Context()) // cancelled: nothing more is sent
		}
		buf = ch.AppendTo(buf[:0], sub.IDJSON)
		if err := transport.Core.Send(c, c.Context(), buf); err != nil {
			return buf, true, err
		}
		changes[i] = EncodedChange{}
	}
	return buf, false, nil
}

// endListen ends a subscription gracefully: notifications/cancelled for the listen request, then
// the complete result (the subscription's last message).
func endListen(c *core.Call, sub *Listener, buf []byte) (any, error) {
	reason := ShutdownReason
	if !sub.reg.Closed() {
		reason = "The subscription fell too far behind; listen again"
	}
	if err := transport.Core.Send(c, context.WithoutCancel(c.Context()), AppendCancelled(buf[:0], sub.IDJSON, reason)); err != nil {
		return nil, err
	}
	return listenResult{Meta: map[string]jsontext.Value{metakey.SubscriptionID: sub.IDJSON}}, nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(b, s) // on error the string is still written, with U+FFFD
	return out
}
