package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/testutil"
)

const appOrigin = "http://127.0.0.1:5173"

// corsServer serves the CORS layer in front of the Origin guard (as an endpoint stacks them) and
// a handler that counts what reached it.
func corsServer(t *testing.T, opts CORSOptions) (*httptest.Server, *int) {
	t.Helper()
	reached := new(int)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*reached++
		w.Header().Set(HeaderSessionID, "s1")
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(CORS(opts)(OriginGuard(opts.Origins)(next)))
	t.Cleanup(srv.Close)
	return srv, reached
}

func sendCORS(t *testing.T, srv *httptest.Server, method string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestCORSPreflight(t *testing.T) {
	srv, reached := corsServer(t, CORSOptions{Origins: OriginGuardOptions{AllowedOrigins: []string{appOrigin}}, AllowHeaders: []string{"X-Tenant"}})
	mcpHeaders := "content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name, mcp-param-region, authorization, dpop, traceparent, x-tenant"
	for _, tc := range []struct {
		name, origin, method, headers string
		status                        int
	}{
		{"allowed", appOrigin, "POST", mcpHeaders, http.StatusNoContent},
		{"allowed origin in other case", "HTTP://127.0.0.1:5173", "DELETE", "", http.StatusNoContent},
		{"GET stream", appOrigin, "GET", "last-event-id, mcp-session-id", http.StatusNoContent},
		{"other origin", "http://127.0.0.1:9999", "POST", "content-type", http.StatusForbidden},
		{"opaque origin", "null", "POST", "content-type", http.StatusForbidden},
		{"header not allowed", appOrigin, "POST", "content-type, x-secret", http.StatusForbidden},
		{"method not served", appOrigin, "PUT", "", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := sendCORS(t, srv, http.MethodOptions, map[string]string{
				"Origin": tc.origin, "Access-Control-Request-Method": tc.method, "Access-Control-Request-Headers": tc.headers,
			})
			h := res.Header
			if res.StatusCode != tc.status || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
				t.Fatalf("status %d, Vary %q; want %d", res.StatusCode, h.Values("Vary"), tc.status)
			}
			if tc.status != http.StatusNoContent {
				if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Methods") != "" {
					t.Fatalf("a refused preflight carries CORS headers: %v", h)
				}
				return
			}
			if h.Get("Access-Control-Allow-Origin") != tc.origin || h.Get("Access-Control-Allow-Methods") != "GET, POST, DELETE" ||
				h.Get("Access-Control-Allow-Headers") != tc.headers || h.Get("Access-Control-Max-Age") != "600" ||
				h.Get("Access-Control-Allow-Credentials") != "" {
				t.Fatalf("preflight answer %v", h)
			}
		})
	}
	if *reached != 0 {
		t.Fatalf("%d preflights reached the endpoint", *reached)
	}
}

func TestCORSActualRequests(t *testing.T) {
	srv, reached := corsServer(t, CORSOptions{Origins: OriginGuardOptions{AllowedOrigins: []string{appOrigin}}, ExposeHeaders: []string{"X-Request-Id"}})
	res := sendCORS(t, srv, http.MethodPost, map[string]string{"Origin": appOrigin})
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != appOrigin ||
		res.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce, X-Request-Id" {
		t.Fatalf("allowed origin: %d %v", res.StatusCode, res.Header)
	}
	// Another origin gets no CORS headers, and the guard behind refuses it.
	res = sendCORS(t, srv, http.MethodPost, map[string]string{"Origin": "http://127.0.0.1:9999"})
	if res.StatusCode != http.StatusForbidden || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin: %d %v", res.StatusCode, res.Header)
	}
	// No Origin (not a browser), and an OPTIONS that is no preflight, go to the endpoint unchanged.
	res = sendCORS(t, srv, http.MethodPost, nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Vary") != "" {
		t.Fatalf("no origin: %d %v", res.StatusCode, res.Header)
	}
	sendCORS(t, srv, http.MethodOptions, map[string]string{"Origin": appOrigin})
	if *reached != 3 {
		t.Fatalf("%d requests reached the endpoint, want 3", *reached)
	}
	// Two Origin headers are refused, as the guard does.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL, nil)
	req.Header["Origin"] = []string{appOrigin, "http://evil.example"}
	req.Header.Set("Access-Control-Request-Method", "POST")
	two, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	two.Body.Close()
	if two.StatusCode != http.StatusForbidden {
		t.Fatalf("two origins: %d", two.StatusCode)
	}
}

// With the guard disabled every origin is allowed, as the guard lets every origin through.
func TestCORSFollowsADisabledGuard(t *testing.T) {
	srv, _ := corsServer(t, CORSOptions{Origins: OriginGuardOptions{Disabled: true}, MaxAge: -1})
	res := sendCORS(t, srv, http.MethodOptions, map[string]string{"Origin": "https://anywhere.example", "Access-Control-Request-Method": "POST"})
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://anywhere.example" || res.Header.Get("Access-Control-Max-Age") != "" {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
}

func TestCORSRefusesInvalidOptions(t *testing.T) {
	for want, opts := range map[string]CORSOptions{
		"middleware: CORSOptions.Origins.AllowedOrigins[0]": {Origins: OriginGuardOptions{AllowedOrigins: []string{"app.example"}}},
		"middleware: CORSOptions.Origins.AllowedHosts[0]":   {Origins: OriginGuardOptions{AllowedHosts: []string{"https://x"}}},
		"middleware: CORSOptions.AllowHeaders[1]":           {AllowHeaders: []string{"X-Ok", "X Bad"}},
		"middleware: CORSOptions.ExposeHeaders[0]":          {ExposeHeaders: []string{""}},
		"middleware: CORSOptions.MaxAge":                    {MaxAge: 500 * time.Millisecond},
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, func() { CORS(opts) }) })
	}
}

func TestCORSDefaults(t *testing.T) {
	var opts CORSOptions
	srv, _ := corsServer(t, opts)
	preflight := func(origin, headers string) *http.Response {
		return sendCORS(t, srv, http.MethodOptions, map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": headers})
	}
	same := srv.URL // same-origin with the Host the client sends
	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "CORSOptions.Origins (same-origin only)", Given: opts.Origins.AllowedOrigins,
			Got: []int{preflight(same, "").StatusCode, preflight(appOrigin, "").StatusCode}, Doc: []int{http.StatusNoContent, http.StatusForbidden}},
		{Option: "CORSOptions.AllowHeaders (the kit's only)", Given: opts.AllowHeaders,
			Got: []int{preflight(same, "mcp-session-id").StatusCode, preflight(same, "x-tenant").StatusCode}, Doc: []int{http.StatusNoContent, http.StatusForbidden}},
		{Option: "CORSOptions.ExposeHeaders (the kit's only)", Given: opts.ExposeHeaders,
			Got: sendCORS(t, srv, http.MethodPost, map[string]string{"Origin": same}).Header.Get("Access-Control-Expose-Headers"), Doc: "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce"},
		{Option: "CORSOptions.MaxAge", Given: opts.MaxAge, Got: preflight(same, "").Header.Get("Access-Control-Max-Age"), Doc: "600"},
	})
	if DefaultCORSMaxAge != 10*time.Minute {
		t.Fatal("DefaultCORSMaxAge")
	}
}
