package testutil

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// PingOfSize is a JSON-RPC ping request body of exactly n bytes.
func PingOfSize(t testing.TB, n int) string {
	t.Helper()
	const head, tail = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`, `"}}`
	if n < len(head)+len(tail) {
		t.Fatalf("a ping cannot be %d bytes", n)
	}
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// postStatus sends h a JSON POST of body in process, from and to loopback (so that a Host check
// lets it through).
func postStatus(h http.Handler, w http.ResponseWriter, body string) {
	h.ServeHTTP(w, PostRequest(body, ""))
}

// BodyCap reports limit when h refuses a POST body of limit+1 bytes with 413 and accepts one
// of limit bytes (any other status), and -1 otherwise: the body cap h applies, checked at limit.
func BodyCap(t testing.TB, h http.Handler, limit int) int {
	t.Helper()
	status := func(n int) int {
		w := httptest.NewRecorder()
		postStatus(h, w, PingOfSize(t, n))
		return w.Code
	}
	if status(limit) != http.StatusRequestEntityTooLarge && status(limit+1) == http.StatusRequestEntityTooLarge {
		return limit
	}
	return -1
}

// deadlineRecorder records the read deadlines a handler sets through http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// BodyReadBound returns the first read deadline h sets on the connection while it reads a POST
// body, measured from just before the request and truncated to the second (0 when it sets
// none).
func BodyReadBound(t testing.TB, h http.Handler) time.Duration {
	t.Helper()
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	before := time.Now()
	postStatus(h, w, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	for _, d := range w.deadlines {
		if !d.IsZero() {
			return d.Sub(before).Truncate(time.Second)
		}
	}
	return 0
}
