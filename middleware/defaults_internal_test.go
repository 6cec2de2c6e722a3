package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

// deadlineRecorder records the read deadlines a layer sets through http.ResponseController.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// pingOfSize is a JSON-RPC ping request body of exactly n bytes.
func pingOfSize(t *testing.T, n int) string {
	t.Helper()
	const head, tail = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`, `"}}`
	if n < len(head)+len(tail) {
		t.Fatalf("a ping cannot be %d bytes", n)
	}
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// largestAccepted reports the largest of the two body sizes around limit that the layer passes
// on (limit when limit passes and limit+1 is refused with 413; -1 otherwise).
func largestAccepted(t *testing.T, layer func(http.Handler) http.Handler, limit int) int {
	t.Helper()
	h := layer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	status := func(n int) int {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(pingOfSize(t, n)))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if status(limit) == http.StatusNoContent && status(limit+1) == http.StatusRequestEntityTooLarge {
		return limit
	}
	return -1
}

// bodyReadBound returns the read deadline Decode sets for a body, measured from just before
// the request, to the second.
func bodyReadBound(t *testing.T, layer func(http.Handler) http.Handler) time.Duration {
	t.Helper()
	h := layer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	r.Header.Set("Content-Type", "application/json")
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	before := time.Now()
	h.ServeHTTP(w, r)
	for _, d := range w.deadlines {
		if !d.IsZero() {
			return d.Sub(before).Truncate(time.Second)
		}
	}
	return 0
}

// guardStatus is the status OriginGuard gives a request with the Host and Origin headers.
func guardStatus(layer func(http.Handler) http.Handler, host, origin string) int {
	h := layer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	r.Host = host
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// Each documented default of the layers' options, observed through the layer.
func TestOptionsDefaults(t *testing.T) {
	var dec DecodeOptions
	decode := Decode(dec)
	var og OriginGuardOptions
	guard := OriginGuard(og)
	var sw SSEWriterOptions
	w := NewSSEWriter(httptest.NewRecorder(), sw)
	defer w.Close()
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "DecodeOptions.MaxRequestBytes", Given: dec.MaxRequestBytes, Got: largestAccepted(t, decode, 4<<20), Doc: 4194304},
		{Option: "DecodeOptions.BodyReadTimeout", Given: dec.BodyReadTimeout, Got: bodyReadBound(t, decode), Doc: 30 * time.Second},
		{Option: "OriginGuardOptions.AllowedHosts (loopback only)", Given: og.AllowedHosts,
			Got: []int{guardStatus(guard, "127.0.0.1:8080", ""), guardStatus(guard, "[::1]:8080", ""), guardStatus(guard, "localhost:8080", ""), guardStatus(guard, "mcp.example.com", "")},
			Doc: []int{http.StatusNoContent, http.StatusNoContent, http.StatusNoContent, http.StatusForbidden}},
		{Option: "OriginGuardOptions.AllowedOrigins (same-origin only)", Given: og.AllowedOrigins,
			Got: []int{guardStatus(guard, "127.0.0.1:8080", "http://127.0.0.1:8080"), guardStatus(guard, "127.0.0.1:8080", "https://app.example")},
			Doc: []int{http.StatusNoContent, http.StatusForbidden}},
		{Option: "SSEWriterOptions.KeepAlive", Given: sw.KeepAlive, Got: w.keepAlive, Doc: 30 * time.Second},
		{Option: "SSEWriterOptions.WriteTimeout", Given: sw.WriteTimeout, Got: w.writeTimeout, Doc: 30 * time.Second},
	})
}
