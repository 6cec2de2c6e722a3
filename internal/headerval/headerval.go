// Package headerval holds response header values built once and shared by every response that
// sets them, so that setting a header allocates nothing: the JSON and event-stream media types,
// the other headers of an event stream, and the Content-Length of a body of up to MaxLength
// bytes.
//
// Each value is a slice of capacity one, assigned to the header map as it is
// (h["Content-Type"] = headerval.JSON). Sharing one slice is safe because nothing in net/http or
// in the kit changes a value slice in place: Header.Set and Del replace or drop the slice, and Add
// appends, which copies a slice that is full. Code that writes into a value slice by index
// (h[k][0] = v) must not be used on a header map these values went into.
package headerval

import (
	"strconv"
	"sync"
)

// The shared values of the headers the kit sets.
var (
	// JSON is "application/json".
	JSON = one("application/json")
	// EventStream is "text/event-stream".
	EventStream = one("text/event-stream")
	// NoCache is "no-cache", an event stream's Cache-Control.
	NoCache = one("no-cache")
	// KeepAlive is "keep-alive", an event stream's Connection.
	KeepAlive = one("keep-alive")
	// No is "no", an event stream's X-Accel-Buffering (proxies such as nginx stop buffering).
	No = one("no")
)

// one returns the value as a slice of length and capacity one.
func one(v string) []string { return []string{v} }

// MaxLength is the largest body length whose Content-Length value is built in advance: 2 KiB,
// what net/http's HTTP/1 server buffers of a response before it writes the headers.
const MaxLength = 2 << 10

// lengths holds the decimal text of every n up to MaxLength, in one string: lengths()[n] is n's.
var lengths = sync.OnceValue(func() []string {
	t := make([]string, MaxLength+1)
	var digits []byte
	for n := range t {
		digits = strconv.AppendInt(digits, int64(n), 10)
	}
	all := string(digits) // one allocation for every text
	at := 0
	for n := range t {
		k := len(strconv.Itoa(n))
		t[n] = all[at : at+k]
		at += k
	}
	return t
})

// Length returns the Content-Length value of a body of n bytes: a shared slice when n is at
// most MaxLength, a new one otherwise.
func Length(n int) []string {
	if n >= 0 && n <= MaxLength {
		return lengths()[n : n+1 : n+1]
	}
	return []string{strconv.Itoa(n)}
}
