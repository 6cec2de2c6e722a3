package core

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
)

const (
	methodInitialize = "initialize"
	methodListen     = "subscriptions/listen"
)

// methodSpec describes a protocol method: its handler and the server capability it needs.
type methodSpec struct {
	handle func(c *Call) (any, error)
	// capability names the server capability the method needs ("" for none), dotted.
	capability string
}

// builtinMethods are the request methods the protocol defines.
var builtinMethods map[string]methodSpec

func init() {
	builtinMethods = map[string]methodSpec{
		methodInitialize:           {handle: handleInitialize},
		"ping":                     {handle: handlePing},
		"logging/setLevel":         {handle: handleSetLevel, capability: "logging"},
		"tools/list":               {handle: handleListTools, capability: "tools"},
		"tools/call":               {handle: handleCallTool, capability: "tools"},
		"prompts/list":             {handle: handleListPrompts, capability: "prompts"},
		"prompts/get":              {handle: handleGetPrompt, capability: "prompts"},
		"resources/list":           {handle: handleListResources, capability: "resources"},
		"resources/templates/list": {handle: handleListTemplates, capability: "resources"},
		"resources/read":           {handle: handleReadResource, capability: "resources"},
		"resources/subscribe":      {handle: handleSubscribe, capability: "resources.subscribe"},
		"resources/unsubscribe":    {handle: handleUnsubscribe, capability: "resources.subscribe"},
		"completion/complete":      {handle: handleComplete, capability: "completions"},
		"server/discover":          {handle: handleDiscover},
		methodListen:               {handle: handleListen},
	}
	for name := range builtinMethods {
		codec.KnownMethods(name)
	}
}

// hasCapability reports whether caps offers the dotted capability name.
func hasCapability(caps ServerCapabilities, name string) bool {
	switch name {
	case "":
		return true
	case "logging":
		return caps.Logging != nil
	case "tools":
		return caps.Tools != nil
	case "prompts":
		return caps.Prompts != nil
	case "resources":
		return caps.Resources != nil
	case "resources.subscribe":
		return caps.Resources != nil && caps.Resources.Subscribe
	case "completions":
		return caps.Completions != nil
	}
	return false
}

// supports reports whether the server offers the dotted capability name, without building the
// whole capability set.
func (s *Server) supports(name string) bool {
	if name == "" {
		return true
	}
	if s.opts.Capabilities != nil {
		return hasCapability(*s.opts.Capabilities, name)
	}
	switch name {
	case "logging":
		return true
	case "completions":
		return s.opts.CompletionHandler != nil
	case "resources.subscribe":
		return s.opts.SubscribeHandler != nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch name {
	case "tools":
		return s.tools.len() > 0
	case "prompts":
		return s.prompts.len() > 0
	case "resources":
		return s.resources.len() > 0 || s.templates.len() > 0 || s.opts.SubscribeHandler != nil || s.offersSources()
	}
	return false
}

// resolve finds the handler of the call's method, or the error that answers it: -32601 for a
// method nobody serves (and for a notification method sent as a request), -32603 when the server
// does not offer the capability the method needs.
func (c *Call) resolve() {
	s := c.session.server
	if spec, ok := builtinMethods[c.msg.Method]; ok {
		// The lifecycle decides first whether the method exists at all for this request.
		if c.early = c.classify(); c.early != nil {
			return
		}
		if !s.supports(spec.capability) {
			c.early = jsonrpc.InternalError(fmt.Sprintf("Server does not support %s (required for %s)", spec.capability, c.msg.Method))
			return
		}
		c.handler = spec.handle
		return
	}
	if strings.HasPrefix(c.msg.Method, "notifications/") {
		c.early = typedError(jsonrpc.CodeMethodNotFound, c.msg.Method)
		return
	}
	if m := s.extMethods[c.msg.Method]; m != nil {
		c.resolveExtension(m)
		return
	}
	s.mu.RLock()
	custom := s.methods[c.msg.Method]
	s.mu.RUnlock()
	if custom == nil {
		c.early = typedError(jsonrpc.CodeMethodNotFound, c.msg.Method)
		return
	}
	if c.early = c.classify(); c.early != nil {
		return
	}
	c.custom, c.handler = custom, runCustom
}

// runCustom is the handler of a method registered with HandleMethod or served by an extension:
// the call's MethodHandler, without a closure made per call.
func runCustom(c *Call) (any, error) { return c.custom(c.ctx, c) }

// resolveExtension resolves a method an extension serves: the lifecycle first, then the
// extension's capability and the core capability the method needs.
func (c *Call) resolveExtension(m *extMethod) {
	s := c.session.server
	if c.early = c.classify(); c.early != nil {
		return
	}
	need := ""
	switch {
	case !s.extensionSupported(m.ext):
		need = m.ext.name()
	case !s.supports(m.spec.Capability):
		need = m.spec.Capability
	}
	if need != "" {
		c.early = jsonrpc.InternalError(fmt.Sprintf("Server does not support %s (required for %s)", need, c.msg.Method))
		return
	}
	c.custom, c.handler = m.spec.Handle, runCustom
}

// execute serves the call and returns the response to send, or nil when the client cancelled it.
// The call is removed from the session's in-flight set when Run returns.
func (c *Call) execute() *Response {
	defer c.session.finish(c)
	defer c.cancelFn(nil)
	defer c.setOver()
	c.startObserving()
	result, resp := c.serve()
	c.endObserving(resp, result)
	return resp
}

// serve runs the handler and builds the response (nil when the client cancelled the request);
// it also returns the handler's result, for the observer.
func (c *Call) serve() (any, *Response) {
	result, err := c.dispatch()
	if err != nil {
		if ir := (*InputRequiredError)(nil); errors.As(err, &ir) {
			result, err = c.answerInputRequired(ir)
		}
	}
	if c.Cancelled() {
		return result, nil
	}
	if err != nil {
		var typed *jsonrpc.Error
		if !errors.As(err, &typed) {
			// Only the code and a generic message reach the client: the text goes to the log.
			c.session.server.logError(fmt.Errorf("mcpkit: %s: %w", c.msg.Method, err))
		}
		werr := asWireError(err, "Internal error handling "+c.msg.Method+" request")
		if c.modern != nil && werr.Code == jsonrpc.CodeURLElicitationRequired {
			// The 2026-07-28 lifecycle has no -32042: URL elicitation goes through input_required.
			werr = jsonrpc.InternalError("URL elicitation required: the 2026-07-28 lifecycle needs an input_required result instead")
		}
		return result, &Response{ID: c.msg.ID, Error: werr}
	}
	resp, merr := c.respond(result)
	if merr != nil {
		c.session.server.logError(fmt.Errorf("mcpkit: encoding the result of %s: %w", c.msg.Method, merr))
		return result, &Response{ID: c.msg.ID, Error: jsonrpc.InternalError("Internal error handling " + c.msg.Method + " request")}
	}
	if c.modern != nil || c.msg.Method == "server/discover" {
		c.lockModern()
	}
	return result, resp
}

// respond writes the response to a successful call in one buffer: the JSON-RPC envelope, the
// result and, on the 2026-07-28 lifecycle, the members it requires (see stampModern).
func (c *Call) respond(result any) (*Response, error) {
	stamp := c.modern != nil || c.msg.Method == "server/discover"
	sb := getScratch()
	defer putScratch(sb)
	body, stamped, err := c.appendResult((*sb)[:0], result, stamp)
	*sb = body[:0]
	if err != nil {
		return nil, err
	}
	room := len(body) + 48
	if stamp && !stamped {
		room += c.stampRoom()
	}
	b := make([]byte, 0, room)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = codec.AppendID(b, c.msg.ID)
	b = append(b, `,"result":`...)
	start := len(b)
	if stamp && !stamped {
		b = c.appendStamped(b, body)
	} else {
		b = append(b, body...)
	}
	b = append(b, '}')
	end := len(b) - 1
	c.resp = Response{ID: c.msg.ID, Result: b[start:end:end], wire: b, wireID: c.msg.ID}
	return &c.resp, nil
}

// appendResult appends the encoded result; stamped reports whether the 2026-07-28 members are
// written already (tool results write them in the same pass).
func (c *Call) appendResult(dst []byte, result any, stamp bool) (out []byte, stamped bool, err error) {
	if result == nil {
		return append(dst, "{}"...), false, nil
	}
	var info []byte
	if stamp {
		if c.session.server.cacheable(c.msg.Method) {
			out, err = appendJSON(dst, result)
			return out, false, err
		}
		info = c.session.server.serverInfoJSON()
	}
	switch r := result.(type) {
	case *toolWire:
		defer r.release()
		out, err = r.appendTo(dst, info)
		return out, stamp, err
	case *CallToolResult:
		if r != nil && r.StructuredContent == nil {
			w := toolWire{res: r}
			out, err = w.appendTo(dst, info)
			return out, stamp, err
		}
	}
	out, err = appendJSON(dst, result)
	return out, false, err
}

func (c *Call) dispatch() (result any, err error) {
	if c.early != nil {
		return nil, c.early
	}
	defer func() {
		if v := recover(); v != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: panic serving %s: %v\n%s", c.msg.Method, v, debug.Stack()))
			result, err = nil, jsonrpc.InternalError("Internal error handling "+c.msg.Method+" request")
		}
	}()
	// Before the handler: an input_required retry's requestState is verified (the principal
	// check runs the server's own code, hence inside the recover) and its inputResponses checked.
	if e := c.prepareRetry(); e != nil {
		return nil, e
	}
	return c.handler(c)
}

// emptyResult is the `{}` result of ping, logging/setLevel and the subscription methods.
type emptyResult struct {
	Meta Meta `json:"_meta,omitzero"`
}

func handlePing(*Call) (any, error) { return emptyResult{}, nil }

// objectParams decodes params into v; absent params leave v as is. Params that are not an
// object are -32602.
func objectParams(c *Call, v any) error {
	if c.msg.Params == nil {
		return nil
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, v) != nil {
		return jsonrpc.InvalidParams("Invalid params")
	}
	return nil
}
