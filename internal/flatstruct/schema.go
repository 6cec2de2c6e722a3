package flatstruct

import (
	"math"
	"reflect"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/schema"
)

// Satisfies reports whether every encoding Append settles is valid against the JSON Schema
// sch, so that checking it would tell nothing new. It answers true only for the shape a
// schema derived from T has: an object whose properties are exactly the fields of T, each
// typed as its field encodes ("string", "boolean", "integer"), with at most the bounds of its
// integer kind and annotations (description, title; at the top, a $schema naming 2020-12);
// required names of fields that are never left out; additionalProperties false or absent.
// Anything else (a pattern, a length, an enum, tighter bounds, another dialect, a keyword it
// does not know) answers false.
func (c Codec[T]) Satisfies(sch []byte) bool {
	return c.c != nil && c.c.encodes && c.c.satisfies(sch)
}

// annotation lists the keywords that assert nothing.
func annotation(keyword string) bool { return keyword == "title" || keyword == "description" }

func (c *codec) satisfies(sch []byte) bool {
	top, ok := c.objectShape(sch)
	if !ok {
		return false
	}
	v, has := top["required"]
	return !has || c.neverOmitted(v)
}

// objectShape reads sch as an object schema whose properties are exactly the codec's fields,
// each satisfied by every value its field holds, with only the keywords the shape allows (the
// shape Satisfies and Strict share); it returns the top-level keywords, required not checked
// (each of them reads it its own way).
func (c *codec) objectShape(sch []byte) (map[string]jsontext.Value, bool) {
	var top map[string]jsontext.Value
	if json.Unmarshal(sch, &top) != nil || string(top["type"]) != `"object"` {
		return nil, false
	}
	for keyword, v := range top {
		switch {
		case keyword == "type", keyword == "required", annotation(keyword):
		case keyword == "$schema":
			if !schema.DefaultDialect(v) {
				return nil, false // another dialect, at the root only
			}
		case keyword == "properties":
			if !c.propertiesSatisfy(v) {
				return nil, false
			}
		case keyword == "additionalProperties":
			if string(v) != "false" {
				return nil, false // false: the value has no other member anyway
			}
		default:
			return nil, false
		}
	}
	if _, hasProperties := top["properties"]; !hasProperties && len(c.fields) != 0 {
		return nil, false
	}
	return top, true
}

// kindType returns the JSON Schema type every value of a field of kind k has.
func kindType(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return `"string"`
	case reflect.Bool:
		return `"boolean"`
	case reflect.Float32, reflect.Float64:
		return `"number"`
	}
	return `"integer"`
}

// propertiesSatisfy reports whether the properties keyword v has exactly the codec's fields,
// each satisfied by every value of its field.
func (c *codec) propertiesSatisfy(v jsontext.Value) bool {
	var props map[string]jsontext.Value
	if json.Unmarshal(v, &props) != nil || len(props) != len(c.fields) {
		return false
	}
	for i := range c.fields {
		f := &c.fields[i]
		raw, ok := props[f.name]
		if !ok || !f.satisfies(raw) {
			return false
		}
	}
	return true
}

// neverOmitted reports whether the required keyword v names only fields always encoded.
func (c *codec) neverOmitted(v jsontext.Value) bool {
	var names []string
	if json.Unmarshal(v, &names) != nil {
		return false
	}
	for _, name := range names {
		i := c.index([]byte(name))
		if i < 0 || c.fields[i].omitEmpty || c.fields[i].omitZero {
			return false
		}
	}
	return true
}

// satisfies reports whether every value of f encodes valid against the property schema raw.
func (f *field) satisfies(raw jsontext.Value) bool {
	var prop map[string]jsontext.Value
	if json.Unmarshal(raw, &prop) != nil {
		return false
	}
	want := kindType(f.kind)
	lo, hi := f.bounds()
	for keyword, v := range prop {
		switch {
		case keyword == "type":
			if string(v) != want {
				return false
			}
		case annotation(keyword):
		case keyword == "minimum" && lo != "" && string(v) == lo:
		case keyword == "maximum" && hi != "" && string(v) == hi:
		default:
			return false
		}
	}
	return prop["type"] != nil
}

// bounds returns the least and greatest values of an integer field as JSON numbers ("" for
// another kind).
func (f *field) bounds() (lo, hi string) {
	bits := intBits(f.kind)
	switch f.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	}
	return "", ""
}
