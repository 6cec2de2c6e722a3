package middleware

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// eraServer serves Decode -> EraRouter, with handlers that answer "modern" or "legacy".
func eraServer(t *testing.T) string {
	t.Helper()
	modern := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "modern") })
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "legacy") })
	return newServer(t, Decode(DecodeOptions{})(EraRouter(EraRouterOptions{Modern: modern})(legacy))).URL
}

const (
	claimMeta    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	bodyList     = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	bodyClaim    = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + claimMeta + `}}`
	eraInit      = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	eraInitClaim = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"},` + claimMeta + `}}`
)

// The router decides by the header first, then by the shape of the request (§3.2).
func TestEraRouterRoutes(t *testing.T) {
	url := eraServer(t)
	for _, tc := range []struct {
		name, method, body string
		hdr                []string
		want               string
	}{
		{"no header", "POST", bodyList, nil, "legacy"},
		{"empty header", "POST", bodyList, []string{HeaderProtocolVersion, ""}, "legacy"},
		{"handshake version", "POST", bodyList, []string{HeaderProtocolVersion, "2025-11-25"}, "legacy"},
		{"oldest handshake version", "POST", bodyList, []string{HeaderProtocolVersion, "2024-11-05"}, "legacy"},
		{"unknown version", "POST", bodyList, []string{HeaderProtocolVersion, "1900-01-01"}, "modern"},
		{"unknown version with a session", "POST", bodyList, []string{HeaderProtocolVersion, "1900-01-01", HeaderSessionID, "s"}, "legacy"},
		{"unknown version with the claim", "POST", bodyClaim, []string{HeaderProtocolVersion, "2099-01-01"}, "modern"},
		{"modern", "POST", bodyClaim, []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
		{"modern without the claim", "POST", bodyList, []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
		{"modern with a session", "POST", bodyList, []string{HeaderProtocolVersion, "2026-07-28", HeaderSessionID, "s"}, "legacy"},
		{"initialize without the claim", "POST", eraInit, []string{HeaderProtocolVersion, "2026-07-28"}, "legacy"},
		{"initialize with the claim", "POST", eraInitClaim, []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
		{"initialize with a session", "POST", eraInit, []string{HeaderProtocolVersion, "2026-07-28", HeaderSessionID, "s"}, "legacy"},
		{"progress token only", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, nil, "legacy"},
		{"null version claims nothing", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}}`, nil, "legacy"},
		{"GET", "GET", "", nil, "legacy"},
		{"GET modern", "GET", "", []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
		{"GET modern with a session", "GET", "", []string{HeaderProtocolVersion, "2026-07-28", HeaderSessionID, "s"}, "legacy"},
		{"GET unknown with a session", "GET", "", []string{HeaderProtocolVersion, "1900-01-01", HeaderSessionID, "s"}, "legacy"},
		{"DELETE modern", "DELETE", "", []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
		{"DELETE handshake", "DELETE", "", []string{HeaderProtocolVersion, "2025-06-18", HeaderSessionID, "s"}, "legacy"},
		{"PUT modern", "PUT", "", []string{HeaderProtocolVersion, "2026-07-28"}, "modern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header[http.CanonicalHeaderKey(tc.hdr[i])] = []string{tc.hdr[i+1]}
			}
			// RoutesModern tells the same before the body is read (for other methods than POST)
			// and after it (for POST, through the handler).
			if tc.method != http.MethodPost {
				if got := RoutesModern(req); got != (tc.want == "modern") {
					t.Errorf("RoutesModern = %v, want %v", got, tc.want == "modern")
				}
			}
			status, _, got := do(t, http.DefaultClient, req)
			if status != http.StatusOK || got != tc.want {
				t.Fatalf("%d %q, want %q", status, got, tc.want)
			}
		})
	}
}

// The guard in front of the legacy handler refuses a body that carries the 2026-07-28 envelope
// (§3.3 rows 6 and 7).
func TestEraRouterLegacyGuard(t *testing.T) {
	url := eraServer(t)
	const (
		headerMismatch = `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header is missing or legacy while the body carries the modern _meta envelope"}}`
		locked         = `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: the session already negotiated the legacy lifecycle via ` + "`initialize`" + `"}}`
	)
	for _, tc := range []struct {
		name string
		body string
		hdr  []string
		want string
	}{
		{"no header", bodyClaim, nil, headerMismatch},
		{"handshake header", bodyClaim, []string{HeaderProtocolVersion, "2025-11-25"}, headerMismatch},
		{"handshake header with a session", bodyClaim, []string{HeaderProtocolVersion, "2025-06-18", HeaderSessionID, "s"}, headerMismatch},
		{"partial claim", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, headerMismatch},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized","params":{` + claimMeta + `}}`, nil,
			strings.Replace(headerMismatch, `"id":1`, `"id":null`, 1)},
		{"modern header with a session", bodyClaim, []string{HeaderProtocolVersion, "2026-07-28", HeaderSessionID, "s"}, locked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			status, h, body := do(t, http.DefaultClient, req)
			wantError(t, status, h, body, http.StatusBadRequest, tc.want)
		})
	}
}

// The headers are read once per request: what MethodAccept read of the lifecycle is what the era
// router routes by, even when a layer between them changes the headers.
func TestEraRouterReadsTheLifecycleMethodAcceptRecorded(t *testing.T) {
	modern := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "modern") })
	legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "legacy") })
	dropVersion := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(HeaderProtocolVersion)
			next.ServeHTTP(w, r)
		})
	}
	router := Decode(DecodeOptions{})(EraRouter(EraRouterOptions{Modern: modern})(legacy))
	for _, tc := range []struct {
		name string
		h    http.Handler
		want string
	}{
		{"recorded by MethodAccept", MethodAccept(MethodAcceptOptions{})(dropVersion(router)), "modern"},
		{"read by the router", dropVersion(router), "legacy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := newServer(t, tc.h).URL
			_, _, got := send(t, url, http.MethodPost, bodyList, "Content-Type", "application/json",
				"Accept", "application/json, text/event-stream", HeaderProtocolVersion, "2026-07-28")
			if got != tc.want {
				t.Errorf("routed %q, want %q", got, tc.want)
			}
		})
	}
}
