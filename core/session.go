package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// sender delivers encoded JSON-RPC messages to the client along one path: the standalone stream
// of a session, the stream of one request, or stdout. Send must be safe for concurrent use and
// must not be called while holding a lock shared with other sessions. It is an interface
// literal type so that internal/transport names the same type (transport.Sender).
type sender = interface {
	Send(ctx context.Context, msg []byte) error
}

// ErrNoPath is returned when a message has no path to the client (no stream is open).
var ErrNoPath = errors.New("mcpkit: no path to the client for this message")

// ErrSessionClosed is returned for work on a session that has ended.
var ErrSessionClosed = errors.New("mcpkit: session closed")

// ErrInputEnded is wrapped by the error of a server-to-client request made or waiting after the
// client's input ended (a stdio client closed its input): no answer can arrive any more.
var ErrInputEnded = errors.New("mcpkit: the client's input has ended")

// errInFlight is the error of a request whose id is already in flight on the session.
var errInFlight = errors.New("mcpkit: request id already in flight")

// era is the lifecycle a connection is locked to.
type era uint8

const (
	eraNone era = iota
	eraLegacy
	eraModern
)

// sessionOptions configure a Session: internal/transport documents each field
// (transport.SessionOptions) and hands them over through kit.NewSession.
type sessionOptions struct {
	ID, Principal                          string
	Out                                    sender
	Ephemeral, Modern, ChangeNotifications bool
	Transport                              Transport
	Observer                               Observer
	Listen                                 listenServer
	State                                  *SessionState
}

// Session is the state of one connection: the negotiated version, the client's info and
// capabilities, the log level, requests in flight and resource subscriptions.
type Session struct {
	server *Server
	id     string

	mu         sync.Mutex
	principal  string
	out        sender
	version    string
	clientInfo *Implementation
	clientCaps ClientCapabilities
	logLevel   LoggingLevel
	one        *Call                // a request in flight; the others are in inflight (see inflightAdd)
	inflight   map[jsonrpc.ID]*Call // made for a second request in flight only
	// lasting holds what only a session that outlives its request uses; an ephemeral session
	// has none unless it needs it (see lastingLocked), so that it and its call fit in 640 bytes.
	lasting             *sessionLasting
	initialized         bool // the flags side by side: the struct stays in its size class
	era                 era
	ephemeral           bool
	changeNotifications bool
	closed              bool
	done                chan struct{} // made by Done when first asked for (nil until then)
	obs                 Observer
	transport           Transport
	// spare is the storage of the first call of an ephemeral session, allocated with it (see
	// ephemeralSession); newCall takes it once.
	spare atomic.Pointer[Call]
}

// sessionLasting is the part of a session an ephemeral one does without: it is allocated with a
// session that outlives its request, and for an ephemeral one only when it needs it (a listen
// request; a subscription, a hook or a server-to-client request, under mu). The pointer never
// changes once set.
type sessionLasting struct {
	listen            listenServer
	hooks             sessionHooks
	subscriptions     map[string]struct{}
	subscriptionBytes int // the lengths of the subscribed URIs, for MaxSubscriptionBytes
	pending           map[jsonrpc.ID]*pendingRequest
	started           time.Time // the session's start, for its end report
	// inputEnded is closed by closeInput (once, endInput) on a session that outlives its
	// request; see Session.inputEnd.
	inputEnded chan struct{}
	endInput   sync.Once
}

// inputEnd returns the channel closed once the client can send nothing more (closeInput): nil,
// never ready, on an ephemeral session, which carries no server-to-client requests. A lasting
// session's part is set when it starts and never changes, so this reads it without the lock.
func (ss *Session) inputEnd() chan struct{} {
	if ss.ephemeral {
		return nil
	}
	return ss.lasting.inputEnded
}

// lastingLocked returns the session's lasting part, allocating it for an ephemeral session that
// did without it so far; ss.mu is held.
func (ss *Session) lastingLocked() *sessionLasting {
	if ss.lasting == nil {
		ss.lasting = new(sessionLasting)
	}
	return ss.lasting
}

// ephemeralSession is an ephemeral session together with the storage of its call: a 2026-07-28
// request makes one allocation for both. The storage is taken by one call at most and never
// handed to another, so a handler or transport may keep the call (or its response) as long as
// it likes.
type ephemeralSession struct {
	ss   Session
	call Call
}

// modernSession is the ephemeral session of a 2026-07-28 request, with the storage of its
// call's envelope and of the clientInfo that names (Call.store) too.
type modernSession struct {
	ephemeralSession
	store envelopeStore
}

// observing reports whether the calls of a session with observer obs (nil for the server's)
// are observed now.
func observing(s *Server, obs Observer) bool {
	if obs == nil {
		obs = s.opts.Observer
	}
	return obs != nil && observerEnabled(obs)
}

// newSession starts a session on the server. Close it when the connection ends.
func (s *Server) newSession(opts sessionOptions) *Session {
	var ss *Session
	if opts.Ephemeral && !observing(s, opts.Observer) {
		var es *ephemeralSession
		if opts.Modern {
			ms := new(modernSession)
			es, ms.call.store = &ms.ephemeralSession, &ms.store
		} else {
			es = new(ephemeralSession)
		}
		ss = &es.ss
		ss.spare.Store(&es.call)
	} else {
		ss = new(Session) // a call observed is allocated with its operation (see newCall)
	}
	ss.server, ss.id, ss.out, ss.principal = s, opts.ID, opts.Out, opts.Principal
	ss.ephemeral, ss.obs, ss.transport = opts.Ephemeral, opts.Observer, opts.Transport
	ss.changeNotifications = opts.ChangeNotifications || opts.Listen != nil
	if !opts.Ephemeral || opts.Listen != nil {
		ss.lasting = &sessionLasting{listen: opts.Listen}
	}
	if opts.Modern {
		ss.era = eraModern
	}
	if opts.State != nil {
		ss.restoreLocked(*opts.State)
	}
	if !ss.ephemeral {
		// Only a session that outlives its request reports its end (with its duration), and
		// only one that can carry server-to-client requests has waits to tell that the input
		// ended: an ephemeral one reads no clock and makes no channel for them.
		ss.lasting.started = time.Now()
		ss.lasting.inputEnded = make(chan struct{})
		s.addSession(ss)
	}
	return ss
}

// ID returns the transport's session id (empty on stdio).
func (ss *Session) ID() string { return ss.id }

// Server returns the server the session belongs to.
func (ss *Session) Server() *Server { return ss.server }

// setOut sets the session-level path (nil removes it).
func (ss *Session) setOut(out sender) {
	ss.mu.Lock()
	ss.out = out
	ss.mu.Unlock()
}

// Principal returns whom the session belongs to: the owner the transport gave, or the
// principal of its initialize request; "" for nobody.
func (ss *Session) Principal() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.principal
}

// Initialized reports whether initialize succeeded on this session.
func (ss *Session) Initialized() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.initialized
}

// ProtocolVersion returns the version negotiated by initialize, or "" before it.
func (ss *Session) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

// ClientInfo returns what the client said about itself in initialize, or nil.
func (ss *Session) ClientInfo() *Implementation {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientInfo
}

// ClientCapabilities returns the capabilities the client declared in initialize, or nil.
func (ss *Session) ClientCapabilities() ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.clientCaps
}

// LogLevel returns the threshold for log messages on this session.
func (ss *Session) LogLevel() LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.logLevel != "" {
		return ss.logLevel
	}
	return ss.server.opts.LogLevel
}

// Done is closed when the session is closed.
func (ss *Session) Done() <-chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.done == nil {
		if ss.closed {
			return closedDone
		}
		// Made when first asked for, as a context makes its Done channel: most sessions that
		// serve one request and end are never waited on.
		ss.done = make(chan struct{})
	}
	return ss.done
}

// closedDone is the Done channel of a session closed before anyone asked for it.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// closeInput tells the session that the client can send nothing more (a stdio client closed its
// input) while the session goes on: requests in flight keep running and their responses are still
// sent, but server-to-client requests waiting for an answer fail at once and new ones are refused,
// both with an error wrapping ErrInputEnded. It is safe to call more than once.
//
// An ephemeral session carries no server-to-client requests (see requestsAllowed): there is
// nothing to tell, and closeInput does nothing.
func (ss *Session) closeInput() {
	if ss.ephemeral {
		return
	}
	l := ss.lasting
	l.endInput.Do(func() { close(l.inputEnded) })
}

// Close ends the session: requests in flight are cancelled and the server forgets the session.
// It is safe to call more than once.
func (ss *Session) Close() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	ss.closed = true
	var calls []*Call
	if ss.one != nil {
		calls = append(calls, ss.one)
	}
	for _, c := range ss.inflight {
		calls = append(calls, c)
	}
	ss.out = nil
	if ss.done != nil {
		close(ss.done)
	}
	ss.mu.Unlock()
	for _, c := range calls {
		c.cancel(ErrSessionClosed)
	}
	if !ss.ephemeral {
		ss.server.removeSession(ss)
	}
	ss.reportEnd()
}

// Subscribed reports whether the session subscribed to uri.
func (ss *Session) Subscribed(uri string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.lasting == nil {
		return false
	}
	_, ok := ss.lasting.subscriptions[uri]
	return ok
}

// Notify sends a notification on the session-level path (another replica's, through a shared
// session store, while this process has none). It returns ErrNoPath when there is none.
func (ss *Session) Notify(ctx context.Context, method string, params any) error {
	ss.mu.Lock()
	out := ss.outLocked()
	ss.mu.Unlock()
	if out == nil {
		return ErrNoPath
	}
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	return out.Send(ctx, msg)
}

// Response is the answer to one request: an encoded result or an error.
type Response struct {
	ID     jsonrpc.ID
	Result []byte
	Error  *jsonrpc.Error

	// wire is the whole message, written with Result in one buffer (Result points into it), as
	// long as ID and Result are the ones it was written with.
	wire   []byte
	wireID jsonrpc.ID
}

// encode returns the response as a JSON-RPC message.
func (r *Response) encode() []byte {
	if r.Error != nil {
		return encodeError(r.ID, r.Error)
	}
	if r.wire != nil && r.ID == r.wireID && len(r.Result) > 0 && len(r.wire) > len(r.Result) &&
		&r.wire[len(r.wire)-1-len(r.Result)] == &r.Result[0] {
		return r.wire
	}
	return encodeResponse(r.ID, r.Result)
}

// serveMessage serves one inbound message on the session. For a request it runs the handler and
// returns the response to send, or nil when the client cancelled the request. Notifications and
// responses from the client return nil. out is the path for messages related to this request
// (progress, log messages, server-to-client requests); nil means the session-level path.
func (ss *Session) serveMessage(ctx context.Context, msg *jsonrpc.Message, out sender) *Response {
	switch {
	case msg.IsResponse():
		if !ss.answer(msg) {
			ss.forward(ctx, msg)
		}
		return nil
	case msg.IsNotification():
		ss.observeNotification(ctx, msg)
		ss.handleNotification(ctx, msg)
		return nil
	}
	call, err := ss.begin(ctx, msg, out)
	if err != nil {
		return refusedResponse(msg.ID, err)
	}
	return call.execute()
}

// refusedResponse is the answer to a request that Begin refused with err: -32600 "request id …
// is already in flight" for errInFlight, -32603 for a closed session (or any other error).
func refusedResponse(id jsonrpc.ID, err error) *Response {
	if errors.Is(err, errInFlight) {
		return &Response{ID: id, Error: jsonrpc.InvalidRequest(fmt.Sprintf("Invalid Request: request id %s is already in flight", id))}
	}
	return &Response{ID: id, Error: jsonrpc.InternalError("Session closed")}
}

// begin registers a request as in flight, so that notifications/cancelled can reach it, and
// returns the call to Run. The checks run in this order: an unknown method (or a notification
// method sent with an id) and a capability the server does not offer give a call whose Run
// answers with that error; then Begin fails with ErrSessionClosed after Close, and with
// errInFlight when the id is already in flight on the session (the first request is not
// disturbed). initialize is never registered: it cannot be cancelled.
func (ss *Session) begin(ctx context.Context, msg *jsonrpc.Message, out sender) (*Call, error) {
	c := newCall(ss, msg, out)
	c.setContext(ctx)
	c.resolve()
	if c.early != nil {
		return c, nil // a call that fails before its handler runs does not hold its id
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		c.cancelFn(ErrSessionClosed)
		return nil, ErrSessionClosed
	}
	if msg.Method == methodInitialize {
		return c, nil // not registered: initialize cannot be cancelled
	}
	if ss.inflightGet(idKey(msg.ID)) != nil {
		c.cancelFn(errInFlight)
		return nil, errInFlight
	}
	ss.inflightAdd(c)
	c.registered = true
	return c, nil
}

func (ss *Session) finish(c *Call) {
	if !c.registered {
		return
	}
	ss.mu.Lock()
	ss.inflightDelete(c)
	ss.mu.Unlock()
}

// inflightGet returns the call in flight with the id key, or nil. ss.mu must be held.
func (ss *Session) inflightGet(key jsonrpc.ID) *Call {
	if ss.one != nil && idKey(ss.one.msg.ID) == key {
		return ss.one
	}
	return ss.inflight[key]
}

// inflightAdd registers c, whose id is not in flight, in ss.one when it is free and in the map
// otherwise: a session serving one request at a time (every ephemeral one) makes no map. ss.mu
// must be held.
func (ss *Session) inflightAdd(c *Call) {
	if ss.one == nil {
		ss.one = c
		return
	}
	if ss.inflight == nil {
		ss.inflight = map[jsonrpc.ID]*Call{}
	}
	ss.inflight[idKey(c.msg.ID)] = c
}

// inflightDelete forgets c if it is still registered under its id. ss.mu must be held.
func (ss *Session) inflightDelete(c *Call) {
	if ss.one == c {
		ss.one = nil
		return
	}
	if key := idKey(c.msg.ID); ss.inflight[key] == c {
		delete(ss.inflight, key)
	}
}

// inFlight reports whether a request with this id is in flight on the session.
func (ss *Session) inFlight(id jsonrpc.ID) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.inflightGet(idKey(id)) != nil
}

func (ss *Session) handleNotification(ctx context.Context, msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/cancelled":
		if !ss.cancelCall(msg) {
			ss.forward(ctx, msg)
		}
	case "notifications/roots/list_changed":
		if f := ss.server.opts.OnRootsListChanged; f != nil {
			f(ctx, ss)
		}
	case "notifications/initialized":
		// Nothing to do: the session is usable as soon as initialize succeeded.
	default:
		// Unknown notifications are ignored, as JSON-RPC requires.
	}
}

// cancelCall cancels the call a notifications/cancelled names, when it runs here. It reports
// whether the message was handled here: a malformed one is, since no replica could use it.
func (ss *Session) cancelCall(msg *jsonrpc.Message) bool {
	var p struct {
		RequestID jsontext.Value `json:"requestId"`
		Reason    string         `json:"reason"`
	}
	if msg.Params == nil || unmarshal(msg.Params, &p) != nil {
		return true
	}
	id, ok := codec.ParseID(p.RequestID)
	if !ok || !id.IsValid() {
		return true
	}
	ss.mu.Lock()
	c := ss.inflightGet(idKey(id))
	ss.mu.Unlock()
	if c == nil {
		return false
	}
	c.cancelByClient(p.Reason)
	return true
}
