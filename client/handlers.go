package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// serveRequest answers a request from the server (legacy lifecycle) in its own goroutine, so
// the reading path never waits for a handler. At most Options.MaxServerRequests run at once
// (each until its answer is sent); past that the request is refused. notifications/cancelled
// from the server cancels the handler's context; Close cancels and awaits every handler.
func (c *Client) serveRequest(m *jsonrpc.Message) {
	select {
	case c.slots <- struct{}{}:
	default:
		c.refuse(m)
		return
	}
	ctx, cancel := context.WithCancel(c.baseCtx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		<-c.slots
		return
	}
	c.serving[transport.Core.IDKey(m.ID)] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		defer func() { <-c.slots }()
		defer cancel()
		res, err := c.answer(ctx, m.Method, m.Params)
		c.mu.Lock()
		delete(c.serving, transport.Core.IDKey(m.ID))
		c.mu.Unlock()
		if ctx.Err() != nil {
			return // cancelled by the server or by Close: no answer is expected
		}
		var body []byte
		if err != nil {
			body = transport.Core.EncodeError(m.ID, wireError(err))
		} else {
			enc, merr := jsonv2.Marshal(res)
			if merr != nil {
				body = transport.Core.EncodeError(m.ID, jsonrpc.InternalError("cannot encode the client's result: "+merr.Error()))
			} else {
				body = transport.Core.EncodeResponse(m.ID, enc)
			}
		}
		c.reply(ctx, body)
	}()
}

// refuse answers a request past Options.MaxServerRequests with a "Client busy" error, in a
// goroutine of its own while fewer than that many refusals are being sent; past that (a server
// that floods the client and holds the answers open) the request is dropped unanswered, so the
// client's goroutines and connections stay bounded.
func (c *Client) refuse(m *jsonrpc.Message) {
	select {
	case c.refusals <- struct{}{}:
	default:
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.refusals
		return
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	body := transport.Core.EncodeError(m.ID, jsonrpc.NewError(jsonrpc.CodeInternalError,
		fmt.Sprintf("Client busy: %d requests from the server are being handled; try again later", cap(c.slots))))
	go func() {
		defer c.handlers.Done()
		defer func() { <-c.refusals }()
		c.reply(c.baseCtx, body)
	}()
}

// reply sends the answer to a server request, bounded by serverReplyTimeout.
func (c *Client) reply(ctx context.Context, body []byte) {
	sctx, cancel := context.WithTimeout(ctx, serverReplyTimeout)
	defer cancel()
	_ = c.link.send(sctx, &outMsg{body: body, version: c.version})
}

// serverReplyTimeout bounds the sending of one answer to a server request.
const serverReplyTimeout = 30 * time.Second

// wireError turns a handler's error into the JSON-RPC error the server receives.
func wireError(err error) *jsonrpc.Error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
}

// answer runs the handler of a server request (or of one input request of an input_required
// result) and returns its result.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return struct{}{}, nil
	case "sampling/createMessage":
		if c.opts.Sampling == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: this client does not offer sampling")
		}
		var p core.CreateMessageParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		res, err := c.opts.Sampling(ctx, &p)
		if err == nil && res == nil {
			err = errors.New("the sampling handler returned no result")
		}
		return res, err
	case "elicitation/create":
		if c.opts.Elicitation == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: this client does not offer elicitation")
		}
		var p core.ElicitParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Mode == "url" && !c.opts.URLElicitation {
			return nil, jsonrpc.InvalidParams("this client does not offer url-mode elicitation")
		}
		res, err := c.opts.Elicitation(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("the elicitation handler returned no result")
		}
		if res.Action == "accept" && p.Mode != "url" {
			res.Content = applyDefaults(p.RequestedSchema, res.Content)
		}
		return res, nil
	case "roots/list":
		if c.opts.Roots == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: this client does not offer roots")
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []core.Root{}
		}
		return &core.ListRootsResult{Roots: roots}, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found: "+method)
}

func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return jsonrpc.InvalidParams("missing params")
	}
	if err := jsonv2.Unmarshal(params, v); err != nil {
		return jsonrpc.InvalidParams(err.Error())
	}
	return nil
}

// applyDefaults fills the default of every top-level property of a requested schema that the
// accepted content leaves out (SEP-1034).
func applyDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	if len(schema) == 0 {
		return content
	}
	var s struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if jsonv2.Unmarshal(schema, &s) != nil {
		return content
	}
	for name, prop := range s.Properties {
		def, ok := prop["default"]
		if !ok {
			continue
		}
		if _, have := content[name]; have {
			continue
		}
		var v any
		if jsonv2.Unmarshal(def, &v) != nil {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = v
	}
	return content
}

// inputRequired is the body of an input_required result.
type inputRequired struct {
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState *string `json:"requestState"`
}

// answerInputs fulfils the input requests of an input_required result with the client's
// handlers and prepares the retry's params: the responses, and the request state echoed exactly
// (or left out when the server sent none).
func (c *Client) answerInputs(ctx context.Context, raw json.RawMessage, p map[string]any) error {
	var ir inputRequired
	if err := jsonv2.Unmarshal(raw, &ir); err != nil {
		return fmt.Errorf("malformed input_required result: %w", err)
	}
	if len(ir.InputRequests) > cap(c.slots) {
		return fmt.Errorf("the input_required result asks for %d inputs, more than Options.MaxServerRequests (%d)", len(ir.InputRequests), cap(c.slots))
	}
	if len(ir.InputRequests) == 0 && ir.RequestState == nil {
		return errors.New("input_required result without inputRequests or requestState")
	}
	responses := make(map[string]any, len(ir.InputRequests))
	for key, req := range ir.InputRequests {
		res, err := c.answer(ctx, req.Method, req.Params)
		if err != nil {
			return fmt.Errorf("input request %q (%s): %w", key, req.Method, err)
		}
		responses[key] = res
	}
	if len(responses) > 0 {
		p["inputResponses"] = responses
	} else {
		delete(p, "inputResponses")
	}
	if ir.RequestState != nil {
		p["requestState"] = *ir.RequestState
	} else {
		delete(p, "requestState")
	}
	return nil
}
