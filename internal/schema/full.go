package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// refuseLoader keeps schemas self-contained: no reference is ever fetched from anywhere.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

// Compile compiles a self-contained schema; assertFormat makes "format" a check rather
// than an annotation.
func Compile(kind string, schema []byte, assertFormat bool) (*validator.Schema, error) {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.UseLoader(refuseLoader{})
	if assertFormat {
		c.AssertFormat()
	}
	url := "mem:///" + kind + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Validate checks data against a compiled schema and returns the violations as one line.
func Validate(sch *validator.Schema, data []byte) string {
	inst, err := validator.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	return ValidateValue(sch, inst)
}

// ValidateValue checks a decoded instance against a compiled schema.
func ValidateValue(sch *validator.Schema, inst any) string {
	err := sch.Validate(inst)
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
