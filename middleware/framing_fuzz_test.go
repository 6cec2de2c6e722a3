package middleware

import "testing"

// FuzzFramingParser: the framing guard's verdict on a byte stream must not depend on how the
// reads cut it, and no input may panic it.
func FuzzFramingParser(f *testing.F) {
	for _, s := range []string{
		"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\nPOST / HTTP/1.1\r\ncontent-length:3\r\ntransfer-encoding: chunked\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	} {
		f.Add([]byte(s), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var whole framingParser
		want := whole.feed(data)
		at := 0
		if len(data) > 0 {
			at = int(cut) % (len(data) + 1)
		}
		var split framingParser
		got := split.feed(data[:at])
		got = split.feed(data[at:]) || got
		if got != want {
			t.Fatalf("%q: verdict %v whole, %v when cut at %d", data, want, got, at)
		}
	})
}
