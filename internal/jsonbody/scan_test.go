package jsonbody

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// scanWhole reports whether the scanner reads data as exactly one value.
func scanWhole(data []byte) bool {
	var s Scanner
	s.Reset(data)
	_, _, ok := s.Value()
	return ok && s.End()
}

var scanValues = []string{
	`{"a":1,"b":[true,false,null],"c":{"d":"e\n\"\\\/\b\f\r\t\u0041\u00e9"},"é漢🙂":-0.5e+10}`,
	` [ 0 , -0 , 1.25 , 2E-3 , 3e7 , "" , { } , [ ] ] `,
	`"plain"`, `"\ud83d\ude42\uDBFF\uDFFF"`, `0`, `-12`, `true`, `null`,
	`{"a":{"a":{"a":1}},"b":{"a":2}}`,
}

// TestScannerAgreesWithJSONText: a text the scanner reads whole is valid JSON, and a valid text
// is read whole unless it uses what the scanner leaves to the full reader; for each value above
// and every one-byte change of it.
func TestScannerAgreesWithJSONText(t *testing.T) {
	specials := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '-', 'e', 'E', '.', '+', 'u', 't', 0x1f, 0x7f, 0x80, 0xc3, 0xff}
	read := 0
	for _, v := range scanValues {
		if !scanWhole([]byte(v)) {
			t.Fatalf("%s: not read whole", v)
		}
		for i := range len(v) {
			variants := []string{v[:i] + v[i+1:]}
			for _, b := range specials {
				variants = append(variants, v[:i]+string(b)+v[i:], v[:i]+string(b)+v[i+1:])
			}
			for _, w := range variants {
				got, valid := scanWhole([]byte(w)), jsontext.Value(w).IsValid()
				if got && !valid {
					t.Fatalf("%q: read whole, but it is not valid JSON", w)
				}
				if valid && !got && !leftToFullReader(w) {
					t.Fatalf("%q: valid JSON the scanner refused", w)
				}
				if got {
					read++
				}
			}
		}
	}
	if read == 0 {
		t.Fatal("no changed text was read whole")
	}
}

// leftToFullReader reports whether w, valid JSON, has what the scanner leaves alone by design:
// a member name with an escape (valid JSON has no repeated name, no lone surrogate, and these
// texts are neither deep nor wide enough for the other limits).
func leftToFullReader(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] != '"' {
			continue
		}
		escaped, j := false, i+1
		for ; j < len(w) && w[j] != '"'; j++ {
			if w[j] == '\\' {
				escaped, j = true, j+1
			}
		}
		k := j + 1
		for k < len(w) && space[w[k]] {
			k++
		}
		if escaped && k < len(w) && w[k] == ':' {
			return true
		}
		i = j
	}
	return false
}

// TestScannerRefuses lists what the scanner must not read whole.
func TestScannerRefuses(t *testing.T) {
	for _, w := range []string{
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1 "b":2}`, `{"a" 1}`,
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[1,]`, `[,1]`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`,
		`+1`, `tru`, `nul`, `falsey`, `"\x"`, `"\u12"`, `"\uD800"`, `"\uDC00\uD800"`, `"\uD800\u0041"`, `"\uD800x"`, "\"\x01\"", "\"\xff\"",
		"\"\xed\xa0\x80\"", `"unterminated`, `{"a":1}}`, `[1]]`, `1 2`, `{"\u0061":1}`,
		strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1),
	} {
		if scanWhole([]byte(w)) {
			t.Errorf("%q: read whole", w)
		}
	}
	if !scanWhole([]byte(strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting))) {
		t.Error("MaxNesting levels: not read whole")
	}
}

func BenchmarkScanner(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var s Scanner
	for b.Loop() {
		s.Reset(data)
		if _, _, ok := s.Value(); !ok || !s.End() {
			b.Fatal("not read")
		}
	}
}
