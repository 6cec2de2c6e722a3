package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

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
	decode := Decode(dec)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	var og OriginGuardOptions
	guard := OriginGuard(og)
	var sw SSEWriterOptions
	w := NewSSEWriter(httptest.NewRecorder(), sw)
	defer w.Close()
	var so SSEOptions
	var layer *sseLayer
	var lw *SSEWriter
	SSE(so)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := ExchangeFrom(r.Context())
		layer, lw = ex.sse, ex.SSE(w)
	})).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "DecodeOptions.MaxRequestBytes", Given: dec.MaxRequestBytes, Got: testutil.BodyCap(t, decode, 4<<20), Doc: 4194304},
		{Option: "DecodeOptions.BodyReadTimeout", Given: dec.BodyReadTimeout, Got: testutil.BodyReadBound(t, decode), Doc: 30 * time.Second},
		{Option: "OriginGuardOptions.AllowedHosts (loopback only)", Given: og.AllowedHosts,
			Got: []int{guardStatus(guard, "127.0.0.1:8080", ""), guardStatus(guard, "[::1]:8080", ""), guardStatus(guard, "localhost:8080", ""), guardStatus(guard, "mcp.example.com", "")},
			Doc: []int{http.StatusNoContent, http.StatusNoContent, http.StatusNoContent, http.StatusForbidden}},
		{Option: "OriginGuardOptions.AllowedOrigins (same-origin only)", Given: og.AllowedOrigins,
			Got: []int{guardStatus(guard, "127.0.0.1:8080", "http://127.0.0.1:8080"), guardStatus(guard, "127.0.0.1:8080", "https://app.example")},
			Doc: []int{http.StatusNoContent, http.StatusForbidden}},
		{Option: "SSEWriterOptions.KeepAlive", Given: sw.KeepAlive, Got: w.cfg.keepAlive, Doc: 30 * time.Second},
		{Option: "SSEWriterOptions.WriteTimeout", Given: sw.WriteTimeout, Got: w.cfg.writeTimeout, Doc: 30 * time.Second},
		{Option: "SSEOptions.KeepAlive", Given: so.KeepAlive, Got: lw.cfg.keepAlive, Doc: 30 * time.Second},
		{Option: "SSEOptions.WriteTimeout", Given: so.WriteTimeout, Got: []time.Duration{lw.cfg.writeTimeout, layer.tail}, Doc: []time.Duration{30 * time.Second, 30 * time.Second}},
	})
}

// TestHeaderKeysCanonical: the layers read request headers by these names straight from the
// map (headerValue), which finds only canonical keys; a name spelled otherwise would never match.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{protocolVersionKey, HeaderSessionID, HeaderMethod, HeaderName, "Content-Type", "Accept", "Origin"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header name %q is read from the map but its canonical form is %q", k, c)
		}
	}
	h := http.Header{}
	h.Set("mcp-method", "tools/call")
	if got := headerValue(h, HeaderMethod); got != "tools/call" {
		t.Errorf("headerValue(Mcp-Method) = %q, want what Header.Set stored", got)
	}
}
