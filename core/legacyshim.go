package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// inputRequiredResult is the wire form of InputRequiredError.
type inputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitzero"`
	RequestState  string                  `json:"requestState,omitzero"`
}

// MaxLegacyInputRounds is how many times the legacy shim fulfils input requests for one call
// before it gives up.
const MaxLegacyInputRounds = 8

// answerInputRequired turns an InputRequiredError from a handler into the response: the modern wire
// form (after the capability gate and sealing), or, on the legacy lifecycle, the legacy shim.
func (c *Call) answerInputRequired(ir *InputRequiredError) (result any, err error) {
	s := c.session.server
	defer func() {
		// A handler the shim reruns is the server's own code.
		if v := recover(); v != nil {
			s.logError(fmt.Errorf("mcpkit: panic answering input_required of %s: %v", c.msg.Method, v))
			result, err = nil, jsonrpc.InternalError("Internal error handling "+c.msg.Method+" request")
		}
	}()
	if !mrtrMethods[c.msg.Method] {
		return nil, jsonrpc.InternalError("input_required results are only supported for tools/call, prompts/get, resources/read")
	}
	if err := ir.validate(); err != nil {
		s.logError(fmt.Errorf("mcpkit: %s: invalid input_required result: %w", c.msg.Method, err))
		return nil, jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")
	}
	if c.modern == nil {
		return c.legacyShim(ir)
	}
	if miss := missingCapabilities(requiredCapabilities(ir.Requests), c.ClientCapabilities()); miss != nil {
		return nil, MissingCapabilities(miss)
	}
	res := inputRequiredResult{ResultType: "input_required", InputRequests: ir.Requests}
	if ir.State != "" {
		token, err := s.sealer.seal(c, ir.State)
		if err != nil {
			s.logError(fmt.Errorf("mcpkit: sealing requestState: %w", err))
			return nil, jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")
		}
		res.RequestState = token
	}
	return res, nil
}

var errNeedsModern = jsonrpc.InternalError("input_required results require the 2026-07-28 stateless lifecycle (SEP-2322)")

// legacyShim fulfils input requests of a legacy call as real server-to-client requests on the
// call's own path, then runs the handler again with the responses and the plaintext state.
func (c *Call) legacyShim(ir *InputRequiredError) (any, error) {
	s := c.session.server
	if s.opts.DisableInputShim || c.requestsAllowed("") != nil {
		return nil, errNeedsModern
	}
	for round := 0; ; round++ {
		if round == MaxLegacyInputRounds {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, fmt.Sprintf("Handler still returned `input_required` after %d legacy shim rounds (SEP-2322)", MaxLegacyInputRounds))
		}
		if miss := missingCapabilities(requiredCapabilities(ir.Requests), c.session.ClientCapabilities()); miss != nil {
			b, _ := jsonv2.Marshal(miss, jsonv2.Deterministic(true))
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "input_required requires client capabilities the client did not declare: "+string(b))
		}
		responses, err := c.fulfilInputRequests(ir.Requests)
		if err != nil {
			return nil, err
		}
		c.inputResponses = nil
		if len(responses) > 0 {
			c.inputResponses = responses
		}
		c.requestState, c.hasState = ir.State, ir.State != ""
		result, err := c.rerun()
		var next *InputRequiredError
		if !errors.As(err, &next) {
			return result, err
		}
		if verr := next.validate(); verr != nil {
			s.logError(fmt.Errorf("mcpkit: %s: invalid input_required result: %w", c.msg.Method, verr))
			return nil, jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")
		}
		ir = next
	}
}

// fulfilInputRequests sends a legacy call's input requests to the client, in key order, as
// real server-to-client requests and returns their responses by key. A timeout or a cancelled
// call returns the request's error; any other failure is logged and answered as an internal
// error.
func (c *Call) fulfilInputRequests(reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	responses := make(map[string]json.RawMessage, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		r := reqs[k]
		params := r.Params
		if r.Method == "elicitation/create" {
			params = legacyElicitParams(params)
		}
		var raw json.RawMessage
		if err := c.Request(c.ctx, r.Method, params, &raw); err != nil {
			var te *RequestTimeoutError
			if errors.As(err, &te) || c.ctx.Err() != nil {
				return nil, err // timed out, or cancelled: then the response is suppressed anyway
			}
			c.session.server.logError(fmt.Errorf("mcpkit: legacy input shim: %s: %w", r.Method, err))
			return nil, jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")
		}
		responses[k] = raw
	}
	return responses, nil
}

// legacyElicitParams gives a URL elicitation the elicitationId the legacy wire requires (the
// 2026-07-28 wire has none); anything else goes out as the handler wrote it.
func legacyElicitParams(params any) any {
	switch v := params.(type) {
	case ElicitParams:
		if v.Mode == "url" && v.ElicitationID == "" {
			v.ElicitationID = uuid.NewString()
		}
		return v
	case *ElicitParams:
		if v != nil && v.Mode == "url" && v.ElicitationID == "" {
			q := *v // the handler's value is left alone
			q.ElicitationID = uuid.NewString()
			return &q
		}
		return v
	}
	if inputMode(params) != "url" {
		return params
	}
	b, err := marshal(params)
	var m map[string]jsontext.Value
	if err != nil || unmarshal(b, &m) != nil {
		return params
	}
	if id := m["elicitationId"]; id.Kind() == '"' && string(id) != `""` {
		return params
	}
	m["elicitationId"] = jsontext.Value(strconv.Quote(uuid.NewString()))
	return m
}

// rerun runs the handler again, with the same panic protection as the first run.
func (c *Call) rerun() (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: panic serving %s: %v", c.msg.Method, v))
			result, err = nil, jsonrpc.InternalError("Internal error handling "+c.msg.Method+" request")
		}
	}()
	return c.handler(c)
}
