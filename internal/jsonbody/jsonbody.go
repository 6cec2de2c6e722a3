// Package jsonbody sniffs JSON bodies without decoding them: whether one is valid and nested at
// most MaxNesting deep, and whether it is an object, an array or a scalar. Core's decoder and the
// HTTP layers share it.
package jsonbody

import "github.com/go-json-experiment/json/jsontext"

// MaxNesting is the deepest JSON nesting a message may have; deeper input is a parse error.
const MaxNesting = 64

// Valid verifies that data is one syntactically valid JSON value nested at most MaxNesting
// deep. It does not allocate.
func Valid(data []byte) bool {
	return NestingOK(data) && jsontext.Value(data).IsValid()
}

// Kind of a top-level JSON body.
const (
	Invalid = iota // not valid JSON, or nested too deep
	Object
	Array
	Other // a scalar
)

// StartsObject reports whether the first byte of data that is not JSON whitespace opens an
// object: a cheap check that does not validate the rest (DecodeMessage does).
func StartsObject(data []byte) bool { return FirstByte(data) == '{' }

// Kind classifies data: invalid, object, array or scalar.
func Kind(data []byte) int {
	if !Valid(data) {
		return Invalid
	}
	switch FirstByte(data) {
	case '{':
		return Object
	case '[':
		return Array
	}
	return Other
}

// FirstByte returns the first byte of data that is not JSON whitespace (0 when there is none).
func FirstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// NestingOK reports whether data nests objects and arrays at most MaxNesting deep. It does not
// check the syntax: invalid JSON is caught by the parse that follows.
func NestingOK(data []byte) bool {
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > MaxNesting {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}
