package jsonrpc

import (
	"strings"
	"testing"
)

// TestDecoderDoesNotPinArrays: once it is done with a message, a pooled decoder keeps no
// reference to its bytes, whichever reader read it: a small message cut from a large buffer (a
// reader's line, a batch element) must not keep the buffer alive. The messages with an escaped
// member name are left by the scanner to the token reader.
func TestDecoderDoesNotPinArrays(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":1,"method":"ping","\u0078":0}`
	large := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"p\u0061d":"` + strings.Repeat("x", 3<<20) + `"}}`
	big := make([]byte, 0, len(small)+len(large))
	big = append(append(big, small...), large...)

	cases := []struct {
		name  string
		data  []byte
		owned bool
	}{
		{"small body owned", []byte(small), true},
		{"small slice of a 3 MB array, owned", big[:len(small)], true},
		{"small slice of a 3 MB array", big[:len(small)], false},
		{"large body owned", big[len(small):], true},
		{"small body not owned", []byte(small), false},
		{"small body owned, scanned", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md := new(msgDecoder)
			if _, derr := md.decode(c.data, c.owned); derr != nil {
				t.Fatalf("decode: %v", derr.Err)
			}
			if got := md.buf.Cap(); got > 0 {
				t.Fatalf("the idle decoder holds a %d-byte array", got)
			}
		})
	}
}

// TestBatchDoesNotPinLargeBody: a batch whose elements are a small message and a 3 MB one leaves
// no pooled decoder holding an array.
func TestBatchDoesNotPinLargeBody(t *testing.T) {
	body := `[{"jsonrpc":"2.0","id":2,"method":"ping","params":{"p\u0061d":"` + strings.Repeat("x", 3<<20) + `"}},` +
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u0078":0}]`
	items, derr := decodeBatch([]byte(body))
	if derr != nil || len(items) != 2 {
		t.Fatalf("decodeBatch: %d items, %v", len(items), derr)
	}
	for range 8 {
		md := msgDecoders.Get().(*msgDecoder)
		if got := md.buf.Cap(); got > 0 {
			t.Fatalf("a pooled decoder holds a %d-byte array", got)
		}
		defer msgDecoders.Put(md)
	}
}
