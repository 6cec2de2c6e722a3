package middleware

import (
	"testing"
	"unsafe"
)

// TestRecordSizes keeps the record every request allocates in the size classes it was fitted
// to, malloc header included (objects past 512 bytes carry 8 bytes more): one field more in
// Exchange moves the record of a request naming a session, with its claim and stream, from the
// 896-byte class to the 1024-byte one.
func TestRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name       string
		size, room uintptr
	}{
		{"exchangeContext (with the request carrying it)", unsafe.Sizeof(exchangeContext{}) + 8, 576},
		{"sessionExchangeContext (with its claim and stream)", unsafe.Sizeof(sessionExchangeContext{}) + 8, 896},
	} {
		if c.size > c.room {
			t.Errorf("%s is %d bytes with its header, more than the %d of its size class", c.name, c.size, c.room)
		}
	}
}
