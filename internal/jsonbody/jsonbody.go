// Package jsonbody sniffs JSON bodies without decoding them: whether one is valid and nested at
// most MaxNesting deep, and whether it is an object, an array or a scalar. Core's decoder and the
// HTTP layers share it.
package jsonbody

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

var openBrace, openBracket = []byte{'{'}, []byte{'['}

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
//
// Every level of nesting opens with a '{' or a '[': data with at most MaxNesting of them
// (counted fast, strings included) cannot nest deeper, which settles the usual message without
// walking it (nestingWalk).
func NestingOK(data []byte) bool {
	if openers := bytes.Count(data, openBrace); openers <= MaxNesting {
		if openers+bytes.Count(data, openBracket) <= MaxNesting {
			return true
		}
	}
	return nestingWalk(data)
}

// nestingWalk is NestingOK's walk of the data. Outside strings it steps over the bytes that
// cannot change the depth through a 256-entry table. A string's first shortString bytes are read the same way, up to its quote; a string
// that is longer or has a backslash there is searched from its start for quotes
// (bytes.IndexByte), counting the backslashes right before each, an odd run escaping it. That
// gives the verdict of a byte-by-byte scan that skips the byte after each backslash, for any
// input, valid JSON or not.
func nestingWalk(data []byte) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		for structural[data[i]] == 0 {
			if i++; i == len(data) {
				return true
			}
		}
		switch data[i] {
		case '"':
			// The first bytes of a string byte by byte (most strings of a message are short),
			// the rest of a long one through stringEnd.
			j, end := i+1, min(i+1+shortString, len(data))
			for j < end && inString[data[j]] == 0 {
				j++
			}
			if j < end && data[j] == '"' {
				i = j
				continue
			}
			// A backslash, or a longer string: stringEnd from the string's start.
			e, ok := stringEnd(data, i+1)
			if !ok {
				return true // an unterminated string: the parse that follows refuses it
			}
			i = e
		case '{', '[':
			if depth++; depth > MaxNesting {
				return false
			}
		default: // '}', ']'
			depth--
		}
	}
	return true
}

// shortString is how many bytes of a string NestingOK reads one by one before it searches.
const shortString = 16

// inString marks the bytes that end or escape within a string.
var inString = [256]byte{'"': 1, '\\': 1}

// structural marks the bytes NestingOK acts on outside strings.
var structural = [256]byte{'"': 1, '{': 1, '[': 1, '}': 1, ']': 1}

// stringEnd returns the index of the quote that closes the string whose contents start at
// data[from], and false when no quote closes it.
func stringEnd(data []byte, from int) (int, bool) {
	for {
		q := bytes.IndexByte(data[from:], '"')
		if q < 0 {
			return 0, false
		}
		q += from
		k := q
		for k > from && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q, true
		}
		from = q + 1 // an escaped quote: the string goes on
	}
}
