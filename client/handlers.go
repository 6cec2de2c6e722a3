package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/core"
)

// serveRequest answers a request from the server (legacy lifecycle) in its own goroutine, so
// the reading path never waits for a handler. notifications/cancelled from the server cancels
// the handler's context; Close cancels and awaits every handler.
func (c *Client) serveRequest(m *core.Message) {
	ctx, cancel := context.WithCancel(c.baseCtx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return
	}
	c.serving[m.ID.Key()] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		defer cancel()
		res, err := c.answer(ctx, m.Method, m.Params)
		c.mu.Lock()
		delete(c.serving, m.ID.Key())
		c.mu.Unlock()
		if ctx.Err() != nil {
			return // cancelled by the server or by Close: no answer is expected
		}
		var body []byte
		if err != nil {
			body = core.EncodeError(m.ID, wireError(err))
		} else {
			enc, merr := jsonv2.Marshal(res)
			if merr != nil {
				body = core.EncodeError(m.ID, core.InternalError("cannot encode the client's result: "+merr.Error()))
			} else {
				body = core.EncodeResponse(m.ID, enc)
			}
		}
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		defer scancel()
		_ = c.link.send(sctx, &outMsg{body: body, version: c.version})
	}()
}

// wireError turns a handler's error into the JSON-RPC error the server receives.
func wireError(err error) *core.Error {
	var werr *core.Error
	if errors.As(err, &werr) {
		return werr
	}
	return core.NewError(core.CodeInternalError, err.Error())
}

// answer runs the handler of a server request (or of one input request of an input_required
// result) and returns its result.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return struct{}{}, nil
	case "sampling/createMessage":
		if c.opts.Sampling == nil {
			return nil, core.NewError(core.CodeMethodNotFound, "Method not found: this client does not offer sampling")
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
			return nil, core.NewError(core.CodeMethodNotFound, "Method not found: this client does not offer elicitation")
		}
		var p core.ElicitParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Mode == "url" && !c.opts.URLElicitation {
			return nil, core.InvalidParams("this client does not offer url-mode elicitation")
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
			return nil, core.NewError(core.CodeMethodNotFound, "Method not found: this client does not offer roots")
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
	return nil, core.NewError(core.CodeMethodNotFound, "Method not found: "+method)
}

func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return core.InvalidParams("missing params")
	}
	if err := jsonv2.Unmarshal(params, v); err != nil {
		return core.InvalidParams(err.Error())
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
