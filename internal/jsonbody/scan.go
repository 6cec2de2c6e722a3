package jsonbody

import (
	"bytes"
	"unicode/utf8"
)

// Scanner reads one JSON text in a single pass, strictly, for a decoder that picks a few members
// out of it: it validates everything it steps over (strings with their escapes and UTF-8,
// numbers, literals, nesting, repeated names) and reports where the values it was asked for
// sit, without copying them.
//
// Its answer is one-sided: ok means the text read so far is valid and is exactly what a strict
// reader (jsontext with its defaults) accepts; false means only "not settled here", because the
// text is invalid or uses something the scanner leaves to the full reader: a name with an
// escape, an object with more than MaxScanNames members, nesting past MaxNesting. The caller
// then reads the text again with the full reader, which words the error. So what a sender sees
// never depends on this code.
//
// The zero value is ready for Reset. A Scanner is not safe for concurrent use.
type Scanner struct {
	data  []byte
	pos   int
	depth int
	// names are the names of the objects open, outermost first (each as the offsets of its
	// text, quotes left out); an object's names start at the mark Open returned for it.
	names []nameAt
	// unique: the caller vouches that no object repeats a name (ResetUnique).
	unique bool
}

type nameAt struct{ from, to int }

// MaxScanNames is the most members an object may have for the scanner to check its names for
// repeats (one by one against those before); a larger object is left to the full reader.
const MaxScanNames = 64

// Reset starts reading data; the Scanner keeps it until the next Reset.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.depth, s.unique = data, 0, 0, false
	s.names = s.names[:0]
}

// ResetUnique is Reset for a text read strictly before (a value cut from a message the decoder
// accepted, or the kit's own encoding): names are not checked for repeats, and an object may
// have any number of members.
func (s *Scanner) ResetUnique(data []byte) {
	s.Reset(data)
	s.unique = true
}

// Release drops the Scanner's reference to the text it read.
func (s *Scanner) Release() { s.data = nil }

// Pos is the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Peek skips whitespace and returns the next byte, 0 at the end of the text.
func (s *Scanner) Peek() byte {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// End skips whitespace and reports whether the text ends there.
func (s *Scanner) End() bool {
	s.skipSpace()
	return s.pos == len(s.data)
}

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) && space[s.data[s.pos]] {
		s.pos++
	}
}

// Open reads the '{' of an object and returns its mark for NextName.
func (s *Scanner) Open() (mark int, ok bool) {
	if s.Peek() != '{' || s.depth == MaxNesting {
		return 0, false
	}
	s.pos++
	s.depth++
	return len(s.names), true
}

// NextName reads what follows in the object opened at mark: the ',' and the name of its next
// member with its ':' (name is the quoted text), or its '}' (done).
func (s *Scanner) NextName(mark int) (name []byte, done, ok bool) {
	first := len(s.names) == mark
	switch s.Peek() {
	case '}':
		s.pos++
		s.depth--
		s.names = s.names[:mark]
		return nil, true, true
	case ',':
		if first {
			return nil, false, false
		}
		s.pos++
		if s.Peek() != '"' {
			return nil, false, false
		}
	case '"':
		if !first {
			return nil, false, false
		}
	default:
		return nil, false, false
	}
	from := s.pos
	end, escaped, ok := s.str(from)
	if !ok || escaped {
		return nil, false, false
	}
	if !s.newName(mark, from+1, end-1) {
		return nil, false, false
	}
	s.pos = end
	if s.Peek() != ':' {
		return nil, false, false
	}
	s.pos++
	return s.data[from:end], false, true
}

// newName records the name at data[from:to] among those of the object opened at mark; false when
// the object has it already, or has MaxScanNames members (neither is checked after ResetUnique).
func (s *Scanner) newName(mark, from, to int) bool {
	if !s.unique {
		if len(s.names)-mark == MaxScanNames {
			return false
		}
		text := s.data[from:to]
		for _, n := range s.names[mark:] {
			if string(s.data[n.from:n.to]) == string(text) {
				return false
			}
		}
	}
	s.names = append(s.names, nameAt{from, to})
	return true
}

// Value reads one value and returns where it sits: data[from:to].
func (s *Scanner) Value() (from, to int, ok bool) {
	s.skipSpace()
	from = s.pos
	if !s.value() {
		return 0, 0, false
	}
	return from, s.pos, true
}

func (s *Scanner) value() bool {
	if s.pos == len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; c {
	case '"':
		end, _, ok := s.str(s.pos)
		s.pos = end
		return ok
	case '{':
		mark, ok := s.Open()
		for ok {
			var done bool
			if _, done, ok = s.NextName(mark); done || !ok {
				break
			}
			s.skipSpace()
			ok = s.value()
		}
		return ok
	case '[':
		ok := s.OpenArray()
		for first := true; ok; first = false {
			var done bool
			if done, ok = s.NextItem(first); done || !ok {
				break
			}
			ok = s.value()
		}
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

// OpenArray reads the '[' of an array, whose items NextItem steps to.
func (s *Scanner) OpenArray() bool {
	if s.Peek() != '[' || s.depth == MaxNesting {
		return false
	}
	s.pos++
	s.depth++
	return true
}

// NextItem reads what follows in an array (first: right after its '['): the ',' before its
// next item, which is then for the caller to read, or its ']' (done).
func (s *Scanner) NextItem(first bool) (done, ok bool) {
	switch s.Peek() {
	case ']':
		s.pos++
		s.depth--
		return true, true
	case ',':
		if first {
			return false, false
		}
		s.pos++
		s.skipSpace()
		return false, true
	}
	return false, first
}

func (s *Scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return false
	}
	s.pos += len(lit)
	return true
}

// number reads a number as RFC 8259 spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// What follows it is for the caller to check (a delimiter, whitespace or the end).
func (s *Scanner) number() bool {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i == len(d):
		return false
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return false
		}
		i = j
	}
	s.pos = i
	return true
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// str reads the string whose opening quote is at data[from] and returns the offset just past
// its closing quote, and whether it has an escape.
func (s *Scanner) str(from int) (end int, escaped, ok bool) {
	d := s.data
	for i := from + 1; i < len(d); {
		c := d[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			n := escapeLen(d[i+1:])
			if n == 0 {
				return 0, false, false
			}
			i, escaped = i+1+n, true
		case c < utf8.RuneSelf: // a control character
			return 0, false, false
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			i += size
		}
	}
	return 0, false, false
}

// escapeLen returns the length of the escape that rest starts with (after its backslash), 0 for
// an invalid one; an escaped surrogate is valid only as the first half of a pair followed by the
// second.
func escapeLen(rest []byte) int {
	if len(rest) == 0 {
		return 0
	}
	switch rest[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(rest) < 5 {
			return 0
		}
		r := hex4(rest[1:5])
		if r < 0 {
			return 0
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF: // the first half of a pair: the second must follow
			if len(rest) < 11 || rest[5] != '\\' || rest[6] != 'u' {
				return 0
			}
			if lo := hex4(rest[7:11]); lo < 0xDC00 || lo > 0xDFFF {
				return 0
			}
			return 11
		case r >= 0xDC00 && r <= 0xDFFF: // a second half alone
			return 0
		}
		return 5
	}
	return 0
}

// hex4 returns the value of four hex digits, -1 when one is not.
func hex4(h []byte) int {
	r := 0
	for _, c := range h {
		v := hexValue(c)
		if v < 0 {
			return -1
		}
		r = r<<4 | v
	}
	return r
}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// space marks JSON's whitespace; plain marks the bytes a string holds as they are (printable
// ASCII but the quote and the backslash).
var space, plain = func() (sp, pl [256]bool) {
	for _, c := range []byte{' ', '\t', '\n', '\r'} {
		sp[c] = true
	}
	for c := 0x20; c < utf8.RuneSelf; c++ {
		pl[c] = c != '"' && c != '\\'
	}
	return sp, pl
}()
