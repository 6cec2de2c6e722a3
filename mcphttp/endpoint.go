package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/headerval"
	"github.com/mcpkit/mcpkit/internal/transport"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/session"
)

// requestHeaderDelay is how long the SSE stream of a legacy request may hold its headers back
// waiting for the call's first frame (see middleware.SSEWriter.StartDeferred).
const requestHeaderDelay = 20 * time.Millisecond

// EndpointOptions configure the bare endpoint (the innermost handler of the stack).
type EndpointOptions struct {
	// Observer observes the endpoint's sessions (their operations, when no tracing layer started
	// them, and their end: mcp.server.session.duration). Nil means the server's
	// (core.Options.Observer).
	Observer core.Observer
	// Stateless serves every POST on a fresh session that ends with the request: no
	// Mcp-Session-Id, no GET stream, no DELETE (both 405), no server-to-client requests.
	Stateless bool
	// JSONResponse answers each request with one JSON object instead of an SSE stream. A request
	// then has no path for anything but its response: its progress and log calls deliver nothing
	// and return core.ErrNoPath (a handler may ignore it), and server-to-client requests are
	// refused. The POST Accept header of a legacy request then needs only application/json
	// (a 2026-07-28 request needs both media types whatever this says).
	JSONResponse bool
	// Store holds legacy sessions. Required unless Stateless.
	Store session.Store
	// Resumability turns on resumable request streams (see ResumabilityOptions). The zero value
	// keeps them off. Ignored when JSONResponse is set; NewEndpoint panics when it is enabled
	// with Stateless.
	Resumability ResumabilityOptions
	// MaxSessionsPerCaller caps the sessions one caller (see CallerKey) holds at once, so one
	// client cannot fill the store: past it initialize answers 429, -32603. Zero means
	// DefaultMaxSessionsPerCaller (1000); negative removes the cap. The count is kept by this
	// process unless Callers is set.
	MaxSessionsPerCaller int
	// Callers keeps the counts of MaxSessionsPerCaller and Resumability.MaxCallsPerCaller in a
	// store the replicas share (redisstore.NewCaps), so that a caller's share holds across them:
	// a session counts against its caller while the replica that created it holds it, a
	// resumable call while it runs (one round trip to take the unit and one to give it back, per
	// resumable call). Nil counts them in this process.
	Callers CallerCounter
}

// Endpoint serves the Streamable HTTP transport for one core.Server: legacy POST, GET and DELETE.
// It is the innermost handler of the stack and repeats none of the layers' checks: it expects
// middleware.MethodAccept, Decode, EraRouter, ProtocolVersion, (stateful) SessionValidator and SSE
// in front of it, as New composes them; its streams (request streams, the GET stream) are the SSE
// layer's, with that layer's keepalive and write timeout. A POST without a decoded message is
// answered 500 (the stack lacks Decode), and so is a request it would answer with a stream
// without an SSE layer in front (a GET, a request of a session unless JSONResponse); a request
// naming no session that a stateful endpoint needs one for, 400 "Missing session ID" (the stack
// lacks a session layer).
type Endpoint struct {
	server *core.Server
	opts   EndpointOptions
	res    *resumer // nil: resumability off
	// callers counts the sessions each caller created here (MaxSessionsPerCaller).
	callers *callerCaps

	base   context.Context
	cancel context.CancelFunc
	closed atomic.Bool
	// active counts the requests in the endpoint (enter, leave): an atomic, so that a request
	// takes no lock to be counted. The lock guards idle (the wait of Shutdown) and held.
	active atomic.Int64

	mu   sync.Mutex
	idle chan struct{}
	// held are the ephemeral sessions serving a request right now (see hold); Close ends them.
	held map[*core.Session]struct{}
	// sessions owns the legacy sessions of this process (nil when stateless).
	sessions *liveSessions
}

// NewEndpoint returns the bare endpoint.
func NewEndpoint(s *core.Server, opts EndpointOptions) *Endpoint {
	if !opts.Stateless && opts.Store == nil {
		panic("mcphttp: a stateful endpoint needs EndpointOptions.Store")
	}
	if opts.Stateless && opts.Resumability.Enabled {
		panic("mcphttp: EndpointOptions.Resumability cannot be enabled with Stateless (a stateless endpoint has no session to resume on)")
	}
	e := &Endpoint{server: s, opts: opts, callers: newCallerCaps(opts.MaxSessionsPerCaller, DefaultMaxSessionsPerCaller)}
	e.callers.share(opts.Callers, "sessions|")
	if !opts.Stateless && !opts.JSONResponse {
		if e.res = newResumer(opts.Resumability); e.res != nil {
			e.res.callers.share(opts.Callers, "resumable|")
		}
	}
	e.base, e.cancel = context.WithCancel(context.Background())
	if !opts.Stateless {
		e.sessions = newLiveSessions(e, opts.Store)
	}
	return e
}

// Lookup implements session.Lookup, for the session layer: the one lookup of a request, and the
// live session of this process it names (rebuilt, on a miss, from a shared store's record). The
// endpoint owns the in-process sessions: it creates them (initialize), rebuilds them and ends them
// with their record (DELETE, expiry, the store closing). A stateless endpoint has none
// (ErrNotFound).
func (e *Endpoint) Lookup(ctx context.Context, id string, touch bool, allow func(*session.Entry) bool) (session.Live, error) {
	if e.sessions == nil {
		return nil, session.ErrNotFound
	}
	return e.sessions.Lookup(ctx, id, touch, allow)
}

// msgNotStored answers an initialize whose session the store (or a shared counter) failed to take.
const msgNotStored = "Service unavailable: the session could not be stored"

// Known implements session.Lookup: whether the store has a record of the session, nothing built,
// held or renewed.
func (e *Endpoint) Known(ctx context.Context, id string) error {
	if e.sessions == nil {
		return session.ErrNotFound
	}
	return e.sessions.Known(ctx, id)
}

// ServeHTTP serves one legacy exchange. It reads the request's Exchange once (the decoded
// message, the stream of the SSE layer in front) and counts the request in. It gives the request
// no context of its own: what Close must stop ends by other means. Every session a legacy
// request runs on ends when the endpoint closes (the store's sessions with the store, ephemeral
// ones because the endpoint holds them, see hold), and ending a session cancels its calls;
// streams end with their session, resumable ones with the endpoint's base context.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := middleware.ExchangeFrom(r.Context())
	var id jsonrpc.ID
	if r.Method == http.MethodPost {
		if ex == nil || ex.Message() == nil {
			middleware.RefuseUndecoded(w, r)
			return
		}
		id = ex.Message().ID
	}
	if !e.enter() {
		middleware.RefuseShuttingDown(w, r, id)
		return
	}
	defer e.leave()
	switch r.Method {
	case http.MethodPost:
		e.post(w, r, ex)
	case http.MethodGet:
		e.get(w, r, ex)
	case http.MethodDelete:
		e.delete(w, r)
	default: // MethodAccept in front answers every other method
		middleware.RefuseMethod(w, r, e.opts.Stateless)
	}
}

// hold registers an ephemeral session that serves one request, so that Close ends it (and
// cancels its call). It reports false, and holds nothing, once the endpoint is closed.
func (e *Endpoint) hold(cs *core.Session) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed.Load() {
		return false
	}
	if e.held == nil {
		e.held = make(map[*core.Session]struct{})
	}
	e.held[cs] = struct{}{}
	return true
}

// release forgets a session hold registered and closes it.
func (e *Endpoint) release(cs *core.Session) {
	e.mu.Lock()
	delete(e.held, cs)
	e.mu.Unlock()
	cs.Close()
}

// bind serves next with a context that Close cancels: for a request that outlives no session
// the endpoint holds (a subscriptions/listen stream). The caller counted the request in.
func (e *Endpoint) bind(w http.ResponseWriter, r *http.Request, next func(http.ResponseWriter, *http.Request)) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(e.base, cancel)
	defer stop()
	next(w, r.WithContext(ctx))
}

func (e *Endpoint) post(w http.ResponseWriter, r *http.Request, ex *middleware.Exchange) {
	msg := ex.Message()
	if msg.Method == "initialize" && !e.opts.Stateless {
		e.initialize(w, r, msg)
		return
	}
	var l *live
	s := ex.Session()
	if s == nil {
		s = middleware.SessionFrom(r.Context())
	}
	if s != nil {
		l = liveOf(s)
	}
	var cs *core.Session
	switch {
	case l != nil:
		cs = l.cs
	case e.opts.Stateless || msg.Method == "server/discover":
		// A session for this POST alone: it gets no broadcasts and refuses server-to-client
		// requests.
		cs = transport.NewSession(e.server, transport.SessionOptions{Ephemeral: true, Transport: sessionTransport, Observer: e.opts.Observer})
		if !e.hold(cs) {
			cs.Close()
			middleware.RefuseShuttingDown(w, r, msg.ID)
			return
		}
		defer e.release(cs)
	default:
		// Stateful, but no session layer resolved one: the validator is missing from the stack.
		middleware.RefuseMissingSession(w, r, msg.ID)
		return
	}
	if !msg.IsRequest() {
		transport.Core.Handle(cs, r.Context(), msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var sse *middleware.SSEWriter // the request's stream; none in JSON mode and without a session
	if l != nil && !e.opts.JSONResponse {
		if sse = ex.SSE(w); sse == nil {
			middleware.RefuseNoSSE(w, r, msg.ID)
			return
		}
	}
	if sse != nil && e.res != nil && l.st != nil {
		e.resumableRequest(w, r, l, msg, sse)
		return
	}
	e.request(w, r, cs, msg, sse)
}

// initialize creates a session (stateful mode): the response is always one JSON object, and the
// session id header is set only when initialize succeeded.
func (e *Endpoint) initialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	if !msg.IsRequest() {
		// An initialize without an id gets no answer, so it creates nothing.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := session.NewID()
	rec := &session.Entry{ID: id, Origin: r.Header.Get("Origin")}
	// The session belongs to the principal that opened it (nobody's when there is none).
	rec.Owner, _ = core.PrincipalFrom(r.Context())
	caller := CallerKey(r)
	if ok, err := e.callers.acquire(r.Context(), caller); !ok || err != nil {
		if err != nil { // a shared counter failed, as a failing store would
			middleware.Refuse(w, r, http.StatusServiceUnavailable, msg.ID, jsonrpc.CodeInternalError, msgNotStored)
			return
		}
		refuseCaller(w, r, msg.ID, "sessions", e.callers.max, nil)
		return
	}
	rec.OnClose(func() { e.callers.release(caller) })
	l, err := e.sessions.create(r.Context(), rec)
	if err != nil {
		var full *session.FullError
		switch {
		case errors.As(err, &full):
			middleware.Refuse(w, r, http.StatusServiceUnavailable, msg.ID, jsonrpc.CodeInternalError,
				"Service unavailable: maximum concurrent sessions ("+strconv.Itoa(full.Max)+") reached")
		case errors.Is(err, session.ErrFull):
			middleware.Refuse(w, r, http.StatusServiceUnavailable, msg.ID, jsonrpc.CodeInternalError, "Service unavailable: maximum concurrent sessions reached")
		case errors.Is(err, session.ErrClosed):
			middleware.RefuseShuttingDown(w, r, msg.ID)
		default:
			middleware.Refuse(w, r, http.StatusServiceUnavailable, msg.ID, jsonrpc.CodeInternalError, msgNotStored)
		}
		return
	}
	resp := transport.Core.Handle(l.cs, r.Context(), msg, noPath{})
	if resp == nil || resp.Error != nil {
		e.opts.Store.Delete(r.Context(), id)
	} else {
		w.Header().Set(middleware.HeaderSessionID, id)
		if ex := middleware.ExchangeFrom(r.Context()); ex != nil {
			ex.SetSessionID(id)
		}
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// request serves one request: on its own SSE stream, sse (progress, log messages and
// server-to-client requests of the request ride it, then the response), or as one JSON object
// when sse is nil.
func (e *Endpoint) request(w http.ResponseWriter, r *http.Request, cs *core.Session, msg *jsonrpc.Message, sse *middleware.SSEWriter) {
	if sse == nil {
		call, err := transport.Core.Begin(cs, r.Context(), msg, noPath{})
		if err != nil {
			e.beginFailed(w, r, msg, err)
			return
		}
		resp := transport.Core.Run(call)
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeJSON(w, r, http.StatusOK, resp)
		return
	}
	call, err := transport.Core.Begin(cs, r.Context(), msg, sseSender{sse})
	if err != nil {
		e.beginFailed(w, r, msg, err)
		return
	}
	// The headers wait for the call's first frame, for requestHeaderDelay at most: a long tool
	// call does not leave the client waiting for them, and a quick one answers in one write
	// (headers and response together), as a plain JSON handler does.
	_ = sse.StartDeferred(requestHeaderDelay)
	resp := transport.Core.Run(call)
	if resp == nil {
		return
	}
	recordError(r, resp)
	// The response is the stream's last frame: the writer closes with it, so neither a late
	// notification of the call nor a keepalive comment can follow it.
	_ = sse.WriteFinal(transport.Core.EncodeResponseMessage(resp))
}

func (e *Endpoint) beginFailed(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, err error) {
	if transport.Core.IsInFlight(err) {
		middleware.RefuseInFlight(w, r, msg.ID)
		return
	}
	middleware.RefuseSessionNotFound(w, r, msg.ID)
}

func recordError(r *http.Request, resp *core.Response) {
	if resp.Error == nil {
		return
	}
	if ex := middleware.ExchangeFrom(r.Context()); ex != nil {
		ex.SetError(resp.Error.Code, resp.Error.Message)
	}
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, resp *core.Response) {
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	recordError(r, resp)
	if transport.Core.Unavailable(resp.Error) {
		status = http.StatusServiceUnavailable // as a session store that is down is answered
	}
	writeBody(w, status, transport.Core.EncodeResponseMessage(resp))
}

// writeBody answers with a JSON body: its type and length, the status, and the body in one
// write. The header values are shared by every response (see internal/headerval), so that
// setting them allocates nothing for a body of up to headerval.MaxLength bytes.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = headerval.JSON
	h["Content-Length"] = headerval.Length(len(body))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// sessionOf returns the session a GET or DELETE names, resolved by the session layer; without
// one (no session layer in the stack) it answers 400 "Missing session ID" and returns nil.
func sessionOf(w http.ResponseWriter, r *http.Request) *live {
	s := middleware.SessionFrom(r.Context())
	if s == nil {
		middleware.RefuseMissingSession(w, r, jsonrpc.ID{})
		return nil
	}
	return liveOf(s)
}

func (e *Endpoint) delete(w http.ResponseWriter, r *http.Request) {
	l := sessionOf(w, r)
	if l == nil {
		return
	}
	e.opts.Store.Delete(r.Context(), l.rec.ID)
	writeBody(w, http.StatusOK, []byte(`{"success":true}`))
}

// noPath is the path of a request that cannot carry anything but its response (JSON mode):
// progress and log messages are dropped, server-to-client requests refused.
type noPath struct{}

func (noPath) Send(context.Context, []byte) error { return core.ErrNoPath }

var errJSONMode = fmt.Errorf("%w: JSON response mode does not support server-to-client requests", core.ErrRequestsRefused)

// RefuseRequests tells core why this path carries no server-to-client requests (core looks for
// it on the request's Sender).
func (noPath) RefuseRequests() error { return errJSONMode }

// enter counts a request in, unless the endpoint is closed. The count goes up before closed is
// read: a Shutdown that saw it at zero after Close cannot miss a request that gets in.
func (e *Endpoint) enter() bool {
	e.active.Add(1)
	if e.closed.Load() {
		e.leave()
		return false
	}
	return true
}

// leave counts a request out; the last one out of a closed endpoint wakes Shutdown.
func (e *Endpoint) leave() {
	if e.active.Add(-1) != 0 || !e.closed.Load() {
		return
	}
	e.mu.Lock()
	if e.idle != nil && e.active.Load() == 0 {
		close(e.idle)
		e.idle = nil
	}
	e.mu.Unlock()
}

// Close stops the endpoint at once: new requests get 503, requests in flight are cancelled and
// every stream ends. Sessions in the store end too (stateful mode).
func (e *Endpoint) Close() error {
	e.closed.Store(true)
	e.cancel()
	e.mu.Lock()
	held := make([]*core.Session, 0, len(e.held))
	for cs := range e.held {
		held = append(held, cs)
	}
	e.mu.Unlock()
	for _, cs := range held {
		cs.Close()
	}
	if e.opts.Store != nil {
		return e.opts.Store.Close()
	}
	return nil
}

// Shutdown closes the endpoint and waits until every request has left it, or ctx ends.
func (e *Endpoint) Shutdown(ctx context.Context) error {
	err := e.Close()
	e.mu.Lock()
	if e.active.Load() == 0 {
		e.mu.Unlock()
		return err
	}
	if e.idle == nil {
		e.idle = make(chan struct{})
	}
	idle := e.idle
	e.mu.Unlock()
	select {
	case <-idle:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sessionTransport is the transport of Streamable HTTP sessions, as observers see it.
var sessionTransport = core.Transport{Network: "tcp", Protocol: "http"}
