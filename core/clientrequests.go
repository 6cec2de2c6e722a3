package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// DefaultServerToClientRequestTimeout bounds a server-to-client request when neither the server
// options nor the call say otherwise.
const DefaultServerToClientRequestTimeout = 10 * time.Minute

// RequestOption adjusts one server-to-client request.
type RequestOption func(*requestConfig)

type requestConfig struct {
	timeout time.Duration
}

// WithTimeout overrides the server's ServerToClientRequestTimeout for one request.
func WithTimeout(d time.Duration) RequestOption {
	return func(c *requestConfig) { c.timeout = d }
}

// RequestTimeoutError reports that the client did not answer a server-to-client request in
// time. The server sent notifications/cancelled for it. When a handler returns it (or wraps it),
// the originating request is answered with -32001.
type RequestTimeoutError struct {
	Method  string
	Timeout time.Duration
}

func (e *RequestTimeoutError) Error() string {
	return fmt.Sprintf("%s request timed out after %s seconds", e.Method, formatSeconds(e.Timeout))
}

// Unwrap exposes the wire error, so an unhandled timeout answers the originating request with
// -32001.
func (e *RequestTimeoutError) Unwrap() error {
	return jsonrpc.NewError(jsonrpc.CodeRequestTimeout, e.Error())
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// ClientError is an error answer from the client to a server-to-client request.
type ClientError struct {
	Method  string
	Code    int64
	Message string
	// Data is the client's error data as sent, or nil.
	Data json.RawMessage
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("Client returned an error for %s request (code: %d): %s", e.Method, e.Code, e.Message)
}

// ErrRequestsRefused is wrapped by the errors of server-to-client requests that cannot be made
// on this path at all: a stateless or JSON-response transport, a 2026-07-28 request, a session
// without a stream.
var ErrRequestsRefused = errors.New("mcpkit: server-to-client requests are not possible here")

// CapabilityError reports that the client did not declare a capability a request needs.
type CapabilityError struct {
	// Capability is the dotted capability path, e.g. "sampling.tools".
	Capability string
	msg        string
}

func (e *CapabilityError) Error() string { return e.msg }

// requestRefuser is implemented by a sender that cannot carry server-to-client requests (for
// example a JSON response); RefuseRequests says why.
type requestRefuser interface {
	RefuseRequests() error
}

// pendingRequest is a server-to-client request waiting for its answer.
type pendingRequest struct {
	answer chan *jsonrpc.Message
}

// answer delivers a client's answer to the request of this process waiting for it, and reports
// whether there was one. An answer nobody waits for (unknown id, answered already, another
// session's) is dropped, or forwarded by the caller (sessionHooks.Forward).
func (ss *Session) answer(msg *jsonrpc.Message) bool {
	ss.mu.Lock()
	var p *pendingRequest
	if l := ss.lasting; l != nil {
		p = l.pending[idKey(msg.ID)]
		delete(l.pending, idKey(msg.ID))
	}
	ss.mu.Unlock()
	if p != nil {
		p.answer <- msg // buffered: never blocks
	}
	return p != nil
}

// Request sends a server-to-client request on the request's own path and waits for the answer,
// decoding its result into result (when not nil). The wait ends with the answer, with ctx or the
// originating request being cancelled (the client is then sent notifications/cancelled for the
// nested request), with the session ending, or after the timeout (ServerToClientRequestTimeout,
// WithTimeout, or an earlier ctx deadline), which returns a *RequestTimeoutError. On a
// 2026-07-28 request it fails at once with a *NeedInputError.
func (c *Call) Request(ctx context.Context, method string, params, result any, opts ...RequestOption) error {
	if c.asking() {
		if c.ctx.Err() != nil {
			return fmt.Errorf("%s request was cancelled: %w", method, context.Cause(c.ctx))
		}
		return c.askOne(ctx, method, params, result)
	}
	if err := c.requestsAllowed(method); err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		// The originating request is over (answered, cancelled): its path is gone.
		return fmt.Errorf("%s request was cancelled: %w", method, context.Cause(c.ctx))
	}
	return c.session.request(ctx, c, method, params, result, opts)
}

func (c *Call) requestsAllowed(method string) error {
	if c.asking() {
		return nil // a detached call's requests go to its InputAsker
	}
	if c.modern != nil {
		return &NeedInputError{Method: method}
	}
	if err := c.session.requestsAllowed(); err != nil {
		if errors.Is(err, errModernSession) {
			return &NeedInputError{Method: method}
		}
		return err
	}
	out := c.out
	if out == nil {
		c.session.mu.Lock()
		out = c.session.out
		c.session.mu.Unlock()
	}
	return refusedBy(out)
}

// refusedBy asks a path that cannot carry requests why not.
func refusedBy(out sender) error {
	if r, ok := out.(requestRefuser); ok {
		if err := r.RefuseRequests(); err != nil {
			if !errors.Is(err, ErrRequestsRefused) {
				err = fmt.Errorf("%w: %w", ErrRequestsRefused, err)
			}
			return err
		}
	}
	return nil
}

// requestsAllowed refuses requests on sessions that cannot carry them: ephemeral ones and those
// locked to the 2026-07-28 lifecycle (which has no server-to-client requests at all).
func (ss *Session) requestsAllowed() error {
	if ss.ephemeral {
		return fmt.Errorf("%w: Stateless mode does not support server-to-client requests", ErrRequestsRefused)
	}
	ss.mu.Lock()
	modern := ss.era == eraModern
	ss.mu.Unlock()
	if modern {
		return errModernSession
	}
	return nil
}

var errModernSession = fmt.Errorf("%w: Server-initiated requests are not available in the 2026-07-28 lifecycle (SEP-2575)", ErrRequestsRefused)

// NeedInputError is the error of Call.Elicit, Call.CreateMessage, Call.ListRoots, Call.Ping and
// Call.Request on a 2026-07-28 request: that lifecycle has no server-to-client requests (SEP-2575).
// The portable way, which serves both lifecycles from one handler, is to return
// NeedInput(...) with ElicitInput, SamplingInput or RootsInput and read the answers of the retry
// with Call.ElicitResponse, Call.SamplingResponse and Call.RootsResponse. errors.Is(err,
// ErrRequestsRefused) holds for it. A tool handler that returns it unhandled gets -32603 (it is
// logged, not shown to the model).
type NeedInputError struct {
	// Method is the request that could not be sent, e.g. "elicitation/create".
	Method string
}

func (e *NeedInputError) Error() string {
	return "mcpkit: " + e.Method + " cannot be sent on a 2026-07-28 request, which has no server-to-client requests (SEP-2575): return core.NeedInput(...) instead"
}

// Is makes errors.Is(err, ErrRequestsRefused) true.
func (e *NeedInputError) Is(target error) bool { return target == ErrRequestsRefused }

// Ping sends ping to the client on the session-level path (the only request the specification
// allows outside of a request) and waits for the answer.
func (ss *Session) Ping(ctx context.Context, opts ...RequestOption) error {
	if err := ss.requestsAllowed(); err != nil {
		return err
	}
	ss.mu.Lock()
	out := ss.outLocked()
	ss.mu.Unlock()
	if err := refusedBy(out); err != nil {
		return err
	}
	var res map[string]any
	return ss.request(ctx, nil, "ping", nil, &res, opts)
}

// Ping sends ping to the client on the request's own path and waits for the answer. On a
// 2026-07-28 request it fails with a *NeedInputError (that lifecycle has no server-to-client
// requests).
func (c *Call) Ping(ctx context.Context, opts ...RequestOption) error {
	var res map[string]any
	return c.Request(ctx, "ping", nil, &res, opts...)
}

func (ss *Session) request(ctx context.Context, c *Call, method string, params, result any, opts []RequestOption) (err error) {
	limit := ss.requestLimit(ctx, opts)
	if ctx.Err() != nil {
		return fmt.Errorf("%s request was cancelled: %w", method, context.Cause(ctx))
	}
	id := jsonrpc.StringID(uuid.NewString())
	msg, err := encodeRequest(id, method, params)
	if err != nil {
		return err
	}
	var answer *jsonrpc.Message
	if octx, end := ss.observeOutgoing(ctx, c, id, method); end != nil {
		ctx = octx
		defer func() { end(answer, err) }()
	}
	p, err := ss.addPending(id)
	if err != nil {
		return err
	}
	defer func() {
		ss.mu.Lock()
		delete(ss.lasting.pending, id) // addPending made the lasting part
		ss.mu.Unlock()
	}()
	out := outgoing{ss: ss, c: c, ctx: ctx}
	if err := out.send(msg, false); err != nil {
		if errors.Is(err, ErrNoPath) {
			return fmt.Errorf("%w: No active stream for %s request", ErrRequestsRefused, method)
		}
		return err
	}
	w := &awaiting{out: out, id: id, method: method, limit: limit}
	answer, err = w.await(p)
	if answer != nil {
		return decodeAnswer(method, answer, result)
	}
	return err
}

// requestLimit is how long a server-to-client request waits: the configured timeout or ctx's
// deadline, whichever comes first (both are reported as the same timeout).
func (ss *Session) requestLimit(ctx context.Context, opts []RequestOption) time.Duration {
	cfg := requestConfig{timeout: ss.server.opts.ServerToClientRequestTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultServerToClientRequestTimeout
	}
	limit := cfg.timeout
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, max(time.Until(dl), 0))
	}
	return limit
}

// addPending registers the wait for the answer to request id, unless the session can no longer
// take answers.
func (ss *Session) addPending(id jsonrpc.ID) (*pendingRequest, error) {
	p := &pendingRequest{answer: make(chan *jsonrpc.Message, 1)}
	if isDone(ss.inputEnd()) {
		return nil, fmt.Errorf("%w: %w", ErrRequestsRefused, ErrInputEnded)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil, fmt.Errorf("%w: session closed", ErrRequestsRefused)
	}
	l := ss.lastingLocked()
	if l.pending == nil {
		l.pending = map[jsonrpc.ID]*pendingRequest{}
	}
	l.pending[id] = p
	return p, nil
}

// outgoing is the path a server-to-client request goes out on: the originating request's own
// (c), or the session-level one for a session request (c nil).
type outgoing struct {
	ss  *Session
	c   *Call
	ctx context.Context
}

// send writes b. detached is set for the cancellation of the nested request, which must still go
// out after ctx (or the originating request) was cancelled.
func (o outgoing) send(b []byte, detached bool) error {
	if o.c != nil {
		sctx := o.c.ctx
		if detached {
			sctx = context.WithoutCancel(sctx)
		}
		return o.c.sendWith(sctx, b)
	}
	o.ss.mu.Lock()
	out := o.ss.outLocked()
	o.ss.mu.Unlock()
	if out == nil {
		return ErrNoPath
	}
	sctx := o.ctx
	if detached {
		sctx = context.WithoutCancel(sctx)
	}
	return out.Send(sctx, b)
}

// awaiting is a server-to-client request waiting for its answer.
type awaiting struct {
	out    outgoing
	id     jsonrpc.ID
	method string
	limit  time.Duration
}

// await waits for the answer (returned as it came) or for the end of the wait (the error that
// ends the request: a timeout, a cancellation, the end of the session or of its input).
func (w *awaiting) await(p *pendingRequest) (*jsonrpc.Message, error) {
	ss, c, ctx := w.out.ss, w.out.c, w.out.ctx
	var parent <-chan struct{}
	if c != nil {
		parent = c.ctx.Done()
	}
	done := ss.Done()
	timer := time.NewTimer(w.limit)
	defer timer.Stop()
	select {
	case answer := <-p.answer:
		return answer, nil
	case <-timer.C:
		return nil, w.timedOut()
	case <-ctx.Done():
	case <-parent:
	case <-done:
	case <-ss.inputEnd():
	}
	// Several of the endings may be ready at once; the most specific one wins. An answer that
	// arrived meanwhile is still taken.
	select {
	case answer := <-p.answer:
		return answer, nil
	default:
	}
	switch {
	case isDone(done):
		// Nobody is left to tell about the nested request.
		return nil, fmt.Errorf("session closed while waiting for %s response: %w", w.method, ErrSessionClosed)
	case isDone(ss.inputEnd()):
		return nil, fmt.Errorf("%s request got no answer: %w", w.method, ErrInputEnded)
	case c != nil && c.Cancelled():
		return nil, w.cancelled(context.Cause(c.ctx))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, w.timedOut()
	case ctx.Err() != nil:
		return nil, w.cancelled(context.Cause(ctx))
	default:
		return nil, w.cancelled(context.Cause(c.ctx))
	}
}

// cancelNested tells the client the nested request is over.
func (w *awaiting) cancelNested(reason string) {
	params := map[string]any{"requestId": w.id.Raw(), "reason": reason}
	if b, err := encodeNotification("notifications/cancelled", params); err == nil {
		_ = w.out.send(b, true)
	}
}

func (w *awaiting) timedOut() error {
	w.cancelNested("Timed out after " + formatSeconds(w.limit) + " seconds")
	return &RequestTimeoutError{Method: w.method, Timeout: w.limit}
}

func (w *awaiting) cancelled(cause error) error {
	w.cancelNested("The originating request was cancelled")
	return fmt.Errorf("%s request was cancelled: %w", w.method, cause)
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// decodeAnswer turns the client's answer into the request's outcome: a *ClientError for an
// error answer, else the result decoded into result (when not nil), which must be an object.
func decodeAnswer(method string, ans *jsonrpc.Message, result any) error {
	if ans.Error != nil {
		ce := &ClientError{Method: method, Code: ans.Error.Code, Message: ans.Error.Message}
		if d, ok := ans.Error.Data.(json.RawMessage); ok {
			ce.Data = d
		}
		return ce
	}
	if result == nil {
		return nil
	}
	if !rawObject(ans.Result) {
		return fmt.Errorf("Response validation failed: invalid `result` of %s: not an object", method)
	}
	if err := unmarshal(ans.Result, result); err != nil {
		return fmt.Errorf("Response validation failed: invalid `result` of %s: %w", method, err)
	}
	return nil
}
