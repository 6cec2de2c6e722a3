package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/metakey"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// CallOption adjusts one call.
type CallOption func(*callOpts)

type callOpts struct {
	timeout  time.Duration
	progress func(Progress)
	meta     core.Meta
	task     *taskOpts
	// noRecover keeps an expired session from being replaced (the calls that replace it).
	noRecover bool
}

// WithTimeout bounds this call (overriding Options.Timeout); negative means no bound.
func WithTimeout(d time.Duration) CallOption { return func(o *callOpts) { o.timeout = d } }

// WithProgress asks the server for progress notifications of this call and passes them to fn
// (in order, on the transport's reading path: fn must not block for long).
func WithProgress(fn func(Progress)) CallOption { return func(o *callOpts) { o.progress = fn } }

// WithMeta adds members to the request's params._meta (the kit's own envelope keys win).
func WithMeta(m core.Meta) CallOption {
	return func(o *callOpts) {
		if o.meta == nil {
			o.meta = core.Meta{}
		}
		maps.Copy(o.meta, m)
	}
}

func collect(opts []CallOption) *callOpts {
	o := &callOpts{}
	for _, f := range opts {
		f(o)
	}
	return o
}

// outMsg is one outbound message as a link sends it.
type outMsg struct {
	body   []byte
	method string
	id     jsonrpc.ID // valid for requests
	// modern marks a 2026-07-28 request: the link adds the standard headers.
	modern  bool
	version string
	// name is the Mcp-Name value (tool or prompt name, resource URI), "" for none.
	name string
	// params are the Mcp-Param-* headers (name without prefix, encoded value).
	params [][2]string
	// stream is set for listen: the response stream stays open until ctx ends.
	stream bool
	// replacing marks the messages that start a new session in place of an expired one
	// (initialize and what restores the old session's state): other messages wait until that
	// is done, so none reaches the new session before it is restored.
	replacing bool
}

// result kinds of 2026-07-28 results.
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
	resultTask          = "task"
)

// call sends one request and decodes its result into res (a pointer, or *json.RawMessage for the
// raw result). In the 2026-07-28 lifecycle it answers input_required results by itself.
func (c *Client) call(ctx context.Context, method string, params map[string]any, res any, o *callOpts) error {
	if o == nil {
		o = &callOpts{}
	}
	timeout := c.timeout
	if o.timeout != 0 {
		timeout = o.timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ctx, span := c.tel.start(ctx, c, method, params)
	start := time.Now()
	err := c.rounds(ctx, method, params, res, o)
	if err != nil && !c.modern && !o.noRecover && method != "initialize" {
		err = c.recoverCall(ctx, method, params, res, o, err)
	}
	c.tel.end(ctx, span, c, method, params, start, res, err)
	return err
}

// rounds runs the request and, on 2026-07-28, its input_required retries.
func (c *Client) rounds(ctx context.Context, method string, params map[string]any, res any, o *callOpts) error {
	p := maps.Clone(params)
	if p == nil {
		p = map[string]any{}
	}
	for round := 0; ; round++ {
		raw, err := c.roundTrip(ctx, method, p, o)
		if err != nil {
			return err
		}
		kind := resultKind(raw)
		switch kind {
		case "", resultComplete:
			return decodeResult(method, raw, res)
		case resultInputRequired:
			if !c.modern {
				return fmt.Errorf("mcpkit/client: %s: input_required result outside the 2026-07-28 lifecycle", method)
			}
			if round >= c.maxRounds {
				return fmt.Errorf("%w: %s still needs input after %d rounds", ErrTooManyInputRounds, method, c.maxRounds)
			}
			if err := c.answerInputs(ctx, raw, p); err != nil {
				return fmt.Errorf("mcpkit/client: %s: %w", method, err)
			}
		case resultTask:
			if o.task == nil {
				return c.awaitTask(ctx, method, raw, res, o)
			}
			return c.taskHandle(ctx, raw, o)
		default:
			return fmt.Errorf("mcpkit/client: %s: unknown resultType %q", method, kind)
		}
	}
}

// resultKind returns a result's resultType ("" when absent, which means complete).
func resultKind(raw json.RawMessage) string {
	var r struct {
		ResultType string `json:"resultType"`
	}
	if jsonv2.Unmarshal(raw, &r) != nil {
		return ""
	}
	return r.ResultType
}

func decodeResult(method string, raw json.RawMessage, res any) error {
	switch r := res.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*r = append(json.RawMessage(nil), raw...)
		return nil
	}
	if err := jsonv2.Unmarshal(raw, res); err != nil {
		return fmt.Errorf("mcpkit/client: %s: malformed result: %w", method, err)
	}
	return nil
}

// roundTrip sends one request (a fresh id every time) and returns its raw result.
func (c *Client) roundTrip(ctx context.Context, method string, params map[string]any, o *callOpts) (json.RawMessage, error) {
	id := jsonrpc.IntID(c.nextID.Add(1))
	requestID(ctx, id)
	msg, tok, err := c.buildRequest(ctx, id, method, params, o)
	if err != nil {
		return nil, err
	}
	// The link reads the request's own stream under sctx; a response that arrives by another
	// path (a resumed or standalone stream) stops that read.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	p, err := c.register(id, tok, o.progress, stop)
	if err != nil {
		return nil, err
	}
	defer c.unregister(id, tok)
	err = c.link.send(sctx, msg)
	stop()
	select {
	case m, ok := <-p.ch:
		return answerOf(m, ok, c)
	default:
	}
	if err != nil {
		if ctx.Err() != nil {
			c.cancelRemote(id, ctx)
			return nil, ctxErr(ctx, method)
		}
		return nil, err
	}
	select {
	case m, ok := <-p.ch:
		return answerOf(m, ok, c)
	case <-ctx.Done():
		c.cancelRemote(id, ctx)
		return nil, ctxErr(ctx, method)
	}
}

func answerOf(m *jsonrpc.Message, ok bool, c *Client) (json.RawMessage, error) {
	if !ok {
		return nil, c.lostErr()
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

func ctxErr(ctx context.Context, method string) error {
	return fmt.Errorf("mcpkit/client: %s: %w", method, context.Cause(ctx))
}

func (c *Client) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr != nil && !c.closed {
		return fmt.Errorf("%w: %w", ErrClosed, c.closeErr)
	}
	return ErrClosed
}

// cancelRemote tells the server a request is abandoned: notifications/cancelled, except on a
// 2026-07-28 HTTP request, where closing its stream (already done) is the cancellation.
func (c *Client) cancelRemote(id jsonrpc.ID, ctx context.Context) {
	if c.modern && c.link.cancelsByStream() {
		return
	}
	reason := "cancelled by the client"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "the client's deadline passed"
	}
	nctx, cancel := context.WithTimeout(c.baseCtx, 5*time.Second)
	defer cancel()
	_ = c.notify(nctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
}

// buildRequest encodes a request: params with the envelope (2026-07-28), the progress token and
// the trace context in _meta, and the headers the link mirrors.
func (c *Client) buildRequest(ctx context.Context, id jsonrpc.ID, method string, params map[string]any, o *callOpts) (*outMsg, string, error) {
	p := maps.Clone(params)
	if p == nil {
		p = map[string]any{}
	}
	meta := map[string]any{}
	if m, ok := p["_meta"].(core.Meta); ok {
		maps.Copy(meta, m)
	}
	maps.Copy(meta, o.meta)
	tok := ""
	if o.progress != nil {
		tok = strconv.Quote("p" + id.String())
		meta["progressToken"] = json.RawMessage(tok)
	}
	c.tel.inject(ctx, meta)
	if c.modern {
		meta[metakey.ProtocolVersion] = c.version
		meta[metakey.ClientInfo] = c.info
		caps := c.caps
		if caps == nil {
			caps = c.capabilities()
		}
		meta[metakey.ClientCapabilities] = caps
		c.mu.Lock()
		if c.logLevel != "" {
			meta[metakey.LogLevel] = c.logLevel
		}
		c.mu.Unlock()
	}
	if len(meta) > 0 {
		p["_meta"] = meta
	} else {
		delete(p, "_meta")
	}
	var body []byte
	var err error
	if len(p) == 0 && !c.modern {
		body, err = transport.Core.EncodeRequest(id, method, nil)
	} else {
		body, err = transport.Core.EncodeRequest(id, method, p)
	}
	if err != nil {
		return nil, "", fmt.Errorf("mcpkit/client: %s: cannot encode params: %w", method, err)
	}
	m := &outMsg{body: body, method: method, id: id, modern: c.modern, version: c.version, replacing: o.noRecover || method == "initialize"}
	if c.modern {
		switch method {
		case "tools/call", "prompts/get":
			m.name, _ = p["name"].(string)
		case "resources/read":
			m.name, _ = p["uri"].(string)
		case "tasks/get", "tasks/update", "tasks/cancel":
			m.name, _ = p["taskId"].(string)
		}
		if method == "tools/call" {
			m.params = c.paramHeadersFor(m.name, p["arguments"])
		}
	}
	return m, tok, nil
}

// register records a request as pending.
func (c *Client) register(id jsonrpc.ID, tok string, progress func(Progress), stop context.CancelFunc) (*pendingCall, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.closeErr != nil {
		if c.closeErr != nil && !c.closed {
			return nil, fmt.Errorf("%w: %w", ErrClosed, c.closeErr)
		}
		return nil, ErrClosed
	}
	p := &pendingCall{ch: make(chan *jsonrpc.Message, 1), stop: stop}
	c.pending[id] = p
	if tok != "" {
		c.progress[tok] = progress
	}
	return p, nil
}

func (c *Client) unregister(id jsonrpc.ID, tok string) {
	c.mu.Lock()
	delete(c.pending, id)
	if tok != "" {
		delete(c.progress, tok)
	}
	c.mu.Unlock()
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	body, err := transport.Core.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return c.link.send(ctx, &outMsg{body: body, method: method, modern: c.modern, version: c.version, replacing: method == "notifications/initialized"})
}

// deliver takes one inbound message from the link and returns the id of a response.
func (c *Client) deliver(raw []byte, stream jsonrpc.ID) jsonrpc.ID {
	m, derr := transport.Core.DecodeMessage(raw)
	if derr != nil {
		return jsonrpc.ID{} // nothing can be answered: an unreadable frame from the server
	}
	switch {
	case m.IsResponse():
		c.mu.Lock()
		p := c.pending[transport.Core.IDKey(m.ID)]
		delete(c.pending, transport.Core.IDKey(m.ID))
		c.mu.Unlock()
		if p != nil {
			p.ch <- m
			// An answer that came another way (a standalone or resumed stream) ends the read of
			// the request's own stream; one on that stream lets it finish cleanly.
			if p.stop != nil && !(stream.IsValid() && stream.Equal(m.ID)) {
				p.stop()
			}
		}
		return m.ID
	case m.IsRequest():
		c.serveRequest(m)
	default:
		c.onNotification(m)
	}
	return jsonrpc.ID{}
}

// onNotification routes a notification: progress to its call, listen frames to their
// subscription, the rest to the options' callbacks.
func (c *Client) onNotification(m *jsonrpc.Message) {
	ctx := c.baseCtx
	if sid := transport.Core.MetaValue(m, metakey.SubscriptionID); len(sid) > 0 {
		c.mu.Lock()
		s := c.listens[string(sid)]
		c.mu.Unlock()
		if s != nil {
			s.deliver(m)
			return
		}
	}
	if !c.modern && c.toLegacyListens(m) {
		if m.Method == core.ToolsListChanged {
			c.mu.Lock()
			clear(c.tools)
			c.mu.Unlock()
		}
		return
	}
	switch m.Method {
	case "notifications/progress":
		var p struct {
			Token json.RawMessage `json:"progressToken"`
			Progress
		}
		if jsonv2.Unmarshal(m.Params, &p) != nil {
			return
		}
		c.mu.Lock()
		fn := c.progress[string(p.Token)]
		c.mu.Unlock()
		if fn != nil {
			fn(p.Progress)
		}
		return
	case "notifications/message":
		if c.opts.OnLog != nil {
			var lm LogMessage
			if jsonv2.Unmarshal(m.Params, &lm) == nil {
				c.opts.OnLog(ctx, lm)
			}
		}
		return
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if jsonv2.Unmarshal(m.Params, &p) != nil {
			return
		}
		var id jsonrpc.ID
		if jsonv2.Unmarshal(p.RequestID, &id) != nil {
			return
		}
		c.mu.Lock()
		cancel := c.serving[transport.Core.IDKey(id)]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return
	case "notifications/tools/list_changed":
		c.mu.Lock()
		clear(c.tools)
		c.mu.Unlock()
	}
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(ctx, Notification{Method: m.Method, Params: m.Params})
	}
}
