package jsonrpc

import (
	"strings"
	"testing"
)

// TestDecoderDoesNotPinLargeArrays: once it is done with a message, a decoder keeps a reference to
// the bytes only when they are a small body of their own; a small message cut from a large buffer
// (a reader's line, a batch element) and any message it does not own are let go. The messages
// have an escaped member name, which the scanner leaves to the token reader; a message the
// scanner reads leaves nothing behind.
func TestDecoderDoesNotPinLargeArrays(t *testing.T) {
	small := `{"jsonrpc":"2.0","id":1,"method":"ping","\u0078":0}`
	large := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"p\u0061d":"` + strings.Repeat("x", 3<<20) + `"}}`
	big := make([]byte, 0, len(small)+len(large))
	big = append(append(big, small...), large...)

	cases := []struct {
		name  string
		data  []byte
		owned bool
		kept  bool
	}{
		{"small body owned", []byte(small), true, true},
		{"small slice of a 3 MB array, owned", big[:len(small)], true, false},
		{"small slice of a 3 MB array", big[:len(small)], false, false},
		{"large body owned", big[len(small):], true, false},
		{"small body not owned", []byte(small), false, false},
		{"small body owned, scanned", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md := new(msgDecoder)
			if _, derr := md.decode(c.data, c.owned); derr != nil {
				t.Fatalf("decode: %v", derr.Err)
			}
			if got := md.buf.Cap(); got > pinnedMax {
				t.Fatalf("the idle decoder holds a %d-byte array, more than pinnedMax (%d)", got, pinnedMax)
			}
			if kept := md.buf.Cap() > 0; kept != c.kept {
				t.Fatalf("the idle decoder keeps the message: %v, want %v", kept, c.kept)
			}
		})
	}
}

// TestBatchDoesNotPinLargeBody: a batch whose elements are a small message and a 3 MB one leaves
// no pooled decoder holding more than pinnedMax.
func TestBatchDoesNotPinLargeBody(t *testing.T) {
	body := `[{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 3<<20) + `"}},` +
		`{"jsonrpc":"2.0","id":1,"method":"ping"}]`
	items, derr := decodeBatch([]byte(body))
	if derr != nil || len(items) != 2 {
		t.Fatalf("decodeBatch: %d items, %v", len(items), derr)
	}
	for range 8 {
		md := msgDecoders.Get().(*msgDecoder)
		if got := md.buf.Cap(); got > pinnedMax {
			t.Fatalf("a pooled decoder holds a %d-byte array, more than pinnedMax (%d)", got, pinnedMax)
		}
		defer msgDecoders.Put(md)
	}
}
