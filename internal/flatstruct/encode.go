package flatstruct

import (
	"reflect"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// append encodes the struct at p as the json package does: the fields in declaration order,
// omitempty and omitzero honoured, strings in their shortest escaped form. A string that is not
// valid UTF-8 (an error there) is not settled.
func (c *codec) append(dst []byte, p unsafe.Pointer) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '{')
	first := true
	for i := range c.fields {
		f := &c.fields[i]
		at := unsafe.Add(p, f.offset)
		if f.omitted(at) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.member...)
		var ok bool
		if dst, ok = f.appendValue(dst, at); !ok {
			return dst[:start], false
		}
	}
	return append(dst, '}'), true
}

// omitted reports whether the field at at is left out of the encoding.
func (f *field) omitted(at unsafe.Pointer) bool {
	if !f.omitEmpty && !f.omitZero {
		return false
	}
	switch f.kind {
	case reflect.String:
		return *(*string)(at) == "" // both options omit the empty string
	case reflect.Bool:
		return f.omitZero && !*(*bool)(at)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return f.omitZero && loadInt(f.kind, at) == 0
	default: // the unsigned integers: the codec encodes no floats
		return f.omitZero && loadUint(f.kind, at) == 0
	}
}

func (f *field) appendValue(dst []byte, at unsafe.Pointer) ([]byte, bool) {
	switch f.kind {
	case reflect.String:
		return appendString(dst, *(*string)(at))
	case reflect.Bool:
		if *(*bool)(at) {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, loadInt(f.kind, at), 10), true
	default:
		return strconv.AppendUint(dst, loadUint(f.kind, at), 10), true
	}
}

func loadInt(k reflect.Kind, at unsafe.Pointer) int64 {
	switch k {
	case reflect.Int8:
		return int64(*(*int8)(at))
	case reflect.Int16:
		return int64(*(*int16)(at))
	case reflect.Int32:
		return int64(*(*int32)(at))
	case reflect.Int64:
		return *(*int64)(at)
	default:
		return int64(*(*int)(at))
	}
}

func loadUint(k reflect.Kind, at unsafe.Pointer) uint64 {
	switch k {
	case reflect.Uint8:
		return uint64(*(*uint8)(at))
	case reflect.Uint16:
		return uint64(*(*uint16)(at))
	case reflect.Uint32:
		return uint64(*(*uint32)(at))
	case reflect.Uint64:
		return *(*uint64)(at)
	default:
		return uint64(*(*uint)(at))
	}
}

// appendString quotes s as the json package does by default (RFC 8785's shortest form: only
// the quote, the backslash and the control characters are escaped; <, >, & and U+2028/9 are
// not). It does not settle a string that is not valid UTF-8.
func appendString(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')
	from := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return dst, false
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[from:i]...)
		dst = appendEscape(dst, c)
		i++
		from = i
	}
	dst = append(dst, s[from:]...)
	return append(dst, '"'), true
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
