package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
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
func (e *RequestTimeoutError) Unwrap() error { return NewError(CodeRequestTimeout, e.Error()) }

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

// RequestRefuser is implemented by a Sender that cannot carry server-to-client requests (for
// example a JSON response); RefuseRequests says why.
type RequestRefuser interface {
	RefuseRequests() error
}

// pendingRequest is a server-to-client request waiting for its answer.
type pendingRequest struct {
	answer chan *Message
}

// answer delivers a client's answer to the request of this process waiting for it, and reports
// whether there was one. An answer nobody waits for (unknown id, answered already, another
// session's) is dropped, or forwarded by the caller (SessionHooks.Forward).
func (ss *Session) answer(msg *Message) bool {
	ss.mu.Lock()
	p := ss.pending[msg.ID.Key()]
	delete(ss.pending, msg.ID.Key())
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
func refusedBy(out Sender) error {
	if r, ok := out.(RequestRefuser); ok {
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
	cfg := requestConfig{timeout: ss.server.opts.ServerToClientRequestTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultServerToClientRequestTimeout
	}
	// The wait ends at the configured timeout or at ctx's deadline, whichever comes first; both
	// are reported as the same timeout.
	limit := cfg.timeout
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, max(time.Until(dl), 0))
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s request was cancelled: %w", method, context.Cause(ctx))
	}
	id := StringID(uuid.NewString())
	msg, err := EncodeRequest(id, method, params)
	if err != nil {
		return err
	}
	var answer *Message
	if octx, end := ss.observeOutgoing(ctx, c, id, method); end != nil {
		ctx = octx
		defer func() { end(answer, err) }()
	}
	p := &pendingRequest{answer: make(chan *Message, 1)}
	if isDone(ss.inputEnded) {
		return fmt.Errorf("%w: %w", ErrRequestsRefused, ErrInputEnded)
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return fmt.Errorf("%w: session closed", ErrRequestsRefused)
	}
	if ss.pending == nil {
		ss.pending = map[ID]*pendingRequest{}
	}
	ss.pending[id] = p
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, id)
		ss.mu.Unlock()
	}()

	// send writes on the request's own path (the session-level one for a session request).
	// detached is set for the cancellation of the nested request, which must still go out after
	// ctx (or the originating request) was cancelled.
	send := func(b []byte, detached bool) error {
		if c != nil {
			sctx := c.ctx
			if detached {
				sctx = context.WithoutCancel(sctx)
			}
			return c.sendWith(sctx, b)
		}
		ss.mu.Lock()
		out := ss.outLocked()
		ss.mu.Unlock()
		if out == nil {
			return ErrNoPath
		}
		sctx := ctx
		if detached {
			sctx = context.WithoutCancel(sctx)
		}
		return out.Send(sctx, b)
	}
	if err := send(msg, false); err != nil {
		if errors.Is(err, ErrNoPath) {
			return fmt.Errorf("%w: No active stream for %s request", ErrRequestsRefused, method)
		}
		return err
	}

	var parent <-chan struct{}
	if c != nil {
		parent = c.ctx.Done()
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	cancelNested := func(reason string) {
		params := map[string]any{"requestId": id.Raw(), "reason": reason}
		if b, err := EncodeNotification("notifications/cancelled", params); err == nil {
			_ = send(b, true)
		}
	}
	timedOut := func() error {
		cancelNested("Timed out after " + formatSeconds(limit) + " seconds")
		return &RequestTimeoutError{Method: method, Timeout: limit}
	}
	closed := func() error {
		return fmt.Errorf("session closed while waiting for %s response: %w", method, ErrSessionClosed)
	}
	cancelled := func(cause error) error {
		cancelNested("The originating request was cancelled")
		return fmt.Errorf("%s request was cancelled: %w", method, cause)
	}
	select {
	case answer = <-p.answer:
		return decodeAnswer(method, answer, result)
	case <-timer.C:
		return timedOut()
	case <-ctx.Done():
	case <-parent:
	case <-ss.done:
	case <-ss.inputEnded:
	}
	// Several of the endings may be ready at once; the most specific one wins. An answer that
	// arrived meanwhile is still taken.
	select {
	case answer = <-p.answer:
		return decodeAnswer(method, answer, result)
	default:
	}
	switch {
	case isDone(ss.done):
		return closed() // nobody is left to tell about the nested request
	case isDone(ss.inputEnded):
		return fmt.Errorf("%s request got no answer: %w", method, ErrInputEnded)
	case c != nil && c.Cancelled():
		return cancelled(context.Cause(c.ctx))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return timedOut()
	case ctx.Err() != nil:
		return cancelled(context.Cause(ctx))
	default:
		return cancelled(context.Cause(c.ctx))
	}
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
func decodeAnswer(method string, ans *Message, result any) error {
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

// SamplingMessage is one message of a sampling request or result. Content holds one block, or
// several (2025-11-25 allows an array), in order.
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content ContentList `json:"content"`
	Meta    Meta        `json:"_meta,omitzero"`
}

// ContentList is one or more content blocks. It encodes a single block as an object (the form
// every version understands) and several as an array, and decodes both.
type ContentList []Content

// MarshalJSON encodes one block as an object, several as an array.
func (l ContentList) MarshalJSON() ([]byte, error) {
	if len(l) == 1 {
		return marshal(l[0])
	}
	return marshal([]Content(l))
}

// UnmarshalJSON accepts an object or an array of objects.
func (l *ContentList) UnmarshalJSON(b []byte) error {
	if jsontext.Value(b).Kind() == '[' {
		var many []Content
		if err := unmarshal(b, &many); err != nil {
			return err
		}
		*l = many
		return nil
	}
	var one Content
	if err := unmarshal(b, &one); err != nil {
		return err
	}
	*l = ContentList{one}
	return nil
}

// ModelHint names a model family the server would like.
type ModelHint struct {
	Name string `json:"name,omitzero"`
}

// ModelPreferences guide the client's choice of model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitzero"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitzero"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitzero"`
	IncludeContext   string            `json:"includeContext,omitzero"`
	Temperature      *float64          `json:"temperature,omitzero"`
	StopSequences    []string          `json:"stopSequences,omitzero"`
	Metadata         any               `json:"metadata,omitzero"`
	// Tools and ToolChoice need the client's sampling.tools capability.
	Tools      []Tool `json:"tools,omitzero"`
	ToolChoice any    `json:"toolChoice,omitzero"`
	Meta       Meta   `json:"_meta,omitzero"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role       string      `json:"role"`
	Content    ContentList `json:"content"`
	Model      string      `json:"model"`
	StopReason string      `json:"stopReason,omitzero"`
	Meta       Meta        `json:"_meta,omitzero"`
}

// CreateMessage asks the client to sample a message from its language model (the client must
// have declared sampling, and sampling.tools when Tools or ToolChoice are set).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with SamplingInput and read Call.SamplingResponse on
// the retry.
func (c *Call) CreateMessage(ctx context.Context, p *CreateMessageParams, opts ...RequestOption) (*CreateMessageResult, error) {
	if p == nil {
		return nil, errors.New("mcpkit: CreateMessage needs params")
	}
	if err := c.requestsAllowed("sampling/createMessage"); err != nil {
		return nil, err
	}
	caps := c.ClientCapabilities()
	if !caps.Has("sampling") {
		return nil, &CapabilityError{Capability: "sampling", msg: "Client does not support sampling."}
	}
	if len(p.Tools) > 0 && !caps.Has("sampling", "tools") {
		return nil, &CapabilityError{Capability: "sampling.tools", msg: "Client does not support sampling with tools."}
	}
	if p.ToolChoice != nil && !caps.Has("sampling", "tools") {
		return nil, &CapabilityError{Capability: "sampling.tools", msg: "Client does not support sampling with tool_choice."}
	}
	var res CreateMessageResult
	if err := c.Request(ctx, "sampling/createMessage", p, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// ElicitParams are the params of elicitation/create. Mode "form" (the default) asks for
// structured input described by RequestedSchema; mode "url" sends the user to URL, identified
// by ElicitationID (made up when empty).
type ElicitParams struct {
	Mode    string `json:"mode,omitzero"`
	Message string `json:"message"`
	// Form is the typed form of the schema (FormOf, NewForm); when set it is sent as
	// requestedSchema, which must then be empty. Either way the schema must be a flat object of
	// primitive properties, and an accepted answer is checked against it (defaults applied).
	Form            *Form           `json:"-"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitzero"`
	URL             string          `json:"url,omitzero"`
	ElicitationID   string          `json:"elicitationId,omitzero"`
	Meta            Meta            `json:"_meta,omitzero"`
}

// ElicitResult is the client's answer: Action is "accept", "decline" or "cancel"; Content holds
// the form values on accept.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitzero"`
	Meta    Meta           `json:"_meta,omitzero"`
}

// formElicitation reports whether caps allow form elicitation: elicitation.form, or a bare
// elicitation declaration (which implies form) that does not name url alone.
func formElicitation(caps ClientCapabilities) bool {
	if caps.Has("elicitation", "form") {
		return true
	}
	if !caps.Has("elicitation") {
		return false
	}
	e, _ := caps["elicitation"].(map[string]any)
	return !caps.Has("elicitation", "url") || len(e) == 0
}

// Elicit asks the client for input from the user: a form (needs the elicitation capability) or
// a URL to visit (needs elicitation.url). A form's schema (p.Form, or p.RequestedSchema; none
// asks for a bare decision) must be a flat object of primitive properties, as elicitation
// allows: anything else fails before a request is sent. An accepted answer gets the schema's
// defaults for what the user left out and is validated against it: a wrong answer is an
// *ElicitAnswerError (its Result is the answer as received).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with ElicitInput and read Call.ElicitResponse on the
// retry.
func (c *Call) Elicit(ctx context.Context, p *ElicitParams, opts ...RequestOption) (*ElicitResult, error) {
	if p == nil {
		return nil, errors.New("mcpkit: Elicit needs params")
	}
	if err := c.requestsAllowed("elicitation/create"); err != nil {
		return nil, err
	}
	caps := c.ClientCapabilities()
	q := *p
	var form *Form
	switch q.Mode {
	case "", "form":
		if !formElicitation(caps) {
			return nil, &CapabilityError{Capability: "elicitation", msg: "Client does not support elicitation. The client must declare the `elicitation` capability during initialization."}
		}
		var err error
		if form, err = formFor(&q); err != nil {
			return nil, err
		}
		q.RequestedSchema, q.Form = form.raw, nil
		q.URL, q.ElicitationID = "", "" // members of the url mode only
		if c.ProtocolVersion() >= Version20251125 {
			q.Mode = "form"
		} else {
			q.Mode = "" // older clients know no modes
		}
	case "url":
		if !caps.Has("elicitation", "url") {
			return nil, &CapabilityError{Capability: "elicitation.url", msg: "Client does not support URL mode elicitation. The client must declare the `elicitation.url` capability during initialization."}
		}
		if q.ElicitationID == "" {
			q.ElicitationID = uuid.NewString()
		}
		q.RequestedSchema = nil // a member of the form mode only
	default:
		return nil, fmt.Errorf("mcpkit: unknown elicitation mode %q", q.Mode)
	}
	var res ElicitResult
	if err := c.Request(ctx, "elicitation/create", &q, &res, opts...); err != nil {
		return nil, err
	}
	if form != nil {
		if err := form.checkAnswer(&res); err != nil {
			return nil, err
		}
	}
	return &res, nil
}

// NotifyElicitationComplete tells the client that the URL elicitation with this id finished. It
// is part of the legacy elicitation flow: on an ephemeral session or one locked to the
// 2026-07-28 lifecycle (which dropped this notification) it fails with ErrRequestsRefused.
func (ss *Session) NotifyElicitationComplete(ctx context.Context, elicitationID string) error {
	if err := ss.requestsAllowed(); err != nil {
		return err
	}
	return ss.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": elicitationID})
}

// URLElicitationRequired returns the -32042 error that asks the client to complete URL
// elicitations before retrying (legacy lifecycle only; the 2026-07-28 lifecycle uses
// input_required results instead).
func URLElicitationRequired(elicitations ...ElicitParams) *Error {
	list := make([]ElicitParams, len(elicitations)) // the caller's slice is left alone
	for i, e := range elicitations {
		e.Mode = "url"
		e.RequestedSchema = nil
		if e.ElicitationID == "" {
			e.ElicitationID = uuid.NewString()
		}
		list[i] = e
	}
	return &Error{Code: CodeURLElicitationRequired, Message: "URL elicitation required", Data: map[string]any{"elicitations": list}}
}

// Root is a root the client exposes.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitzero"`
	Meta Meta   `json:"_meta,omitzero"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitzero"`
}

// ListRoots asks the client for its roots (it must have declared roots).
//
// Legacy lifecycle only: on a 2026-07-28 request it fails at once with a *NeedInputError. To
// serve both lifecycles, return NeedInput with RootsInput and read Call.RootsResponse on the
// retry.
func (c *Call) ListRoots(ctx context.Context, opts ...RequestOption) (*ListRootsResult, error) {
	if err := c.requestsAllowed("roots/list"); err != nil {
		return nil, err
	}
	if !c.ClientCapabilities().Has("roots") {
		return nil, &CapabilityError{Capability: "roots", msg: "Client does not support roots."}
	}
	var res ListRootsResult
	if err := c.Request(ctx, "roots/list", nil, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}
