// Package flatstruct encodes and decodes flat structs (exported fields of strings, booleans and
// numbers, nothing nested) exactly as the json package the kit uses does with its default
// options, without the setup that package makes for every value: the usual typed tool's input
// and output.
//
// Its answers are one-sided, like the scanner's: ok means the result is byte for byte (or field
// for field) what the json package produces; false means only "not settled here" (a value the
// codec leaves to the json package, which also words any error). A type the codec cannot
// mirror exactly gets no codec at all (For returns the zero Codec, whose methods always answer
// false).
package flatstruct

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Codec is the codec of the flat struct type T; the zero Codec settles nothing.
type Codec[T any] struct{ c *codec }

// For returns the codec of T, or the zero Codec when T is not a flat struct: a struct type
// without methods whose fields are exported strings, booleans, integers or floating-point
// numbers (of types without methods), tagged with at most a name, omitempty and omitzero, and
// whose JSON names are unique; unexported fields without a json tag are skipped, as the json
// package skips them. A struct with a float field decodes here but is always encoded by the
// json package (its number formatting is not repeated here).
func For[T any]() Codec[T] { return Codec[T]{c: build(reflect.TypeFor[T]())} }

// Decode fills *v from the JSON object data and reports whether it settled the value. On false,
// *v may be partly written: the caller resets it before handing data to the json package.
func (c Codec[T]) Decode(data []byte, v *T) bool {
	return c.c != nil && c.c.decode(data, unsafe.Pointer(v))
}

// Append appends the encoding of *v to dst and reports whether it settled it. On false, dst is
// returned unchanged in length (its spare capacity may have been written).
func (c Codec[T]) Append(dst []byte, v *T) ([]byte, bool) {
	if c.c == nil || !c.c.encodes {
		return dst, false
	}
	return c.c.append(dst, unsafe.Pointer(v))
}

// AppendAny is Append for a value held as an interface: it settles v only when v is a *T (not
// nil).
func (c Codec[T]) AppendAny(dst []byte, v any) ([]byte, bool) {
	p, ok := v.(*T)
	if !ok || p == nil {
		return dst, false
	}
	return c.Append(dst, p)
}

// Encodes reports whether Append settles every value of T it is given with valid UTF-8 strings.
func (c Codec[T]) Encodes() bool { return c.c != nil && c.c.encodes }

// codec is the type-independent part: the fields of one flat struct type.
type codec struct {
	fields []field
	// encodes: no field is a float (whose formatting the json package does by rules of its
	// own), so append settles every value with valid strings.
	encodes bool
}

type field struct {
	name string // the JSON name
	// member is the name quoted and followed by ':', as the encoding writes it.
	member    []byte
	offset    uintptr
	kind      reflect.Kind
	omitEmpty bool // omitted when it encodes as "" (a string field only: nothing else is empty)
	omitZero  bool // omitted when it is the zero value
}

// build returns the codec of t, or nil when t is not a flat struct.
func build(t reflect.Type) *codec {
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).NumMethod() != 0 {
		return nil
	}
	c := &codec{encodes: true}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if sf.Anonymous {
			return nil // embedded fields are promoted by rules of their own
		}
		if !sf.IsExported() || tag == "-" {
			continue // skipped, as the json package skips them (or refuses the type: below)
		}
		f, ok := newField(sf, tag)
		if !ok {
			return nil
		}
		if f.kind == reflect.Float32 || f.kind == reflect.Float64 {
			c.encodes = false
		}
		c.fields = append(c.fields, f)
	}
	// What the json package refuses in a type (a repeated name, a repeated option, a tag on an
	// unexported field, no exported field at all) it refuses for its zero value too: such a type
	// is not the codec's either.
	zero := reflect.New(t).Interface()
	if _, err := json.Marshal(zero); err != nil || json.Unmarshal([]byte(`{}`), zero) != nil {
		return nil
	}
	return c
}

// newField reads one exported field, or reports that the codec cannot mirror it.
func newField(sf reflect.StructField, tag string) (field, bool) {
	ft := sf.Type
	if reflect.PointerTo(ft).NumMethod() != 0 {
		return field{}, false // a method may change the encoding (MarshalJSON, MarshalText, ...)
	}
	switch ft.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	default:
		return field{}, false
	}
	f := field{name: sf.Name, offset: sf.Offset, kind: ft.Kind()}
	// The json package reads a name up to a comma, a backslash or a quote (a quoted name has a
	// syntax of its own), then options, each after a comma.
	cut := strings.IndexAny(tag, ",\\'\"`")
	if cut < 0 {
		cut = len(tag)
	}
	if name := tag[:cut]; name != "" {
		f.name = name
	}
	if opts := tag[cut:]; opts != "" {
		if opts[0] != ',' {
			return field{}, false
		}
		for _, opt := range strings.Split(opts[1:], ",") {
			switch opt {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			default:
				return field{}, false // string, case:..., format:..., or an empty option
			}
		}
	}
	quoted, err := jsontext.AppendQuote(nil, f.name)
	if err != nil {
		return field{}, false
	}
	f.member = append(quoted, ':')
	return f, true
}

// index returns the index of the field named name exactly (the json package matches names
// case-sensitively by default), or -1.
func (c *codec) index(name []byte) int {
	for i := range c.fields {
		if c.fields[i].name == string(name) {
			return i
		}
	}
	return -1
}
