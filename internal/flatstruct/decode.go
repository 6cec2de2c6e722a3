package flatstruct

import (
	"bytes"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonbody"
)

var scanners = sync.Pool{New: func() any { return new(jsonbody.Scanner) }}

// decode fills the struct at p from the JSON object data as the json package does: members
// matched to fields by exact name, unknown members skipped (their text still read strictly),
// null setting a field to its zero value. It settles nothing the strict scanner does not (a
// repeated name, an escaped one, invalid text), nor a value of the wrong kind for its field, an
// integer with a fraction or exponent, or a number out of its field's range.
func (c *codec) decode(data []byte, p unsafe.Pointer) bool {
	_, ok := c.decodeWith(data, p, false)
	return ok
}

// decodeWith decodes with a scanner of the pool; strict: as Strict does (an unknown member or a
// null is not settled). It returns the fields seen, one bit each (the first 64).
func (c *codec) decodeWith(data []byte, p unsafe.Pointer, strict bool) (seen uint64, ok bool) {
	s := scanners.Get().(*jsonbody.Scanner)
	seen, ok = c.scan(s, data, p, strict)
	s.Release()
	scanners.Put(s)
	return seen, ok
}

func (c *codec) scan(s *jsonbody.Scanner, data []byte, p unsafe.Pointer, strict bool) (seen uint64, ok bool) {
	s.Reset(data)
	mark, ok := s.Open()
	if !ok {
		return 0, false
	}
	for {
		name, done, ok := s.NextName(mark)
		if !ok {
			return 0, false
		}
		if done {
			return seen, s.End()
		}
		from, to, ok := s.Value()
		if !ok {
			return 0, false
		}
		i := c.index(name[1 : len(name)-1])
		switch {
		case i < 0:
			if strict {
				return 0, false
			}
			continue
		case strict && data[from] == 'n':
			return 0, false
		}
		f := &c.fields[i]
		if !f.set(unsafe.Add(p, f.offset), data[from:to]) {
			return 0, false
		}
		if i < 64 {
			seen |= 1 << i
		}
	}
}

// set stores the JSON value v (valid, as the scanner read it) in the field at at.
func (f *field) set(at unsafe.Pointer, v []byte) bool {
	if v[0] == 'n' { // null: the zero value
		switch f.kind {
		case reflect.String:
			*(*string)(at) = ""
		case reflect.Bool:
			*(*bool)(at) = false
		default:
			return f.setNumber(at, []byte("0"))
		}
		return true
	}
	switch f.kind {
	case reflect.String:
		if v[0] != '"' {
			return false
		}
		if bytes.IndexByte(v, '\\') < 0 {
			*(*string)(at) = string(v[1 : len(v)-1])
			return true
		}
		b, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return false
		}
		*(*string)(at) = unsafe.String(unsafe.SliceData(b), len(b))
		return true
	case reflect.Bool:
		switch v[0] {
		case 't':
			*(*bool)(at) = true
		case 'f':
			*(*bool)(at) = false
		default:
			return false
		}
		return true
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return false
	}
	return f.setNumber(at, v)
}

// setNumber stores the JSON number v in a numeric field.
func (f *field) setNumber(at unsafe.Pointer, v []byte) bool {
	text := unsafe.String(unsafe.SliceData(v), len(v)) // read only here, never kept
	switch f.kind {
	case reflect.Float32, reflect.Float64:
		bits := 64
		if f.kind == reflect.Float32 {
			bits = 32
		}
		x, err := strconv.ParseFloat(text, bits)
		if err != nil {
			return false
		}
		if bits == 32 {
			*(*float32)(at) = float32(x)
		} else {
			*(*float64)(at) = x
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !integer(v) {
			return false
		}
		x, err := strconv.ParseInt(text, 10, intBits(f.kind))
		if err != nil {
			return false
		}
		storeInt(f.kind, at, x)
		return true
	default:
		if !integer(v) || v[0] == '-' {
			return false
		}
		x, err := strconv.ParseUint(text, 10, intBits(f.kind))
		if err != nil {
			return false
		}
		storeUint(f.kind, at, x)
		return true
	}
}

// integer reports whether the JSON number v has neither fraction nor exponent.
func integer(v []byte) bool {
	return !bytes.ContainsAny(v, ".eE")
}

func intBits(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int64, reflect.Uint64:
		return 64
	}
	return strconv.IntSize
}

func storeInt(k reflect.Kind, at unsafe.Pointer, x int64) {
	switch k {
	case reflect.Int8:
		*(*int8)(at) = int8(x)
	case reflect.Int16:
		*(*int16)(at) = int16(x)
	case reflect.Int32:
		*(*int32)(at) = int32(x)
	case reflect.Int64:
		*(*int64)(at) = x
	default:
		*(*int)(at) = int(x)
	}
}

func storeUint(k reflect.Kind, at unsafe.Pointer, x uint64) {
	switch k {
	case reflect.Uint8:
		*(*uint8)(at) = uint8(x)
	case reflect.Uint16:
		*(*uint16)(at) = uint16(x)
	case reflect.Uint32:
		*(*uint32)(at) = uint32(x)
	case reflect.Uint64:
		*(*uint64)(at) = x
	default:
		*(*uint)(at) = uint(x)
	}
}
