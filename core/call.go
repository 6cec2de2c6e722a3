package core

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// ErrCallOver is returned by the notify, progress, log and request calls of a request whose
// handler has already returned.
var ErrCallOver = errors.New("mcpkit: the request is over: nothing more can be sent for it")

// ErrCancelled is the cause of a request context cancelled by the client's notifications/cancelled.
var ErrCancelled = errors.New("mcpkit: request cancelled by the client")

type callKey struct{}

// Call is one request being served: what handlers use to learn about the request and the client,
// and to talk back while they work (progress, log messages, notifications). It is safe for
// concurrent use by the handler's goroutines.
type Call struct {
	session *Session
	msg     *jsonrpc.Message // the request: its id, method and params are the call's
	out     sender

	// handler serves the method; early, when set, is the error that answers the call instead.
	// custom is the MethodHandler of a method a registration or an extension serves (handler
	// is then runCustom).
	handler func(c *Call) (any, error)
	custom  MethodHandler
	early   *jsonrpc.Error

	ctx      context.Context
	vctx     callContext // the storage of ctx
	cancelFn context.CancelCauseFunc

	// The flags share one word: the struct stays in its size class with resp in it (and with a
	// session, in an ephemeral one's). marks holds the ones set from any goroutine (markByClient,
	// markOver).
	marks      atomic.Uint32
	registered bool
	hasState   bool // requestState below was sent

	// modern is the request's 2026-07-28 envelope, nil on the legacy lifecycle.
	modern *Envelope
	// store, when set, is the storage for the envelope and its ClientInfo, allocated with the
	// ephemeral 2026-07-28 session the call is the first call of (when no observer records: an
	// observed call is allocated with its operation instead); a call without it allocates its
	// envelope when it has one.
	store *envelopeStore

	// inputResponses and requestState are what a retry of an input_required result brought
	// (or, on the legacy lifecycle, what the shim collected).
	inputResponses map[string]json.RawMessage
	requestState   string

	// op is the operation an Observer sees for this call (nil when nobody observes); opObs is
	// the observer core started it with (nil when a transport started it); ownOp is the storage
	// for it, allocated with the call when the session has an observer that records (see
	// observedCall).
	op    *Operation
	opObs Observer
	ownOp *Operation

	// meta is params._meta of a message DecodeMessage did not read, read on first use (the
	// decoder's messages hold their own members).
	meta atomic.Pointer[map[string]json.RawMessage]

	// toolReq is what a tools/call handler gets (its storage: no allocation of its own).
	toolReq ToolRequest

	// asker, on a call Detach made, takes its server-to-client requests while it is asking.
	asker InputAsker

	// resp is the storage of the response respond makes: the call and its answer are one
	// allocation. It is never reused (a Call is not pooled), so a transport may keep the
	// response as long as it likes.
	resp Response
}

// observedCall holds a call and the operation core starts for it in one allocation: a call on
// a session without an observer does not carry the operation's storage.
type observedCall struct {
	call Call
	op   Operation
}

func newCall(ss *Session, msg *jsonrpc.Message, out sender) *Call {
	var c *Call
	if ss.activeObserver() != nil {
		oc := new(observedCall)
		c = &oc.call
		c.ownOp = &oc.op
	} else if c = ss.spare.Swap(nil); c == nil {
		c = new(Call)
	}
	c.session, c.msg, c.out = ss, msg, out
	return c
}

// callContext is a call's context: a cancellable context of its own, whose value for callKey is
// the call (what context.WithValue would make, without an allocation of its own).
type callContext struct {
	context.Context
	c *Call
}

func (x *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return x.c
	}
	return x.Context.Value(key)
}

// setContext gives the call its context, derived from parent.
func (c *Call) setContext(parent context.Context) {
	cctx, cancel := context.WithCancelCause(parent)
	c.vctx = callContext{Context: cctx, c: c}
	c.ctx, c.cancelFn = &c.vctx, cancel
}

// CallFromContext returns the call a handler's context belongs to, or nil.
func CallFromContext(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Context returns the request's context: cancelled by notifications/cancelled, by the transport
// (closed stream, ended session, shutdown) and when the handler returns.
func (c *Call) Context() context.Context { return c.ctx }

// Session returns the session the request arrived on.
func (c *Call) Session() *Session { return c.session }

// ID returns the request id.
func (c *Call) ID() jsonrpc.ID { return c.msg.ID }

// Method returns the request's method.
func (c *Call) Method() string { return c.msg.Method }

// Params returns the request's raw params (nil when absent).
func (c *Call) Params() json.RawMessage { return c.msg.Params }

// ProtocolVersion returns the protocol version of the request: the envelope's on a 2026-07-28
// request, the one initialize negotiated otherwise.
func (c *Call) ProtocolVersion() string {
	if c.modern != nil {
		return c.modern.ProtocolVersion
	}
	return c.session.ProtocolVersion()
}

// ClientInfo returns what the client said about itself (in the request's envelope, else at
// initialize), or nil.
func (c *Call) ClientInfo() *Implementation {
	if c.modern != nil {
		return c.modern.ClientInfo
	}
	return c.session.ClientInfo()
}

// ClientCapabilities returns the capabilities the client declared (in the request's envelope,
// else at initialize).
func (c *Call) ClientCapabilities() ClientCapabilities {
	if c.modern != nil {
		return c.modern.ClientCapabilities
	}
	return c.session.ClientCapabilities()
}

// Meta returns the raw value of a key of the request's params._meta, or nil.
func (c *Call) Meta(key string) json.RawMessage {
	if c.msg.Parsed {
		return c.msg.Meta(key)
	}
	m := c.meta.Load()
	if m == nil {
		read := paramsMeta(c.msg.Params)
		c.meta.CompareAndSwap(nil, &read) // a call read at once by two goroutines keeps one
		m = c.meta.Load()
	}
	return (*m)[key]
}

// ProgressToken returns the request's progress token as sent (a JSON string or number), or nil.
func (c *Call) ProgressToken() json.RawMessage {
	t := c.Meta("progressToken")
	if k := jsontext.Value(t).Kind(); k != '"' && k != '0' {
		return nil
	}
	return t
}

// Cancelled reports whether the client cancelled the request.
func (c *Call) Cancelled() bool { return c.marks.Load()&markByClient != 0 }

// The bits of Call.marks.
const (
	markByClient uint32 = 1 << iota // the client cancelled the call
	markOver                        // Run has returned: the request's path takes nothing more
)

// isOver reports whether the call's path takes nothing more (see markOver).
func (c *Call) isOver() bool { return c.marks.Load()&markOver != 0 }

// setOver closes the call's path: what it sends afterwards fails with ErrCallOver.
func (c *Call) setOver() { c.marks.Or(markOver) }

func (c *Call) cancel(cause error) { c.cancelFn(cause) }

func (c *Call) cancelByClient(reason string) {
	c.marks.Or(markByClient)
	c.cancelFn(ErrCancelled)
}

// Notify sends a notification related to this request on its own path (the request's stream).
func (c *Call) Notify(method string, params any) error {
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	return c.send(msg)
}

func (c *Call) send(msg []byte) error { return c.sendWith(c.ctx, msg) }

// sendWith writes msg on the request's own path, or the session-level one when the transport
// gave the request none.
func (c *Call) sendWith(ctx context.Context, msg []byte) error {
	if c.isOver() {
		// The response is on its way: nothing of this request may follow it (a goroutine the
		// handler left behind, reporting progress late).
		return ErrCallOver
	}
	out := c.out
	if out == nil {
		c.session.mu.Lock()
		out = c.session.out
		c.session.mu.Unlock()
	}
	if out == nil {
		return ErrNoPath
	}
	return out.Send(ctx, msg)
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         float64         `json:"total,omitzero"`
	Message       string          `json:"message,omitzero"`
}

// Progress reports progress on the request: done so far, the total when known (zero or less
// for unknown) and an optional message. It does nothing when the request carries no progress
// token.
func (c *Call) Progress(progress, total float64, message string) error {
	token := c.ProgressToken()
	if token == nil {
		return nil
	}
	if total < 0 {
		total = 0
	}
	return c.Notify("notifications/progress", progressParams{ProgressToken: token, Progress: progress, Total: total, Message: message})
}

type logParams struct {
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitzero"`
	Data   any          `json:"data"`
}

// Log sends a log message about this request when the server offers logging and level is at or
// above the threshold: on a 2026-07-28 request the envelope's logLevel (without one nothing is
// ever sent), otherwise the session's (set by logging/setLevel, else Options.LogLevel). It
// reports whether the message was sent.
func (c *Call) Log(level LoggingLevel, logger string, data any) (bool, error) {
	var threshold LoggingLevel
	if c.modern != nil {
		threshold = c.modern.LogLevel
		if threshold == "" {
			return false, nil
		}
	} else {
		threshold = c.session.LogLevel()
	}
	if level.severity() < 0 || level.severity() < threshold.severity() || !c.session.server.supports("logging") {
		return false, nil
	}
	if err := c.Notify("notifications/message", logParams{Level: level, Logger: logger, Data: data}); err != nil {
		return false, err
	}
	return true, nil
}
