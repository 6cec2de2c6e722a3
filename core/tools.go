package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpkit/mcpkit/core/jsonrpc"
	"github.com/mcpkit/mcpkit/internal/flatstruct"
	"github.com/mcpkit/mcpkit/internal/schema"
)

// ToolHandler serves tools/call for one tool. A plain error it returns is a tool execution error:
// the client gets a result with isError set and the error's text as its one text block (the
// model reads it and can correct itself), and the error is logged (Options.Logger). Returning an
// ErrorResult does the same without the log line. (When the call was ended from outside first,
// by the end of the session or stream or by shutdown, the answer is -32603 instead.) Protocol
// errors stay JSON-RPC errors: a *Error
// (also wrapped, for example a *RequestTimeoutError, -32001) is sent as it is, and NeedInput goes
// through the input_required flow. A panic is -32603 "Internal error calling tool <name>",
// logged with its value and stack, which never reach the client. Do not put secrets in the
// text of errors a tool returns.
type ToolHandler func(ctx context.Context, req *ToolRequest) (*CallToolResult, error)

// TypedToolHandler serves a tool whose arguments decode into In. The structured output Out is
// sent as structuredContent (with a text copy when result is nil).
type TypedToolHandler[In, Out any] func(ctx context.Context, req *ToolRequest, in In) (result *CallToolResult, out Out, err error)

// ToolRequest is a tools/call request as a tool handler sees it.
type ToolRequest struct {
	*Call
	// Name is the tool's name.
	Name string
	// Arguments is the arguments object as sent ({} when absent), already validated against the
	// input schema.
	Arguments json.RawMessage

	// wire, set by a typed tool's handler, is storage for the result's wire form allocated with
	// the result (see typedResult); finishToolResult takes it once.
	wire *toolWire
}

// takeWire returns the storage a typed handler left for the wire form of its result, or a new
// one; the storage is handed out once.
func (r *ToolRequest) takeWire() *toolWire {
	w := r.wire
	if w == nil {
		return new(toolWire)
	}
	r.wire = nil
	return w
}

type toolEntry struct {
	tool     Tool
	handler  ToolHandler
	required []string
	input    *validator.Schema
	output   *validator.Schema
	headers  []paramHeader // arguments mirrored in Mcp-Param-* headers
	// typed is how a typed tool with a flat Out encodes its structured output (zero for any
	// other tool).
	typed typedOutput
	// checksInput: the handler checks its own arguments (a typed tool whose strict decoder
	// settles only what the input schema accepts, and checks what it leaves), so tools/call
	// does not check them first.
	checksInput bool

	// quickIn, quickOut and quickRequired are the one-pass checks of the input schema, the
	// output schema and the required members alone (nil where the schema is beyond them).
	quickIn, quickOut, quickRequired *schema.Quick
}

// ValidToolName reports whether name follows the tool name rules: 1 to 128 characters of
// A-Z, a-z, 0-9, '_', '-' and '.'.
func ValidToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// AddTool registers a tool with a hand-written input schema (t.InputSchema, a JSON Schema object
// with "type": "object"), replacing any tool of the same name. It panics on an invalid name or
// schema: those are programming errors.
func (s *Server) AddTool(t *Tool, h ToolHandler) {
	if t == nil || h == nil {
		panic("mcpkit: AddTool needs a tool and a handler")
	}
	s.addTool(t, h, typedOutput{})
}

// addTool registers a tool; typed says how a typed tool's structured output is encoded.
func (s *Server) addTool(t *Tool, h ToolHandler, typed typedOutput) {
	s.publishTool(mustToolEntry(t, h, typed))
}

// mustToolEntry is newToolEntry for addTool and AddTool: it panics on an invalid tool and
// records typed.
func mustToolEntry(t *Tool, h ToolHandler, typed typedOutput) *toolEntry {
	e, err := newToolEntry(*t, h)
	if err != nil {
		panic(err)
	}
	e.typed = typed
	return e
}

// publishTool puts the entry e in the registry, replacing the tool of its name, and announces
// the change.
func (s *Server) publishTool(e *toolEntry) {
	t := &e.tool
	s.mu.Lock()
	if err := s.toolChanging(t); err != nil {
		s.mu.Unlock()
		panic(fmt.Sprintf("mcpkit: AddTool %q: %v", t.Name, err))
	}
	_, had := s.tools.get(t.Name)
	s.tools.set(t.Name, e)
	s.tools.guard(t.Name, t.Visible != nil)
	s.mu.Unlock()
	s.notifyEntryChanged(ToolsListChanged, t.Name, !had)
}

// AddTool registers a typed tool: the input schema is derived from In (a struct) unless
// t.InputSchema is set, and the output schema from Out unless t.OutputSchema is set. Only an Out
// that encodes as a JSON object (a struct, a pointer to one, a map) gets an output schema: an
// interface type or any other type gets none. Arguments are validated against the input schema
// (member names match exactly) before they are decoded into In.
//
// Structured output follows these rules:
//   - On a successful result, Out becomes structuredContent (unless the handler set
//     result.StructuredContent itself) and, when result has no content, a text block with the
//     same JSON, for clients that do not read structuredContent.
//   - With an output schema, every successful result must carry structured content that matches
//     it: a nil Out (a nil pointer or map) or a value breaking the schema is the tool's bug, so
//     the client gets -32603 and the problem is logged.
//   - An error result (result.IsError, or a plain error returned, which becomes one) carries no
//     structured content: Out is ignored, and the output schema does not apply. A handler that
//     wants structured error details sets result.StructuredContent itself.
//   - An Out that does not encode as an object (a list, a scalar) is sent as a text block only,
//     since structuredContent must be an object.
func AddTool[In, Out any](s *Server, t *Tool, h TypedToolHandler[In, Out]) {
	if t == nil || h == nil {
		panic("mcpkit: AddTool needs a tool and a handler")
	}
	tool := *t
	if tool.InputSchema == nil {
		schema, err := schema.For[In]()
		if err != nil {
			panic(fmt.Sprintf("mcpkit: AddTool %q: input schema: %v", t.Name, err))
		}
		tool.InputSchema = schema
	}
	isInterface := reflect.TypeFor[Out]().Kind() == reflect.Interface
	if tool.OutputSchema == nil && !isInterface {
		schema, err := schema.For[Out]()
		if err != nil {
			panic(fmt.Sprintf("mcpkit: AddTool %q: output schema: %v", t.Name, err))
		}
		if objectSchema(schema) {
			tool.OutputSchema = schema
		}
	}
	// A flat In and Out (strings, booleans and numbers) skip the json package's setup: the
	// codec settles the usual value exactly as it would, and leaves it the rest. Under an input
	// schema of the shape derived from In, the strict decoder settles only arguments valid
	// against it: the handler then checks its own arguments (toolEntry.checksInput), and only
	// what the strict decoder leaves goes through the schema check.
	inCodec, outCodec := flatstruct.For[In](), flatstruct.For[Out]()
	input := &typedInput[In]{codec: inCodec, validate: !s.opts.SkipArgumentValidation}
	var checksInput bool
	input.strict, checksInput = inCodec.Strict(tool.InputSchema)
	var typed typedOutput
	if outCodec.Encodes() {
		typed.encode = outCodec.AppendAny
		typed.conforms = outCodec.Satisfies(tool.OutputSchema)
	}
	raw := func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		// One allocation holds the decoded input, the result and the output it points to.
		tr := new(typedResult[In, Out])
		if bad := input.decode(req.Arguments, &tr.in); bad != nil {
			return bad, nil
		}
		var zero In
		res, out, err := h(ctx, req, tr.in)
		tr.in = zero // the result must not keep the input alive (a task may keep the result)
		if err != nil {
			return nil, err
		}
		if res != nil && (res.IsError || res.StructuredContent != nil) {
			return res, nil // an error carries no output unless the handler set one
		}
		// A handler may return one result to many calls, so its own is copied, never changed.
		tr.out = out
		if res != nil {
			tr.res = *res
		}
		switch {
		case !isInterface:
			tr.res.StructuredContent = &tr.out // encoded through the pointer: no copy of out
		case any(out) != nil:
			tr.res.StructuredContent = out
		}
		req.wire = &tr.wire // only a result that is tr's own points the request at its storage
		return &tr.res, nil
	}
	input.entry = mustToolEntry(&tool, raw, typed)
	input.entry.checksInput = checksInput
	s.publishTool(input.entry) // after entry is set: no call runs before
}

// typedInput is how a typed tool decodes its arguments.
type typedInput[In any] struct {
	codec flatstruct.Codec[In]
	// strict settles only arguments valid against the tool's input schema (zero when that
	// schema is not of the shape derived from In: entry.checksInput is then false); when the
	// tool checks its own arguments, what strict leaves is checked with entry.checkCall.
	strict   flatstruct.Strict[In]
	entry    *toolEntry
	validate bool // !Options.SkipArgumentValidation
}

// decode decodes a call's arguments into *v, or returns the isError result that answers
// arguments the tool refuses.
func (ti *typedInput[In]) decode(args json.RawMessage, v *In) *CallToolResult {
	if ti.strict.Decode(args, v) {
		return nil
	}
	var zero In
	*v = zero // a decoder may have set some fields before it gave up
	if ti.entry.checksInput {
		if bad := ti.entry.checkCall(jsontext.Value(args), ti.validate); bad != nil {
			return bad
		}
	}
	if ti.codec.Decode(args, v) {
		return nil
	}
	*v = zero
	if err := unmarshal(args, v); err != nil {
		return ErrorResult("Invalid arguments: " + decodeProblem(err))
	}
	return nil
}

// typedOutput is how a typed tool with a flat Out (see flatstruct) encodes its structured
// output.
type typedOutput struct {
	// encode encodes the structured content when it is the *Out the tool made, exactly as
	// appendJSON would (false: appendJSON encodes it).
	encode func(dst []byte, v any) ([]byte, bool)
	// conforms: every encoding encode makes is valid against the output schema (its shape is
	// that of a schema derived from Out), so checking one tells nothing.
	conforms bool
}

// typedResult is a typed tool's result together with its structured output and the storage of
// its wire form (ToolRequest.wire), and the storage of the input the handler is called with (a
// copy of it; cleared once the handler returns).
type typedResult[In, Out any] struct {
	res  CallToolResult
	wire toolWire
	out  Out
	in   In
}

// objectSchema reports whether a schema's top level says "type": "object".
func objectSchema(schema []byte) bool {
	var top struct {
		Type jsontext.Value `json:"type"`
	}
	return rawObject(schema) && unmarshal(schema, &top) == nil && string(top.Type) == `"object"`
}

// RemoveTools removes tools by name and announces the change.
func (s *Server) RemoveTools(names ...string) {
	changed := false
	s.mu.Lock()
	for _, n := range names {
		if old, ok := s.tools.get(n); ok {
			s.toolLeaving(&old.tool)
		}
		changed = s.tools.remove(n) || changed
	}
	s.mu.Unlock()
	if changed {
		_ = s.notifyListChanged(context.Background(), "notifications/tools/list_changed")
	}
}

func newToolEntry(t Tool, h ToolHandler) (*toolEntry, error) {
	if !ValidToolName(t.Name) {
		return nil, fmt.Errorf("mcpkit: invalid tool name %q: use 1-128 characters of A-Z a-z 0-9 and \"_-.\"", t.Name)
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var top struct {
		Type     jsontext.Value `json:"type"`
		Required []string       `json:"required"`
	}
	if !rawObject(t.InputSchema) || unmarshal(t.InputSchema, &top) != nil || string(top.Type) != `"object"` {
		return nil, fmt.Errorf("mcpkit: tool %q: the input schema must be a JSON Schema object with \"type\": \"object\"", t.Name)
	}
	input, err := schema.Compile("input", t.InputSchema, false)
	if err != nil {
		return nil, fmt.Errorf("mcpkit: tool %q: input schema: %w", t.Name, err)
	}
	if x := t.Execution; x != nil {
		copied := *x // the caller's value is not shared
		t.Execution = &copied
	}
	e := &toolEntry{tool: t, handler: h, required: top.Required, input: input,
		quickIn: schema.CompileQuick(t.InputSchema, false)}
	if req, err := marshal(map[string]any{"type": "object", "required": top.Required}); err == nil && len(top.Required) > 0 {
		e.quickRequired = schema.CompileQuick(req, false)
	}
	if e.headers, err = paramHeaders(t.InputSchema); err != nil {
		return nil, fmt.Errorf("mcpkit: tool %q: %w", t.Name, err)
	}
	if t.OutputSchema != nil {
		if !objectSchema(t.OutputSchema) {
			return nil, fmt.Errorf("mcpkit: tool %q: the output schema must be a JSON Schema object with \"type\": \"object\"", t.Name)
		}
		if e.output, err = schema.Compile("output", t.OutputSchema, false); err != nil {
			return nil, fmt.Errorf("mcpkit: tool %q: output schema: %w", t.Name, err)
		}
		e.quickOut = schema.CompileQuick(t.OutputSchema, false)
	}
	return e, nil
}

type listToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitzero"`
	Meta       Meta   `json:"_meta,omitzero"`
	cacheable
	modern
}

func handleListTools(c *Call) (any, error) {
	items, next, filtered, err := listPage(c, &c.session.server.tools, func(e *toolEntry) Tool { return e.tool }, toolVisible, toolView)
	if err != nil {
		return nil, err
	}
	res := &listToolsResult{Tools: items, NextCursor: next}
	res.markPrivate(c, filtered)
	return res, nil
}

func handleCallTool(c *Call) (any, error) {
	name, args, perr := callToolParams(c)
	if perr != nil {
		return nil, perr
	}
	s := c.session.server
	s.mu.RLock()
	e, ok := s.tools.get(name)
	s.mu.RUnlock()
	if !ok || !seesEntry(c, e, toolVisible, toolView) {
		return nil, jsonrpc.InvalidParams("Tool not found: " + name)
	}
	if args == nil || string(args) == "null" {
		args = jsontext.Value("{}")
	}
	if len(s.callHooks) > 0 {
		tc := &ToolCall{Call: c, Tool: &e.tool, entry: e, args: args}
		for _, hook := range s.callHooks {
			if res, handled, err := hook(tc); handled || err != nil {
				return res, err
			}
		}
	}
	if !e.checksInput {
		if bad := e.checkCall(args, !s.opts.SkipArgumentValidation); bad != nil {
			return bad, nil
		}
	}
	res, err := runTool(c, e, name, json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	return finishToolResult(s, e, name, res, &c.toolReq)
}

// checkCall checks the arguments of a call: an object, then as checkArguments does.
func (e *toolEntry) checkCall(args jsontext.Value, validate bool) *CallToolResult {
	if !rawObject(args) {
		return ErrorResult("Invalid arguments: arguments must be an object")
	}
	return e.checkArguments(args, validate)
}

// toolChanging tells the extensions watching the tool registry that t is about to be
// registered, after telling them that the tool it replaces leaves; when one refuses it, the
// others are told t leaves and the replaced tool stays. s.mu is held.
func (s *Server) toolChanging(t *Tool) error {
	if len(s.toolHooks) == 0 {
		return nil
	}
	old, had := s.tools.get(t.Name)
	if had {
		s.toolLeaving(&old.tool)
	}
	for i, hook := range s.toolHooks {
		if err := hook(t, false); err != nil {
			for _, h := range s.toolHooks[:i] {
				_ = h(t, true)
			}
			if had {
				for _, h := range s.toolHooks {
					_ = h(&old.tool, false)
				}
			}
			return err
		}
	}
	return nil
}

// toolLeaving tells the extensions watching the tool registry that t leaves it; s.mu is held.
func (s *Server) toolLeaving(t *Tool) {
	for _, hook := range s.toolHooks {
		_ = hook(t, true)
	}
}

// ToolCall is a tools/call of a registered tool as an extension's CallTool hook sees it, before
// core checks the arguments and runs the tool (a typed tool under the schema derived from its
// flat input checks them itself, as it decodes them). A hook that answers the call itself checks the
// arguments with Check and runs the tool with Run (on the request's own Call or on one Detach
// made, to go on after the request is answered).
type ToolCall struct {
	// Call is the request.
	Call *Call
	// Tool is the registered tool; it must not be changed.
	Tool *Tool

	entry *toolEntry
	args  jsontext.Value
}

// Arguments returns the call's arguments as sent ({} when absent or null), not yet checked.
func (tc *ToolCall) Arguments() json.RawMessage { return json.RawMessage(tc.args) }

// Check checks the arguments as core does for a tool (an object; the required members; the
// input schema unless Options.SkipArgumentValidation): it returns the isError result that
// answers a call with bad arguments, or nil. Run checks nothing more, except for a typed tool
// that checks its own arguments, whose decoding settles only what Check accepts and checks the
// rest again.
func (tc *ToolCall) Check() *CallToolResult {
	return tc.entry.checkCall(tc.args, !tc.Call.session.server.opts.SkipArgumentValidation)
}

// Run runs the tool's handler on call (tc.Call, or a call Detach made from it) and checks its
// result as core does (structured content against the output schema): it returns what answers
// the call. A plain error of the handler is already an isError result; a protocol error, an
// InputRequiredError and the -32603 of a panic are returned as errors.
func (tc *ToolCall) Run(call *Call) (any, error) {
	res, err := runTool(call, tc.entry, tc.Tool.Name, json.RawMessage(tc.args))
	if err != nil {
		return nil, err
	}
	return finishToolResult(call.session.server, tc.entry, tc.Tool.Name, res, &call.toolReq)
}

// callToolParams returns the tool name and the raw arguments of a tools/call: from what the
// message decoder read already, or by reading params for a message it did not produce.
func callToolParams(c *Call) (string, jsontext.Value, *jsonrpc.Error) {
	if c.msg != nil && c.msg.Parsed && rawObject(c.msg.Params) {
		args, nameString := codec.Arguments(c.msg)
		if !nameString {
			return "", nil, jsonrpc.InvalidParams("Missing or invalid tool name")
		}
		return c.msg.Name, args, nil
	}
	var p struct {
		Name      jsontext.Value `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if !rawObject(c.msg.Params) || unmarshal(c.msg.Params, &p) != nil {
		return "", nil, jsonrpc.InvalidParams("Invalid params")
	}
	var name string
	if p.Name.Kind() != '"' || unmarshal(p.Name, &name) != nil {
		return "", nil, jsonrpc.InvalidParams("Missing or invalid tool name")
	}
	return name, p.Arguments, nil
}

// checkArguments checks a tool's arguments object: the required members always, the whole input
// schema when validate is set. It returns the isError result answering the call, or nil. The
// quick check settles the usual case of valid arguments without decoding them; anything else
// goes through the full validator, which words the problem.
func (e *toolEntry) checkArguments(args jsontext.Value, validate bool) *CallToolResult {
	switch {
	case validate && e.quickIn.Valid(args):
		return nil
	case !validate && (len(e.required) == 0 || e.quickRequired.Valid(args)):
		return nil
	}
	// One decode serves both the required check and the schema validation.
	inst, err := validator.UnmarshalJSON(bytes.NewReader(args))
	obj, _ := inst.(map[string]any)
	if err != nil || obj == nil {
		return ErrorResult("Invalid arguments: arguments must be an object")
	}
	if missing := missingRequired(e.required, obj); len(missing) > 0 {
		return ErrorResult("Missing required arguments: " + strings.Join(missing, ", "))
	}
	if validate {
		if msg := schema.ValidateValue(e.input, inst); msg != "" {
			return ErrorResult("Invalid arguments: " + msg)
		}
	}
	return nil
}

// runTool runs a tool handler and sorts out what it returned: a protocol error (a *Error, even
// wrapped, or an InputRequiredError) goes on as a JSON-RPC error; any other error is a tool execution
// error, answered as an isError result with the error's text so the model can read it; a panic
// is -32603 without its value. Both of the latter are logged.
func runTool(c *Call, e *toolEntry, name string, args json.RawMessage) (res *CallToolResult, err error) {
	s := c.session.server
	defer func() {
		if v := recover(); v != nil {
			s.logError(fmt.Errorf("mcpkit: panic in tool %q: %v\n%s", name, v, debug.Stack()))
			res, err = nil, jsonrpc.InternalError("Internal error calling tool "+name)
		}
	}()
	c.toolReq = ToolRequest{Call: c, Name: name, Arguments: args}
	res, err = e.handler(c.ctx, &c.toolReq)
	if err == nil {
		return res, nil
	}
	var we *jsonrpc.Error
	var ir *InputRequiredError
	var ni *NeedInputError
	switch {
	case errors.As(err, &we), errors.As(err, &ir):
		return res, err
	case errors.As(err, &ni):
		// A handler that did not know the 2026-07-28 rule: nothing the model could act on.
		s.logError(fmt.Errorf("mcpkit: tool %q: %w", name, err))
		return nil, jsonrpc.InternalError("Internal error calling tool " + name)
	}
	if c.ctx.Err() != nil {
		// The call was ended from outside (the session or the stream went away, the server shuts
		// down): what the handler returns then is no tool failure for the model to read.
		return nil, jsonrpc.InternalError("Internal error calling tool " + name)
	}
	s.logger().Error().Str("tool", name).Err(err).Msg("mcpkit: tool returned an error; the client gets it as an isError result")
	return ErrorResult(err.Error()), nil
}

// missingRequired lists the required names absent from the arguments object, in schema order.
func missingRequired(required []string, args map[string]any) []string {
	var missing []string
	for _, r := range required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	return missing
}
