package core

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

// Multi round-trip results (SEP-2322). A tools/call, prompts/get or resources/read handler that
// needs something from the client returns an *InputRequiredError (as its error): embedded requests
// (elicitation, sampling, roots) under keys it chooses, and/or a state string. On the 2026-07-28
// lifecycle the client fulfils them and retries the same request with inputResponses and the
// echoed requestState; the handler reads them with InputResponse and RequestState. On the legacy
// lifecycle the server fulfils the requests itself as real server-to-client requests and runs
// the handler again (the legacy shim), so one handler serves both eras.

// InputRequest is one request a handler needs the client to fulfil.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitzero"`
}

// ElicitInput asks the user for input (form mode unless p.Mode is "url"). A form's schema is
// p.Form (sent as requestedSchema) or p.RequestedSchema, and must be a flat object of primitive
// properties: a handler returning one that is not gets -32603 (logged). Read the answer with
// FormResponse (or FormResponseAs), which applies the defaults and validates it.
func ElicitInput(p ElicitParams) InputRequest {
	if p.Mode == "" || p.Mode == "form" {
		if p.Form != nil && p.RequestedSchema == nil {
			p.RequestedSchema, p.Form = p.Form.raw, nil
		} else if p.RequestedSchema == nil {
			p.RequestedSchema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
	}
	return InputRequest{Method: "elicitation/create", Params: p}
}

// SamplingInput asks the client's language model for a message.
func SamplingInput(p CreateMessageParams) InputRequest {
	return InputRequest{Method: "sampling/createMessage", Params: p}
}

// RootsInput asks the client for its roots.
func RootsInput() InputRequest {
	return InputRequest{Method: "roots/list", Params: map[string]any{}}
}

// InputRequiredError is the result a handler returns, as its error, when it needs input from the
// client before it can complete. At least one of Requests and State must be set.
type InputRequiredError struct {
	// Requests are the requests the client must fulfil, by key.
	Requests map[string]InputRequest
	// State is the handler's own state, returned to it on the retry. It leaves the server
	// sealed (see Options.RequestState) and comes back as the plaintext written here.
	State string
}

// NeedInput returns an *InputRequiredError with the given requests and state.
func NeedInput(requests map[string]InputRequest, state string) *InputRequiredError {
	return &InputRequiredError{Requests: requests, State: state}
}

func (e *InputRequiredError) Error() string { return "mcpkit: input required" }

// validate enforces the construction rules: something to send, only the three methods, params
// that encode as an object (optional for roots/list only, as the schema has it).
func (e *InputRequiredError) validate() error {
	if e == nil {
		return errors.New("nil *InputRequiredError")
	}
	if len(e.Requests) == 0 && e.State == "" {
		return errors.New("at least one of input requests or request state is required")
	}
	for k, r := range e.Requests {
		switch r.Method {
		case "elicitation/create", "sampling/createMessage", "roots/list":
		default:
			return fmt.Errorf("input request %q: method %q cannot be an input request", k, r.Method)
		}
		b := []byte("null")
		if r.Params != nil {
			var err error
			if b, err = marshal(r.Params); err != nil {
				return fmt.Errorf("input request %q: encoding params: %w", k, err)
			}
		}
		if err := checkInputForm(r.Params); err != nil {
			return fmt.Errorf("input request %q: %w", k, err)
		}
		switch v := jsontext.Value(b); {
		case rawObject(v):
		case string(v) == "null" && r.Method == "roots/list":
			// roots/list is the one request whose params are optional.
		case string(v) == "null":
			return fmt.Errorf("input request %q: %s needs params", k, r.Method)
		default:
			return fmt.Errorf("input request %q: params must be an object", k)
		}
	}
	return nil
}

// checkInputForm checks the form schema of a typed elicitation input request.
func checkInputForm(params any) error {
	var p *ElicitParams
	switch v := params.(type) {
	case ElicitParams:
		p = &v
	case *ElicitParams:
		p = v
	}
	if p == nil || (p.Mode != "" && p.Mode != "form") {
		return nil
	}
	_, err := formFor(p)
	return err
}

// mrtrMethods may answer with input_required.
var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// prepareRetry reads inputResponses and requestState of an MRTR method before the handler runs:
// the state is unsealed (or the request refused with -32602) and the responses checked for shape.
func (c *Call) prepareRetry() *jsonrpc.Error {
	if !mrtrMethods[c.msg.Method] || !rawObject(c.msg.Params) || (c.msg.Parsed && !codec.Retry(c.msg)) {
		return nil // a first call: the decoder saw neither member, so nothing to read
	}
	var p struct {
		InputResponses jsontext.Value `json:"inputResponses"`
		RequestState   jsontext.Value `json:"requestState"`
	}
	if unmarshal(c.msg.Params, &p) != nil {
		return nil // the method's own decoding reports malformed params
	}
	if p.RequestState != nil {
		var token string
		if p.RequestState.Kind() != '"' || unmarshal(p.RequestState, &token) != nil {
			return errBadState
		}
		state, err := c.session.server.sealer.open(c, token)
		if err != nil {
			return err
		}
		c.requestState, c.hasState = state, true
	}
	if p.InputResponses != nil {
		var responses map[string]json.RawMessage
		if !rawObject(p.InputResponses) || unmarshal(p.InputResponses, &responses) != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses must be an object of results")
		}
		for k, v := range responses {
			if !validInputResponse(v) {
				return jsonrpc.NewError(jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: inputResponses[%q] is not a result of elicitation/create, sampling/createMessage or roots/list", k))
			}
		}
		c.inputResponses = responses
	}
	return nil
}

// validInputResponse reports whether v has the shape of one of the three results.
func validInputResponse(v []byte) bool {
	if !rawObject(v) {
		return false
	}
	var probe struct {
		Action  *string        `json:"action"`
		Roots   jsontext.Value `json:"roots"`
		Role    *string        `json:"role"`
		Content jsontext.Value `json:"content"`
		Model   *string        `json:"model"`
	}
	if unmarshal(v, &probe) != nil {
		return false
	}
	switch {
	case probe.Action != nil:
		switch *probe.Action {
		case "accept", "decline", "cancel":
			return true
		}
		return false
	case probe.Roots.Kind() == '[':
		return true
	case probe.Role != nil && probe.Content != nil && probe.Model != nil:
		return true
	}
	return false
}

// InputResponses returns the client's responses of a retry, by key (nil on a first call).
func (c *Call) InputResponses() map[string]json.RawMessage { return c.inputResponses }

// InputResponse decodes the response under key into v. It reports false when there is none or it
// does not decode into v (for example a response of another kind): ask for it again then.
func (c *Call) InputResponse(key string, v any) bool {
	raw, ok := c.inputResponses[key]
	return ok && unmarshal(raw, v) == nil
}

// ElicitResponse returns the elicitation response under key, if there is a valid one.
func (c *Call) ElicitResponse(key string) (*ElicitResult, bool) {
	var r ElicitResult
	if !c.InputResponse(key, &r) || r.Action == "" {
		return nil, false
	}
	return &r, true
}

// SamplingResponse returns the sampling response under key, if there is a valid one.
func (c *Call) SamplingResponse(key string) (*CreateMessageResult, bool) {
	var r CreateMessageResult
	if !c.InputResponse(key, &r) || r.Role == "" {
		return nil, false
	}
	return &r, true
}

// RootsResponse returns the roots response under key, if there is a valid one.
func (c *Call) RootsResponse(key string) (*ListRootsResult, bool) {
	var r ListRootsResult
	if !c.InputResponse(key, &r) || r.Roots == nil {
		return nil, false
	}
	return &r, true
}

// RequestState returns the plaintext state the handler put in its last InputRequiredError, and
// whether the request carried one. A state that fails verification never reaches a handler.
func (c *Call) RequestState() (string, bool) { return c.requestState, c.hasState }

// requiredCapabilities maps the input requests to the client capabilities they need, merged.
func requiredCapabilities(reqs map[string]InputRequest) map[string]any {
	need := map[string]any{}
	add := func(path ...string) {
		cur := need
		for _, p := range path {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
	}
	for _, r := range reqs {
		switch r.Method {
		case "elicitation/create":
			if inputMode(r.Params) == "url" {
				add("elicitation", "url")
			} else {
				add("elicitation", "form")
			}
		case "sampling/createMessage":
			if samplingUsesTools(r.Params) {
				add("sampling", "tools")
			} else {
				add("sampling")
			}
		case "roots/list":
			add("roots")
		}
	}
	return need
}

func inputMode(params any) string {
	switch p := params.(type) {
	case ElicitParams:
		return p.Mode
	case *ElicitParams:
		if p != nil {
			return p.Mode
		}
		return ""
	}
	var probe struct {
		Mode string `json:"mode"`
	}
	if b, err := marshal(params); err == nil {
		_ = unmarshal(b, &probe)
	}
	return probe.Mode
}

func samplingUsesTools(params any) bool {
	switch p := params.(type) {
	case CreateMessageParams:
		return len(p.Tools) > 0 || p.ToolChoice != nil
	case *CreateMessageParams:
		return p != nil && (len(p.Tools) > 0 || p.ToolChoice != nil)
	}
	var probe map[string]jsontext.Value
	if b, err := marshal(params); err == nil {
		_ = unmarshal(b, &probe)
	}
	_, tools := probe["tools"]
	_, choice := probe["toolChoice"]
	return tools || choice
}

// missingCapabilities returns the part of need the client did not declare (nil when nothing is
// missing). A bare elicitation declaration implies form, unless it names url alone.
func missingCapabilities(need map[string]any, caps ClientCapabilities) map[string]any {
	out := map[string]any{}
	for k, v := range need {
		sub, _ := v.(map[string]any)
		if k == "elicitation" {
			if miss := missingElicitation(sub, caps); len(miss) > 0 {
				out[k] = miss
			}
			continue
		}
		if !caps.Has(k) {
			out[k] = v
			continue
		}
		declared, _ := caps[k].(map[string]any)
		if miss := missingCapabilities(sub, declared); len(miss) > 0 {
			out[k] = miss
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func missingElicitation(need map[string]any, caps ClientCapabilities) map[string]any {
	if !caps.Has("elicitation") {
		return need
	}
	miss := map[string]any{}
	if _, ok := need["form"]; ok && !formElicitation(caps) {
		miss["form"] = map[string]any{}
	}
	if _, ok := need["url"]; ok && !caps.Has("elicitation", "url") {
		miss["url"] = map[string]any{}
	}
	return miss
}
