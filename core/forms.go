package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// Form is the schema of an elicitation form, in the restricted subset of JSON Schema the
// elicitation specification allows: a flat object whose properties are primitives (a string,
// possibly with a format, a number or integer, a boolean, a single-select enum or a multi-select
// list of strings), with titles, descriptions and defaults. Build one from a Go struct with
// FormOf, or from a *jsonschema.Schema with NewForm; set it as ElicitParams.Form (for
// Call.Elicit or ElicitInput). It checks the client's answer: defaults fill the members the
// user left out, then the content is validated against the schema. A Form is immutable and
// safe for concurrent use.
type Form struct {
	raw       json.RawMessage
	defaults  map[string]any
	validator *validator.Schema // the schema, formats asserted
}

// NewForm checks that s is an elicitation form schema and compiles it. A schema with nesting,
// references, combinators or keywords the elicitation specification does not define is refused
// with an error saying which.
func NewForm(s *jsonschema.Schema) (*Form, error) {
	if s == nil {
		return nil, errors.New("mcpkit: NewForm needs a schema")
	}
	b, err := marshal(s)
	if err != nil {
		return nil, fmt.Errorf("mcpkit: form schema: %w", err)
	}
	return parseForm(jsontext.Value(b))
}

var formCache sync.Map // reflect.Type -> *Form

// FormOf returns the form of the struct type T: one property per exported field, named after
// its json tag, typed after the field (a string, a bool, an integer or float kind, or a pointer
// to one for an optional member), described by its jsonschema tag; fields without
// omitempty/omitzero are required. Enumerations (single or multi-select), formats, bounds and
// defaults need NewForm with a schema that says them: start from FormOf[T]().Schema() and add
// them. It panics, naming T, when T is not a struct of such fields: a programming error. The
// form of each type is derived once.
func FormOf[T any]() *Form {
	t := reflect.TypeFor[T]()
	if f, ok := formCache.Load(t); ok {
		return f.(*Form)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("mcpkit: FormOf[%s]: a form is a struct of primitive fields", t))
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		panic(fmt.Sprintf("mcpkit: FormOf[%s]: %v", t, err))
	}
	s.AdditionalProperties = nil // the form is closed anyway; the keyword is not in the subset
	for _, p := range s.Properties {
		// A field of pointer type is "null or T": a form has no null, only absence.
		if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
			p.Type, p.Types = p.Types[slices.Index(p.Types, "null")^1], nil
		}
	}
	f, err := NewForm(s)
	if err != nil {
		panic(fmt.Sprintf("mcpkit: FormOf[%s]: %v", reflect.TypeFor[T](), err))
	}
	got, _ := formCache.LoadOrStore(reflect.TypeFor[T](), f)
	return got.(*Form)
}

// Schema returns the form's schema as sent in requestedSchema.
func (f *Form) Schema() *jsonschema.Schema {
	var s jsonschema.Schema
	_ = unmarshal(f.raw, &s)
	return &s
}

// Check applies the defaults to the members content lacks and validates the result against the
// form. It returns a new map (content is left alone), or an *ElicitAnswerError naming what is
// wrong.
func (f *Form) Check(content map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(content)+len(f.defaults))
	for k, v := range content {
		out[k] = v
	}
	for k, v := range f.defaults {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	b, err := marshal(out)
	if err != nil {
		return nil, &ElicitAnswerError{Reason: err.Error()}
	}
	inst, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, &ElicitAnswerError{Reason: err.Error()}
	}
	if msg := schema.ValidateValue(f.validator, inst); msg != "" {
		return nil, &ElicitAnswerError{Reason: msg}
	}
	var checked map[string]any
	if err := unmarshal(b, &checked); err != nil {
		return nil, &ElicitAnswerError{Reason: err.Error()}
	}
	return checked, nil
}

// emptyForm is the form of an elicitation that asks for nothing but a decision.
var emptyForm = sync.OnceValue(func() *Form {
	f, err := parseForm(jsontext.Value(`{"type":"object","properties":{}}`))
	if err != nil {
		panic(err)
	}
	return f
})

// formFor returns the form an ElicitParams asks for: Form, else RequestedSchema checked, else
// the empty form.
func formFor(p *ElicitParams) (*Form, error) {
	switch {
	case p.Form != nil && p.RequestedSchema != nil:
		return nil, errors.New("mcpkit: ElicitParams: set Form or RequestedSchema, not both")
	case p.Form != nil:
		return p.Form, nil
	case p.RequestedSchema != nil:
		return parseForm(p.RequestedSchema)
	}
	return emptyForm(), nil
}

// checkAnswer applies the form to an accepted answer in place; any other action carries no
// content to check.
func (f *Form) checkAnswer(res *ElicitResult) error {
	if res.Action != "accept" {
		return nil
	}
	content, err := f.Check(res.Content)
	if err != nil {
		var ae *ElicitAnswerError
		if errors.As(err, &ae) {
			ae.Result = res
		}
		return err
	}
	res.Content = content
	return nil
}

// FormResponse returns the elicitation response under key of a NeedInput retry (or of the
// legacy shim's round), checked against form, the one the handler asked with: on accept the
// defaults fill what the user left out and the content is validated (an *ElicitAnswerError
// otherwise). It returns nil and no error when there is no elicitation response under key: ask
// for it (again) then.
func (c *Call) FormResponse(key string, form *Form) (*ElicitResult, error) {
	r, ok := c.ElicitResponse(key)
	if !ok {
		return nil, nil
	}
	if form == nil {
		form = emptyForm()
	}
	if err := form.checkAnswer(r); err != nil {
		return nil, err
	}
	return r, nil
}

// ElicitAs asks the user to fill in the form of T (FormOf) with Call.Elicit and, on accept,
// decodes the checked content (defaults applied) into a T. The result tells the action; T is
// the zero value unless the user accepted. Legacy lifecycle only, like Call.Elicit: on a
// 2026-07-28 request it fails with a *NeedInputError (use ElicitInput with FormOf[T]() and
// FormResponseAs there).
func ElicitAs[T any](ctx context.Context, c *Call, message string, opts ...RequestOption) (T, *ElicitResult, error) {
	var zero T
	res, err := c.Elicit(ctx, &ElicitParams{Message: message, Form: FormOf[T]()}, opts...)
	if err != nil {
		return zero, nil, err
	}
	v, err := decodeContent[T](res)
	return v, res, err
}

// FormResponseAs is FormResponse with the form of T, decoding the checked content into a T. It
// returns a nil result and no error when there is no elicitation response under key.
func FormResponseAs[T any](c *Call, key string) (T, *ElicitResult, error) {
	var zero T
	res, err := c.FormResponse(key, FormOf[T]())
	if err != nil || res == nil {
		return zero, nil, err
	}
	v, err := decodeContent[T](res)
	return v, res, err
}

func decodeContent[T any](res *ElicitResult) (T, error) {
	var v T
	if res.Action != "accept" {
		return v, nil
	}
	b, err := marshal(res.Content)
	if err == nil {
		err = unmarshal(b, &v)
	}
	if err != nil {
		return v, &ElicitAnswerError{Reason: err.Error(), Result: res}
	}
	return v, nil
}

// ElicitAnswerError reports that the content of an accepted elicitation does not match the
// requested schema. Result is the client's answer as received.
type ElicitAnswerError struct {
	Reason string
	Result *ElicitResult
}

func (e *ElicitAnswerError) Error() string {
	return "mcpkit: the elicitation answer does not match the requested schema: " + e.Reason
}

// formMetaSchema describes the subset of JSON Schema an elicitation form may use (the
// PrimitiveSchemaDefinition of the specification), each kind closed to its own keywords.
const formMetaSchema = `{
  "type": "object",
  "required": ["type", "properties"],
  "additionalProperties": false,
  "properties": {
    "$schema": {"type": "string"},
    "type": {"const": "object"},
    "required": {"type": "array", "items": {"type": "string"}},
    "properties": {"type": "object", "additionalProperties": {"$ref": "#/$defs/primitive"}}
  },
  "$defs": {
    "text": {"type": "string"},
    "count": {"type": "integer", "minimum": 0},
    "strings": {"type": "array", "items": {"type": "string"}},
    "option": {
      "type": "object", "required": ["const", "title"], "additionalProperties": false,
      "properties": {"const": {"type": "string"}, "title": {"type": "string"}}
    },
    "primitive": {"anyOf": [
      {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {
        "type": {"const": "string"}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"type": "string"}, "minLength": {"$ref": "#/$defs/count"}, "maxLength": {"$ref": "#/$defs/count"},
        "format": {"enum": ["email", "uri", "date", "date-time"]}}},
      {"type": "object", "required": ["type", "enum"], "additionalProperties": false, "properties": {
        "type": {"const": "string"}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"type": "string"}, "enum": {"$ref": "#/$defs/strings"}, "enumNames": {"$ref": "#/$defs/strings"}}},
      {"type": "object", "required": ["type", "oneOf"], "additionalProperties": false, "properties": {
        "type": {"const": "string"}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"type": "string"}, "oneOf": {"type": "array", "items": {"$ref": "#/$defs/option"}}}},
      {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {
        "type": {"enum": ["number", "integer"]}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"type": "number"}, "minimum": {"type": "number"}, "maximum": {"type": "number"}}},
      {"type": "object", "required": ["type"], "additionalProperties": false, "properties": {
        "type": {"const": "boolean"}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"type": "boolean"}}},
      {"type": "object", "required": ["type", "items"], "additionalProperties": false, "properties": {
        "type": {"const": "array"}, "title": {"$ref": "#/$defs/text"}, "description": {"$ref": "#/$defs/text"},
        "default": {"$ref": "#/$defs/strings"}, "minItems": {"$ref": "#/$defs/count"}, "maxItems": {"$ref": "#/$defs/count"},
        "items": {"anyOf": [
          {"type": "object", "required": ["type", "enum"], "additionalProperties": false, "properties": {
            "type": {"const": "string"}, "enum": {"$ref": "#/$defs/strings"}}},
          {"type": "object", "required": ["anyOf"], "additionalProperties": false, "properties": {
            "anyOf": {"type": "array", "items": {"$ref": "#/$defs/option"}}}}
        ]}}}
    ]}
  }
}`

var formMeta = sync.OnceValue(func() *validator.Schema {
	sch, err := schema.Compile("elicitation-form", jsontext.Value(formMetaSchema), false)
	if err != nil {
		panic("mcpkit: the elicitation form meta-schema does not compile: " + err.Error())
	}
	return sch
})

// parseForm checks a raw requestedSchema against the subset and compiles it for answers.
func parseForm(raw []byte) (*Form, error) {
	inst, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("mcpkit: form schema: %w", err)
	}
	if msg := schema.ValidateValue(formMeta(), inst); msg != "" {
		return nil, fmt.Errorf("mcpkit: the form schema is not a flat object of primitive properties as elicitation allows: %s", msg)
	}
	var top struct {
		Properties map[string]jsontext.Value `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("mcpkit: form schema: %w", err)
	}
	for _, r := range top.Required {
		if _, ok := top.Properties[r]; !ok {
			return nil, fmt.Errorf("mcpkit: form schema: required %q is not a property", r)
		}
	}
	f := &Form{raw: bytes.Clone(raw), defaults: map[string]any{}}
	for name, p := range top.Properties {
		var d struct {
			Default jsontext.Value `json:"default"`
		}
		if unmarshal(p, &d) == nil && d.Default != nil {
			var v any
			if err := unmarshal(d.Default, &v); err != nil {
				return nil, fmt.Errorf("mcpkit: form schema: property %q: default: %w", name, err)
			}
			f.defaults[name] = v
		}
	}
	// Answers are checked against the schema as requested, formats asserted. Members it does not
	// name are let through, as the schema lets them.
	if f.validator, err = schema.Compile("form", raw, true); err != nil {
		return nil, fmt.Errorf("mcpkit: form schema: %w", err)
	}
	if len(f.defaults) > 0 {
		// A default its own property refuses would make every answer that relies on it wrong.
		optionalOnly := map[string]any{}
		if err := unmarshal(raw, &optionalOnly); err != nil {
			return nil, fmt.Errorf("mcpkit: form schema: %w", err)
		}
		delete(optionalOnly, "required")
		ob, _ := marshal(optionalOnly)
		optional, err := schema.Compile("form-defaults", jsontext.Value(ob), true)
		if err != nil {
			return nil, fmt.Errorf("mcpkit: form schema: %w", err)
		}
		db, _ := marshal(f.defaults)
		inst, _ := validator.UnmarshalJSON(bytes.NewReader(db))
		if msg := schema.ValidateValue(optional, inst); msg != "" {
			return nil, fmt.Errorf("mcpkit: form schema: a default does not match its property: %s", msg)
		}
	}
	return f, nil
}
