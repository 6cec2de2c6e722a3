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
		if got, want := NestingOK(data), nestingOKBytewise(data); got != want {
			t.Fatalf("NestingOK(%q) = %v, the byte-by-byte scan says %v", data, got, want)
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
