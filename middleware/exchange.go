package middleware

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/session"
)

// MessageHook is called by the decode layer right after it decoded the request's JSON-RPC
// message, before the next handler runs. It returns the context the rest of the chain uses (the
// given ctx when it has nothing to add); a tracing layer uses it to start its span once the MCP
// method is known. Hooks run on the request's goroutine. A nil MessageHook must not be
// registered.
type MessageHook func(ctx context.Context, m *jsonrpc.Message) context.Context

// Exchange is the record of one HTTP exchange that the layers of this package share through the
// request context: when it started, the body and JSON-RPC message the decode layer read, hooks to
// run once that message is known, the MCP session id and the JSON-RPC error the exchange ended
// with. The outermost layer that needs it creates it; ExchangeFrom finds it.
//
// The message and body are written once, by the decode layer, before the next handler runs; the
// session id and error are guarded by a lock and may be set from any goroutine. The zero Exchange
// is an empty record whose start time is unknown (the zero time); layers only ever use the ones
// they create.
type Exchange struct {
	start time.Time
	msg   *jsonrpc.Message
	body  []byte
	// hook runs the hooks OnMessage registered, in registration order (nil: none). One
	// function instead of a list keeps the record small; a second hook (rare) composes.
	hook MessageHook
	// spanContext is the span the tracing layer started for the message, for the request log
	// (nil: none); it points into the tracing layer's own state, so that the record, made for
	// every request, does not carry its room.
	spanContext *trace.SpanContext

	session session.Live
	// sse is the SSE layer in front of the handler (nil: none), stream the writer Exchange.SSE
	// made with its options.
	sse    *sseLayer
	stream *SSEWriter
	// recoverW is the storage of the writer the Recover layer wraps the response in (in use when
	// its ResponseWriter is set): the record and the writer are one allocation.
	recoverW statusWriter
	// room holds what the session layer asks a shared store to hold for the request (its
	// claim, see session.Claim; the context of the record answers session.ClaimKey with it) and
	// the storage of the answer's event stream (see SSE). It points into the record's own
	// allocation when the request names a session (the session layer claims for no other), and
	// is nil otherwise until the session layer needs a claim (sessionClaim).
	room *sessionRoom

	mu        sync.Mutex
	sessionID string
	rpcErr    *rpcError // nil: none recorded

	// Set before the next handler runs, by the layer named, on the request's goroutine (they sit
	// side by side, so that they share one word).
	//
	// lifecycle: what the request's headers say of its lifecycle, read once (MethodAccept, or
	// the era router without it) and read again from here.
	lifecycle lifecycle
	// acceptOpen: MethodAccept let a POST through whose Accept header lists application/json
	// but not text/event-stream, which only the legacy lifecycle accepts (JSON mode); the era
	// router refuses it when the body sends it to the 2026-07-28 lifecycle.
	acceptOpen bool
	// versionAfterSession: ProtocolVersion left the check of a GET or DELETE to the session
	// layer, which runs it once the session is resolved.
	versionAfterSession bool
}

type exchangeKey struct{}

// exchangeContext is a context carrying an Exchange. The record lives inside the context value,
// and so does the request that carries the context: creating the three costs one allocation.
type exchangeContext struct {
	context.Context
	ex  Exchange
	req http.Request
}

// sessionExchangeContext is an exchangeContext with its sessionRoom, made for a request that
// names a session: the record of any other request is the smaller one.
type sessionExchangeContext struct {
	exchangeContext
	room sessionRoom
}

// sessionRoom is what the record of a request naming a session has room for: the session
// layer's claim, and the stream of the answer (usually an event stream on a session), which SSE
// takes once (then its ResponseWriter is set, and the layer closes it when the handler returns).
type sessionRoom struct {
	claim  session.Claim
	stream SSEWriter
}

// Value returns the Exchange for the package's key and defers to the parent for any other.
func (c *exchangeContext) Value(key any) any {
	switch key.(type) {
	case exchangeKey:
		return &c.ex
	case session.ClaimKey:
		if c.ex.room == nil {
			return (*session.Claim)(nil) // the request claims nothing
		}
		return &c.ex.room.claim
	}
	return c.Context.Value(key)
}

// String describes the context for debugging, like the standard library's contexts.
func (c *exchangeContext) String() string { return "middleware.Exchange context" }

// ExchangeFrom returns the Exchange stored in ctx, or nil when no layer created one.
func ExchangeFrom(ctx context.Context) *Exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*Exchange)
	return ex
}

// ensureExchange returns r and its Exchange, creating the record (and a request carrying it)
// when the context has none yet.
func ensureExchange(r *http.Request) (*http.Request, *Exchange) {
	if ex := ExchangeFrom(r.Context()); ex != nil {
		return r, ex
	}
	var c *exchangeContext
	if len(r.Header[HeaderSessionID]) > 0 {
		sc := &sessionExchangeContext{}
		sc.ex.room = &sc.room
		c = &sc.exchangeContext
	} else {
		c = &exchangeContext{}
	}
	c.Context = r.Context()
	c.ex.start = time.Now()
	c.req = *r.WithContext(c) // inlined, the copy WithContext makes does not leave the stack
	return &c.req, &c.ex
}

// sessionClaim returns the record's claim, making it when the record has none (it was made for
// a request that named no session then).
func (e *Exchange) sessionClaim() *session.Claim {
	if e.room == nil {
		e.room = new(sessionRoom)
	}
	return &e.room.claim
}

// MessageFrom returns the JSON-RPC message the decode layer read from the request body, and
// whether there is one. This is the accessor later layers and handlers use: the body is never
// read a second time.
func MessageFrom(ctx context.Context) (*jsonrpc.Message, bool) {
	if ex := ExchangeFrom(ctx); ex != nil && ex.msg != nil {
		return ex.msg, true
	}
	return nil, false
}

// BodyFrom returns the raw request body the decode layer read, or nil when none was decoded.
// The bytes belong to the exchange: callers must not modify them.
func BodyFrom(ctx context.Context) []byte {
	if ex := ExchangeFrom(ctx); ex != nil {
		return ex.body
	}
	return nil
}

// WithMessage records m and its raw body in the request's Exchange (creating one if needed), runs
// the registered message hooks and returns the request carrying the context they produced. The
// decode layer calls it; an endpoint that decodes a body by other means (or a test) can call it
// to hand later layers the same view. It is meant to be called once per exchange; later calls
// replace the message but do not run the hooks again.
func WithMessage(r *http.Request, m *jsonrpc.Message, body []byte) *http.Request {
	r, ex := ensureExchange(r)
	first := ex.msg == nil
	ex.msg, ex.body = m, body
	if !first || ex.hook == nil {
		return r
	}
	if ctx := ex.hook(r.Context(), m); ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	return r
}

// Start returns when the outermost layer sharing this record saw the request.
func (e *Exchange) Start() time.Time { return e.start }

// Message returns the decoded JSON-RPC message, or nil when none was decoded (yet).
func (e *Exchange) Message() *jsonrpc.Message { return e.msg }

// Body returns the raw request body the decode layer read, or nil. Callers must not modify it.
func (e *Exchange) Body() []byte { return e.body }

// OnMessage registers a hook the decode layer runs once the message is decoded. Hooks run in
// registration order, so an outer layer's hook sees the context as it entered and an inner
// layer's hook sees what the outer hooks added. Register hooks before calling the next handler;
// a hook added after the message was decoded never runs.
func (e *Exchange) OnMessage(h MessageHook) {
	prev := e.hook
	if prev == nil {
		e.hook = h
		return
	}
	e.hook = func(ctx context.Context, m *jsonrpc.Message) context.Context { return h(prev(ctx, m), m) }
}

// SetSessionID records the MCP session id of the exchange (for example once a session validator
// resolved it or initialize created it), for the request log and the tracing layer.
func (e *Exchange) SetSessionID(id string) {
	e.mu.Lock()
	e.sessionID = id
	e.mu.Unlock()
}

// SessionID returns the session id recorded with SetSessionID, or "" when none was.
func (e *Exchange) SessionID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessionID
}

// SetErrorCode records that the exchange answered with a JSON-RPC error of the given code, so the
// tracing layer can report it (as error.type) and mark its span failed. The endpoint calls it
// when its response is an error, including JSON-RPC errors carried by an HTTP 200.
func (e *Exchange) SetErrorCode(code int64) { e.SetError(code, "") }

// SetError is SetErrorCode with the error's message, which the tracing layer uses as the span
// status description. The last call wins.
func (e *Exchange) SetError(code int64, message string) {
	re := &rpcError{code: code, msg: message}
	e.mu.Lock()
	e.rpcErr = re
	e.mu.Unlock()
}

// rpcError is the JSON-RPC error an Exchange records: most exchanges end without one, so it has
// an allocation of its own instead of room in every record.
type rpcError struct {
	code int64
	msg  string
}

// JSONRPCError returns the JSON-RPC error recorded with SetError or SetErrorCode, and whether
// there is one.
func (e *Exchange) JSONRPCError() (code int64, message string, ok bool) {
	e.mu.Lock()
	re := e.rpcErr
	e.mu.Unlock()
	if re == nil {
		return 0, "", false
	}
	return re.code, re.msg, true
}
