package flatstruct

import (
	"unsafe"

	"github.com/go-json-experiment/json"
)

// Strict decodes the flat struct T from objects valid against one input schema, and settles no
// other: what it settles needs no check against that schema, and what it leaves is checked as
// before. The zero Strict settles nothing.
type Strict[T any] struct {
	c        *codec
	required uint64 // the fields the schema requires, one bit each (by index)
}

// Strict returns the strict decoder of T for the input schema sch, or false (and the zero
// Strict) when sch is not the shape a schema derived from T has: an object whose properties are
// exactly the fields of T, each typed as its field decodes ("string", "boolean", "integer",
// "number"), with annotations and at most the bounds of its integer kind; at the top a $schema
// naming 2020-12, required names of fields, additionalProperties false or absent. T has at most
// 64 fields.
func (c Codec[T]) Strict(sch []byte) (Strict[T], bool) {
	if c.c == nil || len(c.c.fields) > 64 {
		return Strict[T]{}, false
	}
	required, ok := c.c.admits(sch)
	if !ok {
		return Strict[T]{}, false
	}
	return Strict[T]{c: c.c, required: required}, true
}

// Decode fills *v from the JSON object data and reports whether it settled the value: true only
// for an object whose members are fields of T, each once and of its field's kind (no null, no
// fraction or exponent in an integer, no number out of its field's range), naming every field
// the schema requires; *v is then exactly what the json package decodes, and data is valid
// against the schema. On false, *v may be partly written: the caller resets it.
func (s Strict[T]) Decode(data []byte, v *T) bool {
	if s.c == nil {
		return false
	}
	seen, ok := s.c.decodeWith(data, unsafe.Pointer(v), true)
	return ok && seen&s.required == s.required
}

// admits reports whether sch has the shape Strict takes (see Codec.Strict), and the fields it
// requires.
func (c *codec) admits(sch []byte) (required uint64, ok bool) {
	top, ok := c.objectShape(sch)
	if !ok {
		return 0, false
	}
	if v, has := top["required"]; has {
		var names []string
		if json.Unmarshal(v, &names) != nil {
			return 0, false
		}
		for _, name := range names {
			i := c.index([]byte(name))
			if i < 0 {
				return 0, false // a name no member of T can carry: such an object is never valid
			}
			required |= 1 << i
		}
	}
	return required, true
}
