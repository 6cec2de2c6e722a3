package jsonbody

import (
	"strings"
	"testing"
)

// nestingOKBytewise is the byte-by-byte scan NestingOK replaced: the reference its verdicts
// must match on any input.
func nestingOKBytewise(data []byte) bool {
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

var nestingCases = []string{
	``,
	`{}`,
	`"`,
	`\`,
	`"\`,
	`"\"`,
	`"\\"` + strings.Repeat("[", MaxNesting+1),
	`"\\\"` + strings.Repeat("[", MaxNesting+1),
	`"\\\\"` + strings.Repeat("{", MaxNesting+1),
	`"a\"b\\"` + strings.Repeat("[", MaxNesting+1) + `"`,
	`"x` + strings.Repeat("[", MaxNesting+1),
	strings.Repeat("[", MaxNesting),
	strings.Repeat("[", MaxNesting+1),
	strings.Repeat("[", MaxNesting) + "]" + "[",
	strings.Repeat("[]", 200),
	strings.Repeat("]", 100) + strings.Repeat("[", MaxNesting+50),
	`{"a":"[[[[","b":"\"{{{{"}`,
	`"` + strings.Repeat("x", 14) + `\"` + strings.Repeat("[", MaxNesting+1) + `"`,
	`"` + strings.Repeat("x", 15) + `\"` + strings.Repeat("[", MaxNesting+1) + `"`,
	`"` + strings.Repeat("x", 16) + `"` + strings.Repeat("[", MaxNesting+1),
	`"` + strings.Repeat("x", 15) + `"` + strings.Repeat("{", MaxNesting+1),
	`"` + strings.Repeat("x", 17) + `\\"` + strings.Repeat("[", MaxNesting+1),
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"he\"llo\\"}}}`,
}

func TestNestingOKMatchesBytewiseScan(t *testing.T) {
	for _, c := range nestingCases {
		if got, want := NestingOK([]byte(c)), nestingOKBytewise([]byte(c)); got != want {
			t.Errorf("NestingOK(%q) = %v, the byte-by-byte scan says %v", c, got, want)
		}
	}
	if NestingOK([]byte(strings.Repeat("[", MaxNesting+1))) {
		t.Error("NestingOK accepts MaxNesting+1 levels")
	}
	if !NestingOK([]byte(`"` + strings.Repeat(`\"[`, 100) + `"`)) {
		t.Error("NestingOK counts brackets inside a string with escaped quotes")
	}
}

func FuzzNestingOK(f *testing.F) {
	for _, c := range nestingCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := nestingOKBytewise(data)
		if got := NestingOK(data); got != want {
			t.Fatalf("NestingOK(%q) = %v, the byte-by-byte scan says %v", data, got, want)
		}
		if got := nestingWalk(data); got != want { // the walk alone, which the count mostly spares
			t.Fatalf("nestingWalk(%q) = %v, the byte-by-byte scan says %v", data, got, want)
		}
	})
}

var benchBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)

func BenchmarkNestingOK(b *testing.B) {
	long := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 400) + `"}}}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"call", benchBody}, {"long", long}} {
		b.Run(c.name+"/table", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				NestingOK(c.data)
			}
		})
		b.Run(c.name+"/bytewise", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				nestingOKBytewise(c.data)
			}
		})
	}
}

// nested returns a value nesting depth arrays or objects around 1.
func nested(depth int, open, end string) string {
	return strings.Repeat(open, depth) + "1" + strings.Repeat(end, depth)
}

// TestNestingOK: at most MaxNesting levels pass and one more fails, whichever way the levels
// open, however many shallow openers come before them (past the count that settles a value at
// once), and whatever brackets strings hold.
func TestNestingOK(t *testing.T) {
	// wide holds MaxNesting+10 openers at depth 2 at most: over the count, under the limit.
	wide := "[" + strings.Repeat(`{"a":1},`, MaxNesting+10) + "1]"
	deepObj := strings.Repeat(`{"a":`, MaxNesting+1) + "1" + strings.Repeat("}", MaxNesting+1)
	cases := []struct {
		name string
		data string
		ok   bool
	}{
		{"flat", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{"arrays at the limit", nested(MaxNesting, "[", "]"), true},
		{"arrays past the limit", nested(MaxNesting+1, "[", "]"), false},
		{"objects past the limit", deepObj, false},
		{"mixed past the limit", strings.Repeat(`[{"a":`, (MaxNesting+2)/2) + "1" + strings.Repeat("}]", (MaxNesting+2)/2), false},
		{"many shallow openers", wide, true},
		{"many shallow openers then too deep", wide[:len(wide)-2] + "," + nested(MaxNesting, "[", "]") + "]", false},
		{"brackets in strings", `{"s":"` + strings.Repeat("[{", MaxNesting+1) + `"}`, true},
		{"escaped quote in a string", `{"s":"\"` + strings.Repeat("[", MaxNesting+1) + `"}`, true},
		{"deep after a string with brackets", `["` + strings.Repeat("]", 70) + `",` + nested(MaxNesting, "[", "]") + `]`, false},
	}
	for _, c := range cases {
		if got := NestingOK([]byte(c.data)); got != c.ok {
			t.Errorf("%s: NestingOK = %v, want %v", c.name, got, c.ok)
		}
	}
}
