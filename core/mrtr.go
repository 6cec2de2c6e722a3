package core

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"
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

// RequestStateOptions configure the protection of requestState. The zero value seals it with a
// random key made for this process. A sealed state is bound to the request it was issued for
// (method, target, arguments, lifecycle) and to the request's principal (WithPrincipal): a state
// issued to P opens only for P, one issued to nobody only for nobody.
type RequestStateOptions struct {
	// Key is the 32-byte AES-256 key (NewServer panics on any other length, even with
	// Disable). Nil means a random key per process: replicas behind one load balancer must share
	// a key, or a retry landing on another replica is refused.
	Key []byte
	// OldKeys are earlier keys (32 bytes each) still accepted for opening a state, never for
	// sealing one: the key ring of a rotation. To rotate across replicas, first give every
	// replica the new key in OldKeys, then make it Key everywhere (moving the previous Key to
	// OldKeys), and drop the old key once TTL has passed. NewServer panics on a key of another
	// length. Nil accepts only Key.
	OldKeys [][]byte
	// TTL bounds how long an issued state can be used. Zero means 5 minutes; NewServer panics
	// on a negative TTL.
	TTL time.Duration
	// Disable sends the handler's state as it is, unprotected. Only for handlers that protect
	// their state themselves.
	Disable bool
}

// DefaultRequestStateTTL is the lifetime of a sealed requestState when RequestStateOptions.TTL is
// zero.
const DefaultRequestStateTTL = 5 * time.Minute

const sealPrefix = "v1."

type sealer struct {
	aead     cipher.AEAD
	old      []cipher.AEAD // OldKeys: tried, in order, when aead cannot open a state
	ttl      time.Duration
	disabled bool
	// now is the clock of expiry (time.Now; tests move it).
	now func() time.Time
}

func newSealer(o RequestStateOptions) (*sealer, error) {
	s := &sealer{ttl: o.TTL, disabled: o.Disable, now: time.Now}
	if o.Key != nil && len(o.Key) != 32 {
		return nil, fmt.Errorf("RequestState.Key must be 32 bytes, not %d", len(o.Key))
	}
	for i, k := range o.OldKeys {
		if len(k) != 32 {
			return nil, fmt.Errorf("RequestState.OldKeys[%d] must be 32 bytes, not %d", i, len(k))
		}
	}
	if s.ttl < 0 {
		return nil, errors.New("RequestState.TTL must not be negative")
	}
	if s.ttl == 0 {
		s.ttl = DefaultRequestStateTTL
	}
	if s.disabled {
		return s, nil
	}
	key := o.Key
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	var err error
	if s.aead, err = newAEAD(key); err != nil {
		return nil, err
	}
	for _, k := range o.OldKeys {
		a, err := newAEAD(k)
		if err != nil {
			return nil, err
		}
		s.old = append(s.old, a)
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// stateClaims is what a sealed requestState carries, besides the handler's state: what it was
// issued for, so it cannot be replayed elsewhere. Exp is in Unix milliseconds.
type stateClaims struct {
	V   int    `json:"v"`
	Exp int64  `json:"exp"`
	M   string `json:"m"`
	T   string `json:"t"`
	A   string `json:"a"`
	Aud string `json:"aud,omitzero"`
	// E is the lifecycle the state was issued on: "modern" for a 2026-07-28 request, empty
	// for a legacy one. A state issued to a stateless request is refused on a session.
	E string `json:"e,omitzero"`
	S string `json:"s"`
}

// binding computes the claims that tie a state to this request: method, target (the name of a
// tool or prompt, the URI of a resource) and a digest of the normalized arguments (members
// sorted, floats in their RFC 8785 form, integers kept digit for digit), so that members in
// another order or floats spelled differently still match while integers beyond 2^53 never
// collide; and the lifecycle (a state issued to a 2026-07-28 request is refused on a legacy
// session, where the server never issues one). ok is false when the params cannot be read:
// such a request matches no state.
func (c *Call) binding() (cl stateClaims, ok bool) {
	cl = stateClaims{V: 1, M: c.method}
	var p struct {
		Name      jsontext.Value `json:"name"`
		URI       jsontext.Value `json:"uri"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if !rawObject(c.params) || unmarshal(c.params, &p) != nil {
		return cl, false
	}
	target := p.Name
	if c.method == "resources/read" {
		target = p.URI
	}
	if target.Kind() == '"' && unmarshal(target, &cl.T) != nil {
		return cl, false
	}
	args := jsontext.Value("{}")
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		args = p.Arguments.Clone()
	}
	// Members reordered, whitespace and string escapes normalized, floats in their RFC 8785
	// form; integers keep their exact digits, so ids above 2^53 never collide.
	if err := args.Format(jsontext.ReorderRawObjects(true), jsontext.CanonicalizeRawFloats(true)); err != nil {
		return cl, false
	}
	sum := sha256.Sum256(args)
	cl.A = hex.EncodeToString(sum[:])
	// The audience is the request's principal (WithPrincipal): a state issued to P opens only for
	// P, and one issued to nobody only for nobody.
	cl.Aud, _ = PrincipalFrom(c.ctx)
	if c.modern != nil {
		cl.E = "modern"
	}
	return cl, true
}

func (s *sealer) seal(c *Call, state string) (string, error) {
	if s.disabled {
		return state, nil
	}
	cl, ok := c.binding()
	if !ok {
		return "", errors.New("the request's params cannot be bound")
	}
	cl.Exp = s.now().Add(s.ttl).UnixMilli()
	cl.S = state
	plain, err := marshal(cl)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(sealPrefix))
	return sealPrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

var errBadState = NewError(CodeInvalidParams, "Invalid or expired requestState")

// open verifies a requestState and returns the handler's plaintext. Every failure is the same
// -32602 on the wire: which check failed is not the client's business.
func (s *sealer) open(c *Call, token string) (string, *Error) {
	if s.disabled {
		return token, nil
	}
	b64, ok := strings.CutPrefix(token, sealPrefix)
	if !ok {
		return "", errBadState
	}
	// Strict: a token has exactly one spelling, so no character can change unnoticed.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return "", errBadState
	}
	nonce, sealed := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, sealed, []byte(sealPrefix))
	for _, a := range s.old {
		if err == nil {
			break
		}
		plain, err = a.Open(nil, nonce, sealed, []byte(sealPrefix))
	}
	if err != nil {
		return "", errBadState
	}
	var cl stateClaims
	if unmarshal(plain, &cl) != nil || cl.V != 1 || s.now().UnixMilli() > cl.Exp {
		return "", errBadState
	}
	want, ok := c.binding()
	if !ok || cl.M != want.M || cl.T != want.T || cl.A != want.A || cl.Aud != want.Aud || cl.E != want.E {
		return "", errBadState
	}
	return cl.S, nil
}

// prepareRetry reads inputResponses and requestState of an MRTR method before the handler runs:
// the state is unsealed (or the request refused with -32602) and the responses checked for shape.
func (c *Call) prepareRetry() *Error {
	if !mrtrMethods[c.method] || !rawObject(c.params) || (c.msg.Parsed && !c.msg.retry) {
		return nil // a first call: the decoder saw neither member, so nothing to read
	}
	var p struct {
		InputResponses jsontext.Value `json:"inputResponses"`
		RequestState   jsontext.Value `json:"requestState"`
	}
	if unmarshal(c.params, &p) != nil {
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
			return NewError(CodeInvalidParams, "Invalid params: inputResponses must be an object of results")
		}
		for k, v := range responses {
			if !validInputResponse(v) {
				return NewError(CodeInvalidParams, fmt.Sprintf("Invalid params: inputResponses[%q] is not a result of elicitation/create, sampling/createMessage or roots/list", k))
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
			s.logError(fmt.Errorf("mcpkit: panic answering input_required of %s: %v", c.method, v))
			result, err = nil, InternalError("Internal error handling "+c.method+" request")
		}
	}()
	if !mrtrMethods[c.method] {
		return nil, InternalError("input_required results are only supported for tools/call, prompts/get, resources/read")
	}
	if err := ir.validate(); err != nil {
		s.logError(fmt.Errorf("mcpkit: %s: invalid input_required result: %w", c.method, err))
		return nil, InternalError("Internal error handling " + c.method + " request")
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
			return nil, InternalError("Internal error handling " + c.method + " request")
		}
		res.RequestState = token
	}
	return res, nil
}

var errNeedsModern = InternalError("input_required results require the 2026-07-28 stateless lifecycle (SEP-2322)")

// legacyShim fulfils input requests of a legacy call as real server-to-client requests on the
// call's own path, then runs the handler again with the responses and the plaintext state.
func (c *Call) legacyShim(ir *InputRequiredError) (any, error) {
	s := c.session.server
	if s.opts.DisableInputShim || c.requestsAllowed("") != nil {
		return nil, errNeedsModern
	}
	for round := 0; ; round++ {
		if round == MaxLegacyInputRounds {
			return nil, NewError(CodeInternalError, fmt.Sprintf("Handler still returned `input_required` after %d legacy shim rounds (SEP-2322)", MaxLegacyInputRounds))
		}
		if miss := missingCapabilities(requiredCapabilities(ir.Requests), c.session.ClientCapabilities()); miss != nil {
			b, _ := jsonv2.Marshal(miss, jsonv2.Deterministic(true))
			return nil, NewError(CodeInternalError, "input_required requires client capabilities the client did not declare: "+string(b))
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
			s.logError(fmt.Errorf("mcpkit: %s: invalid input_required result: %w", c.method, verr))
			return nil, InternalError("Internal error handling " + c.method + " request")
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
			return nil, InternalError("Internal error handling " + c.method + " request")
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
			c.session.server.logError(fmt.Errorf("mcpkit: panic serving %s: %v", c.method, v))
			result, err = nil, InternalError("Internal error handling "+c.method+" request")
		}
	}()
	return c.handler(c)
}
