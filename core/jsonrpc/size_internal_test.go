package jsonrpc

import (
	"testing"
	"unsafe"
)

// TestMessageSize keeps a decoded message in the 208 B size class: one is allocated for every
// request, so its flags share a word.
func TestMessageSize(t *testing.T) {
	if n := unsafe.Sizeof(Message{}); n > 208 {
		t.Errorf("Message needs %d bytes, more than the 208 of its size class", n)
	}
}
