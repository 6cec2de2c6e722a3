package core

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
)

// Observer is the instrumentation seam of the kit: it sees every request and notification a
// server serves, every request it sends to a client, and the end of every session, whatever the
// transport. Package otelmcp implements it with OpenTelemetry spans and metrics; the HTTP
// tracing layer and the stdio adapter both drive the same implementation, so the two transports
// report the same signals.
//
// Core calls an Observer on the goroutine serving the message. Implementations must be safe for
// concurrent use and must not block: they run on the request path.
//
// An Observer may also have a method Enabled() bool, as otelmcp.Observer has, reporting whether
// it records anything at this moment (a no-op or unset provider records nothing). Core asks it
// as each message or outgoing request starts, and while it reports false starts no Operation
// for it: no Operation is filled in, no clock read, and neither StartOperation nor
// EndOperation is called. An operation a transport started (WithOperation) is still completed.
type Observer interface {
	// StartOperation is called when an operation starts: an inbound request before its handler
	// runs, an inbound notification, or (op.Outgoing) a request the server sends to the client.
	// What it returns is the context the operation runs in (handlers get it), so it may carry a
	// span. op stays valid until EndOperation returns.
	StartOperation(ctx context.Context, op *Operation) context.Context
	// EndOperation is called once per StartOperation, with the outcome filled in (Err*, ToolError,
	// Result, End), before the answer is written to the client.
	EndOperation(ctx context.Context, op *Operation)
	// SessionEnded is called once when a session that outlives a request ends (a legacy HTTP
	// session, the process session of stdio).
	SessionEnded(s *SessionReport)
}

// Transport describes how a message reached the server, in the terms of the OpenTelemetry
// network attributes.
type Transport struct {
	// Network is the transport protocol: "tcp", "quic", "pipe" (stdio) or "inproc" (an
	// in-memory connection).
	Network string
	// Protocol is the application protocol under JSON-RPC, "http" for Streamable HTTP; empty on
	// stdio.
	Protocol string
	// ProtocolVersion is the version of Protocol ("1.1", "2"), empty when unknown.
	ProtocolVersion string
}

// Operation describes one operation for an Observer: what was asked (filled in before
// StartOperation) and how it ended (filled in before EndOperation). Only the goroutine serving
// the operation writes it.
type Operation struct {
	// Method is the JSON-RPC method.
	Method string
	// Target is the tool name of tools/call, the prompt name of prompts/get, and the resource URI
	// of resources/read, resources/subscribe, resources/unsubscribe and
	// notifications/resources/updated; empty otherwise.
	Target string
	// RequestID is the JSON-RPC id; the zero ID for a notification.
	RequestID jsonrpc.ID
	// ProtocolVersion is the MCP protocol version of the message: the envelope's on a 2026-07-28
	// request, the negotiated one in a legacy session, or what the transport was told (the
	// MCP-Protocol-Version header).
	ProtocolVersion string
	// Modern is true on the 2026-07-28 lifecycle.
	Modern bool
	// SessionID is the legacy session id (Mcp-Session-Id); empty on stdio and on 2026-07-28
	// requests.
	SessionID string
	// Transport is how the message arrived.
	Transport Transport
	// Outgoing marks a request the server sends to the client (sampling, elicitation, roots,
	// ping): the server is the client of that exchange.
	Outgoing bool
	// TraceParent, TraceState and Baggage are the W3C trace context members of params._meta,
	// empty when absent.
	TraceParent, TraceState, Baggage string
	// Params are the message's raw params (nil when absent). Observers must not keep or change
	// them after EndOperation.
	Params json.RawMessage
	// Start is when the operation started (when the transport received the message).
	Start time.Time

	// End is when the answer was ready.
	End time.Time
	// ErrorCode and ErrorMessage are the JSON-RPC error the operation answered (or, outgoing,
	// received); ErrorCode is 0 when there was none.
	ErrorCode    int64
	ErrorMessage string
	// ErrorType is a short, low-cardinality name for a failure that has no JSON-RPC code:
	// "cancelled" (the client cancelled the request, or a request the server sent was cancelled),
	// "timeout" (a request the server sent got no answer in time), "session_closed", "refused"
	// (the client cannot take requests), or what a transport sets ("panic"). Empty otherwise.
	ErrorType string
	// ToolError is true when a tools/call result has isError: true.
	ToolError bool
	// Cancelled is true when the operation was cancelled and never answered.
	Cancelled bool
	// Result is the encoded result (nil on an error). Observers must not keep or change it after
	// EndOperation.
	Result json.RawMessage

	// An operation a transport started is handed between the transport and core under mu:
	// serving while core serves its request (only the first core dispatch may claim it, so it is
	// never reported for two messages), served once core filled in the outcome, released once
	// the transport is done with it; release is the transport's ending, which core runs when the
	// transport released the operation while core was still serving it.
	mu                       sync.Mutex
	serving, served, settled bool
	release                  func()
}

// claim makes core the one that fills in the outcome of an operation a transport started. It
// fails when another message claimed it or the transport already released it.
func (op *Operation) claim() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.serving || op.served || op.settled {
		return false
	}
	op.serving = true
	return true
}

// complete fills in the outcome of a claimed operation and runs the transport's ending when
// the transport released the operation meanwhile.
func (op *Operation) complete(fill func()) {
	op.mu.Lock()
	fill()
	op.serving, op.served = false, true
	end := op.release
	op.release = nil
	op.mu.Unlock()
	if end != nil {
		end()
	}
}

// settle is called by the transport that started op (and put it in a context with
// WithOperation) when its exchange is over, with the function that completes and ends the
// operation (EndOperation). Release runs end at once, unless core is still serving the
// operation's request (a request that outlives its exchange, as a resumable stream's does): core
// then runs end when the request is over, so that end always sees the final outcome and never
// races with core. end runs once.
func (op *Operation) settle(end func()) {
	op.mu.Lock()
	op.settled = true
	if op.serving {
		op.release = end
		op.mu.Unlock()
		return
	}
	op.mu.Unlock()
	end()
}

// SessionReport describes a session that ended, for Observer.SessionEnded.
type SessionReport struct {
	// ID is the session id (empty on stdio).
	ID string
	// ProtocolVersion is the version the session negotiated, empty if it never initialized.
	ProtocolVersion string
	// Modern is true for a session locked to the 2026-07-28 lifecycle (stdio).
	Modern bool
	// Transport is how the session's messages arrived.
	Transport Transport
	// Start and End bound the session's life in this process.
	Start, End time.Time
}

type operationKey struct{}

// withOperation returns a copy of ctx carrying op, started by a transport that saw the message
// first (the HTTP tracing layer, which times the whole exchange): core then fills in op's outcome
// instead of starting an operation of its own, and the transport calls EndOperation once the
// answer is written.
func withOperation(ctx context.Context, op *Operation) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// operationFrom returns the operation a transport put in ctx with WithOperation, or nil.
func operationFrom(ctx context.Context) *Operation {
	op, _ := ctx.Value(operationKey{}).(*Operation)
	return op
}

// combineObservers returns an Observer that calls each non-nil observer in turn (StartOperation in
// order, each getting the context the previous one returned). It returns nil when none is left,
// and the observer itself when only one is.
func combineObservers(obs ...Observer) Observer {
	var list multiObserver
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

type multiObserver []Observer

func (m multiObserver) StartOperation(ctx context.Context, op *Operation) context.Context {
	for _, o := range m {
		ctx = o.StartOperation(ctx, op)
	}
	return ctx
}

func (m multiObserver) EndOperation(ctx context.Context, op *Operation) {
	for i := len(m) - 1; i >= 0; i-- {
		m[i].EndOperation(ctx, op)
	}
}

// Enabled reports whether one of the observers records anything now: one without an Enabled
// method always may.
func (m multiObserver) Enabled() bool {
	for _, o := range m {
		if observerEnabled(o) {
			return true
		}
	}
	return false
}

func (m multiObserver) SessionEnded(s *SessionReport) {
	for _, o := range m {
		o.SessionEnded(s)
	}
}

// setMessage fills in what op says of msg itself: Method, Target, RequestID, Params, the trace
// context of params._meta and, for a message carrying the 2026-07-28 envelope, Modern and
// ProtocolVersion. A transport that starts operations calls it, then sets what it knows
// (Transport, SessionID, Start, and ProtocolVersion from a header).
func (op *Operation) setMessage(msg *jsonrpc.Message) {
	op.Method = msg.Method
	op.RequestID = msg.ID
	op.Params = json.RawMessage(msg.Params)
	var meta map[string]json.RawMessage
	metaOf := func(key string) string {
		if msg.Parsed {
			return metaString(msg.Meta(key))
		}
		return metaString(meta[key])
	}
	name, uri := msg.Name, msg.URI
	if !msg.Parsed {
		// A message not produced by DecodeMessage: read params once.
		var p struct {
			Name any                        `json:"name"`
			URI  any                        `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if rawObject(msg.Params) && unmarshal(msg.Params, &p) == nil {
			meta = p.Meta
			name, _ = p.Name.(string)
			uri, _ = p.URI.(string)
		}
	}
	op.Target = operationTarget(msg.Method, name, uri)
	op.TraceParent = metaOf("traceparent")
	op.TraceState = metaOf("tracestate")
	op.Baggage = metaOf("baggage")
	if v := metaOf(metakey.ProtocolVersion); v != "" {
		op.Modern, op.ProtocolVersion = true, v
	}
}

// describe fills in what op says of msg, arriving on ss.
func (op *Operation) describe(ss *Session, msg *jsonrpc.Message) {
	op.setMessage(msg)
	op.Transport = ss.transport
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case op.Modern:
	case ss.era == eraModern:
		op.Modern = true
	default:
		op.SessionID = ss.id
		op.ProtocolVersion = ss.version
	}
}

// operationTarget is the Operation.Target of a message of the method with these params.name and
// params.uri.
func operationTarget(method, name, uri string) string {
	switch method {
	case "tools/call", "prompts/get":
		return name
	case "resources/read", "resources/subscribe", "resources/unsubscribe", ResourceUpdated:
		return uri
	}
	return ""
}

// metaString returns the string value of a params._meta member, "" when absent or not a string.
func metaString(v json.RawMessage) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	var s string
	if unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// observer returns the observer of the session: its own, else the server's.
func (ss *Session) observer() Observer {
	if ss.obs != nil {
		return ss.obs
	}
	return ss.server.opts.Observer
}

// activeObserver returns the observer of the session while it records something: nil when
// there is none, or while it reports through Enabled that it records nothing.
func (ss *Session) activeObserver() Observer {
	if obs := ss.observer(); observing(ss.server, obs) {
		return obs
	}
	return nil
}

// observerEnabled reports whether obs records anything now: what its Enabled method says, true
// when it has none.
func observerEnabled(obs Observer) bool {
	e, ok := obs.(interface{ Enabled() bool })
	return !ok || e.Enabled()
}

// startObserving prepares the call's operation before its handler runs: it claims the one a
// transport put in the context, or starts one with the session's observer (core then ends it).
func (c *Call) startObserving() {
	if op := operationFrom(c.ctx); op != nil && op.claim() {
		c.op = op
		return
	}
	obs := c.session.activeObserver()
	if obs == nil {
		return
	}
	c.op = c.ownOp
	if c.op == nil {
		c.op = new(Operation) // the observer came after the call was made
	}
	c.op.describe(c.session, c.msg)
	c.op.Start = time.Now()
	c.opObs = obs
	c.ctx = obs.StartOperation(c.ctx, c.op)
}

// endObserving records the call's outcome and, when core started the operation, ends it.
func (c *Call) endObserving(resp *Response, result any) {
	op := c.op
	switch {
	case op == nil:
		return
	case c.opObs == nil:
		op.complete(func() { c.fillOutcome(resp, result) })
		return
	}
	c.fillOutcome(resp, result)
	c.opObs.EndOperation(c.ctx, op)
}

func (c *Call) fillOutcome(resp *Response, result any) {
	op := c.op
	op.End = time.Now()
	if op.ProtocolVersion == "" && !op.Modern {
		op.ProtocolVersion = c.session.ProtocolVersion() // initialize has just negotiated it
	}
	switch {
	case resp == nil:
		op.Cancelled, op.ErrorType = true, "cancelled"
	case resp.Error != nil:
		op.ErrorCode, op.ErrorMessage = int64(resp.Error.Code), resp.Error.Message
	default:
		op.Result = json.RawMessage(resp.Result)
		switch r := result.(type) {
		case *CallToolResult:
			op.ToolError = r != nil && r.IsError
		case *toolWire:
			op.ToolError = r.res.IsError
		}
	}
}

// observeNotification reports an inbound notification to the session's observer, or fills in
// the operation a transport started for it.
func (ss *Session) observeNotification(ctx context.Context, msg *jsonrpc.Message) {
	if op := operationFrom(ctx); op != nil && op.claim() {
		op.complete(func() { op.End = time.Now() })
		return
	}
	obs := ss.activeObserver()
	if obs == nil {
		return
	}
	op := &Operation{Start: time.Now()}
	op.describe(ss, msg)
	ctx = obs.StartOperation(ctx, op)
	op.End = time.Now()
	obs.EndOperation(ctx, op)
}

// observeOutgoing starts the operation of a server-to-client request; the returned function
// ends it with the request's outcome.
func (ss *Session) observeOutgoing(ctx context.Context, c *Call, id jsonrpc.ID, method string) (context.Context, func(ans *jsonrpc.Message, err error)) {
	obs := ss.activeObserver()
	if obs == nil {
		return ctx, nil
	}
	op := &Operation{Method: method, RequestID: id, Outgoing: true, Transport: ss.transport, Start: time.Now()}
	switch {
	case c != nil && c.modern != nil:
		op.Modern, op.ProtocolVersion = true, c.modern.ProtocolVersion
	default:
		ss.mu.Lock()
		op.SessionID, op.ProtocolVersion = ss.id, ss.version
		ss.mu.Unlock()
	}
	ctx = obs.StartOperation(ctx, op)
	return ctx, func(ans *jsonrpc.Message, err error) {
		op.End = time.Now()
		switch {
		case ans != nil && ans.Error != nil:
			op.ErrorCode, op.ErrorMessage = int64(ans.Error.Code), ans.Error.Message
		case ans != nil:
			op.Result = json.RawMessage(ans.Result)
		case err != nil:
			op.ErrorType, op.ErrorMessage = outgoingErrorType(err), err.Error()
			op.Cancelled = op.ErrorType == "cancelled"
		}
		obs.EndOperation(ctx, op)
	}
}

// outgoingErrorType names the failure of a server-to-client request that got no answer.
func outgoingErrorType(err error) string {
	var timeout *RequestTimeoutError
	switch {
	case errors.As(err, &timeout):
		return "timeout"
	case errors.Is(err, ErrSessionClosed):
		return "session_closed"
	case errors.Is(err, ErrRequestsRefused):
		return "refused"
	}
	return "cancelled"
}

// reportEnd tells the observer that the session ended.
func (ss *Session) reportEnd() {
	obs := ss.observer()
	if obs == nil || ss.ephemeral {
		return
	}
	ss.mu.Lock()
	r := &SessionReport{ID: ss.id, ProtocolVersion: ss.version, Modern: ss.era == eraModern, Transport: ss.transport, Start: ss.lasting.started, End: time.Now()}
	ss.mu.Unlock()
	obs.SessionEnded(r)
}
