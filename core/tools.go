package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolHandler serves tools/call for one tool. Returning a *Error sends that protocol error; any
// other error becomes -32603 without its text. Report failures the model should see with
// ErrorResult instead.
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
	Arguments jsontext.Value
}

type toolEntry struct {
	tool     Tool
	handler  ToolHandler
	required []string
	input    *validator.Schema
	output   *validator.Schema
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
	e, err := newToolEntry(*t, h)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.tools.set(t.Name, e)
	s.mu.Unlock()
	s.notifyListChanged("notifications/tools/list_changed")
}

// AddTool registers a typed tool: the input schema is derived from In (a struct) unless
// t.InputSchema is set, the output schema from Out unless Out is an interface type or
// t.OutputSchema is set. Arguments are validated against the input schema before they are
// decoded into In; structured output is validated against the output schema.
func AddTool[In, Out any](s *Server, t *Tool, h TypedToolHandler[In, Out]) {
	if t == nil || h == nil {
		panic("mcpkit: AddTool needs a tool and a handler")
	}
	tool := *t
	if tool.InputSchema == nil {
		schema, err := schemaFor[In]()
		if err != nil {
			panic(fmt.Sprintf("mcpkit: AddTool %q: input schema: %v", t.Name, err))
		}
		tool.InputSchema = schema
	}
	if tool.OutputSchema == nil && reflect.TypeFor[Out]().Kind() != reflect.Interface {
		schema, err := schemaFor[Out]()
		if err != nil {
			panic(fmt.Sprintf("mcpkit: AddTool %q: output schema: %v", t.Name, err))
		}
		tool.OutputSchema = schema
	}
	raw := func(ctx context.Context, req *ToolRequest) (*CallToolResult, error) {
		var in In
		if err := unmarshal(req.Arguments, &in); err != nil {
			return ErrorResult("Invalid arguments: " + err.Error()), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &CallToolResult{}
		}
		if res.StructuredContent == nil && reflect.TypeFor[Out]().Kind() != reflect.Interface {
			res.StructuredContent = out
		}
		return res, nil
	}
	s.AddTool(&tool, raw)
}

// RemoveTools removes tools by name and announces the change.
func (s *Server) RemoveTools(names ...string) {
	changed := false
	s.mu.Lock()
	for _, n := range names {
		changed = s.tools.remove(n) || changed
	}
	s.mu.Unlock()
	if changed {
		s.notifyListChanged("notifications/tools/list_changed")
	}
}

// schemaFor derives a JSON Schema (2020-12) for T.
func schemaFor[T any]() (jsontext.Value, error) {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	if sch.Type == "" && len(sch.Types) == 0 {
		sch.Type = "object"
	}
	if sch.Type == "object" && sch.Properties == nil {
		sch.Properties = map[string]*jsonschema.Schema{}
	}
	b, err := marshal(sch)
	if err != nil {
		return nil, err
	}
	return jsontext.Value(b), nil
}

func newToolEntry(t Tool, h ToolHandler) (*toolEntry, error) {
	if !ValidToolName(t.Name) {
		return nil, fmt.Errorf("mcpkit: invalid tool name %q: use 1-128 characters of A-Z a-z 0-9 _ - .", t.Name)
	}
	if t.InputSchema == nil {
		t.InputSchema = jsontext.Value(`{"type":"object","properties":{}}`)
	}
	var top struct {
		Type     jsontext.Value `json:"type"`
		Required []string       `json:"required"`
	}
	if !rawObject(t.InputSchema) || unmarshal(t.InputSchema, &top) != nil || string(top.Type) != `"object"` {
		return nil, fmt.Errorf("mcpkit: tool %q: the input schema must be a JSON Schema object with \"type\": \"object\"", t.Name)
	}
	input, err := compileSchema("input", t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("mcpkit: tool %q: input schema: %w", t.Name, err)
	}
	e := &toolEntry{tool: t, handler: h, required: top.Required, input: input}
	if t.OutputSchema != nil {
		if !rawObject(t.OutputSchema) {
			return nil, fmt.Errorf("mcpkit: tool %q: the output schema must be a JSON object", t.Name)
		}
		if e.output, err = compileSchema("output", t.OutputSchema); err != nil {
			return nil, fmt.Errorf("mcpkit: tool %q: output schema: %w", t.Name, err)
		}
	}
	return e, nil
}

// refuseLoader keeps schemas self-contained: no reference is ever fetched from anywhere.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

func compileSchema(kind string, schema jsontext.Value) (*validator.Schema, error) {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.UseLoader(refuseLoader{})
	url := "mem:///" + kind + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// validate checks data against a compiled schema and returns the violations as one line.
func validate(sch *validator.Schema, data jsontext.Value) string {
	inst, err := validator.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	err = sch.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var msgs []string
	for _, line := range strings.Split(ve.Error(), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "- ") {
			msgs = append(msgs, strings.TrimPrefix(line, "- "))
		}
	}
	if len(msgs) == 0 {
		return ve.Error()
	}
	return strings.Join(msgs, ", ")
}

type listToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitzero"`
	Meta       Meta   `json:"_meta,omitzero"`
	cacheable
	modern
}

func handleListTools(c *Call) (any, error) {
	cursor, err := listParams(c)
	if err != nil {
		return nil, err
	}
	s := c.session.server
	s.mu.RLock()
	entries := s.tools.values()
	s.mu.RUnlock()
	page, next, err := paginate(entries, cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := &listToolsResult{Tools: make([]Tool, len(page)), NextCursor: next}
	for i, e := range page {
		res.Tools[i] = e.tool
	}
	return res, nil
}

func handleCallTool(c *Call) (any, error) {
	var p struct {
		Name      jsontext.Value `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	}
	if !rawObject(c.params) || unmarshal(c.params, &p) != nil {
		return nil, InvalidParams("Invalid params")
	}
	var name string
	if p.Name.Kind() != '"' || unmarshal(p.Name, &name) != nil {
		return nil, InvalidParams("Missing or invalid tool name")
	}
	s := c.session.server
	s.mu.RLock()
	e, ok := s.tools.get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, InvalidParams("Tool not found: " + name)
	}
	args := p.Arguments
	if args == nil || string(args) == "null" {
		args = jsontext.Value("{}")
	}
	if !rawObject(args) {
		return ErrorResult("Invalid arguments: arguments must be an object"), nil
	}
	if missing := missingRequired(e.required, args); len(missing) > 0 {
		return ErrorResult("Missing required arguments: " + strings.Join(missing, ", ")), nil
	}
	if !s.opts.SkipArgumentValidation {
		if msg := validate(e.input, args); msg != "" {
			return ErrorResult("Invalid arguments: " + msg), nil
		}
	}
	res, err := runTool(c, e, name, args)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CallToolResult{}
	}
	if e.output != nil && !res.IsError && res.StructuredContent != nil {
		b, err := marshal(res.StructuredContent)
		if err != nil || validate(e.output, b) != "" {
			s.logError(fmt.Errorf("mcpkit: tool %q returned structured content that does not match its output schema", name))
			return nil, InternalError("Internal error calling tool " + name)
		}
	}
	if res.StructuredContent != nil && len(res.Content) == 0 {
		// A client that does not read structuredContent still sees the value.
		b, err := marshal(res.StructuredContent)
		if err == nil {
			res.Content = []Content{TextContent(string(b))}
		}
	}
	return res, nil
}

func runTool(c *Call, e *toolEntry, name string, args jsontext.Value) (res *CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.session.server.logError(fmt.Errorf("mcpkit: panic in tool %q: %v\n%s", name, v, debug.Stack()))
			res, err = nil, InternalError("Internal error calling tool "+name)
		}
	}()
	res, err = e.handler(c.ctx, &ToolRequest{Call: c, Name: name, Arguments: args})
	if err != nil {
		var we *Error
		if !errors.As(err, &we) {
			c.session.server.logError(fmt.Errorf("mcpkit: tool %q: %w", name, err))
			return nil, InternalError("Internal error calling tool " + name)
		}
	}
	return res, err
}

// missingRequired lists the required names absent from the arguments object, in schema order.
func missingRequired(required []string, args jsontext.Value) []string {
	if len(required) == 0 {
		return nil
	}
	var present map[string]jsontext.Value
	if unmarshal(args, &present) != nil {
		return nil
	}
	var missing []string
	for _, r := range required {
		if _, ok := present[r]; !ok {
			missing = append(missing, r)
		}
	}
	return missing
}
