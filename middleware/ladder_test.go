package middleware

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/internal/sessiontest"
	"github.com/mcpkit/mcpkit/session"
)

const (
	wantMethod405  = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Method not allowed"}}`
	wantAcceptBoth = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Acceptable: Accept header must include application/json and text/event-stream"}}`
	wantAcceptJSON = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Acceptable: Accept header must include application/json"}}`
	wantAcceptSSE  = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Acceptable: Accept header must include text/event-stream"}}`
)

// send makes a request with header pairs and returns the answer.
func send(t *testing.T, url, method, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, http.DefaultClient, req)
}

// MethodAccept answers every 405 and 406 of the endpoint before the body is read, and passes the
// rest untouched.
func TestMethodAccept(t *testing.T) {
	both := "application/json, text/event-stream"
	for _, tc := range []struct {
		name        string
		opts        MethodAcceptOptions
		method      string
		hdr         []string
		status      int
		allow, body string
	}{
		{"PUT stateful", MethodAcceptOptions{}, http.MethodPut, nil, 405, "GET, POST, DELETE", wantMethod405},
		{"PUT stateless", MethodAcceptOptions{Stateless: true}, http.MethodPut, nil, 405, "POST", wantMethod405},
		{"GET stateless", MethodAcceptOptions{Stateless: true}, http.MethodGet, []string{"Accept", "text/event-stream"}, 405, "POST", wantMethod405},
		{"DELETE stateless", MethodAcceptOptions{Stateless: true}, http.MethodDelete, nil, 405, "POST", wantMethod405},
		{"GET modern", MethodAcceptOptions{}, http.MethodGet, []string{"MCP-Protocol-Version", "2026-07-28", "Accept", "text/event-stream"}, 405, "POST", wantMethod405},
		{"GET without event-stream", MethodAcceptOptions{}, http.MethodGet, []string{"Accept", "application/json"}, 406, "", wantAcceptSSE},
		{"GET", MethodAcceptOptions{}, http.MethodGet, []string{"Accept", "text/event-stream"}, 200, "", "ok"},
		{"DELETE", MethodAcceptOptions{}, http.MethodDelete, nil, 200, "", "ok"},
		{"POST json only", MethodAcceptOptions{}, http.MethodPost, []string{"Accept", "application/json"}, 406, "", wantAcceptBoth},
		{"POST both", MethodAcceptOptions{}, http.MethodPost, []string{"Accept", both}, 200, "", "ok"},
		{"POST wildcard", MethodAcceptOptions{}, http.MethodPost, []string{"Accept", "text/html, */*;q=0.1"}, 200, "", "ok"},
		{"JSON mode, json only", MethodAcceptOptions{JSONResponse: true}, http.MethodPost, []string{"Accept", "application/json"}, 200, "", "ok"},
		{"JSON mode, event-stream only", MethodAcceptOptions{JSONResponse: true}, http.MethodPost, []string{"Accept", "text/event-stream"}, 406, "", wantAcceptJSON},
		{"JSON mode, modern by headers", MethodAcceptOptions{JSONResponse: true}, http.MethodPost,
			[]string{"Accept", "application/json", "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, 406, "", wantAcceptBoth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := newServer(t, MethodAccept(tc.opts)(okHandler)).URL
			status, h, body := send(t, url, tc.method, "", tc.hdr...)
			if status != tc.status || h.Get("Allow") != tc.allow || body != tc.body {
				t.Errorf("%d Allow %q %s, want %d Allow %q %s", status, h.Get("Allow"), body, tc.status, tc.allow, tc.body)
			}
		})
	}
}

// In JSON mode, a POST whose lifecycle only its body tells, accepting application/json alone, is
// served on the legacy path and refused with 406 once the era router sends it to the 2026-07-28
// one.
func TestMethodAcceptLeftToTheEraRouter(t *testing.T) {
	modern := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("modern")) })
	h := MethodAccept(MethodAcceptOptions{JSONResponse: true})(Decode(DecodeOptions{})(EraRouter(EraRouterOptions{Modern: modern})(okHandler)))
	url := newServer(t, h).URL
	hdr := []string{"Content-Type", "application/json", "Accept", "application/json", "MCP-Protocol-Version", "2026-07-28"}
	if _, _, body := send(t, url, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, hdr...); body != "ok" {
		t.Errorf("a legacy initialize probing with 2026-07-28: %s", body)
	}
	status, h2, body := send(t, url, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, hdr...)
	wantError(t, status, h2, body, 406, wantAcceptBoth)
}

// ProtocolVersion refuses an empty header on legacy requests: at once on a POST naming a session
// (or any POST when stateless), never on initialize or server/discover; a GET or DELETE only once
// the session layer resolved the session.
func TestProtocolVersion(t *testing.T) {
	const bad = `"message":"Bad Request: Unsupported protocol version: . Supported versions: `
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	store := session.NewMemory(session.MemoryOptions{})
	t.Cleanup(func() { _ = store.Close() })
	live := &session.Entry{ID: "live"}
	if err := store.Add(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	stateful := newServer(t, Decode(DecodeOptions{})(ProtocolVersion(ProtocolVersionOptions{})(
		SessionValidator(SessionValidatorOptions{Sessions: sessiontest.RecordSessions{Store: store}})(okHandler)))).URL
	stateless := newServer(t, Decode(DecodeOptions{})(ProtocolVersion(ProtocolVersionOptions{Stateless: true})(okHandler))).URL
	empty := []string{"Content-Type", "application/json", "MCP-Protocol-Version", ""}
	for _, tc := range []struct {
		name, url, method, body string
		hdr                     []string
		status                  int
		want                    string
	}{
		{"POST with session", stateful, http.MethodPost, ping, append(empty, "Mcp-Session-Id", "live"), 400, bad},
		{"POST, unknown session: version first", stateful, http.MethodPost, ping, append(empty, "Mcp-Session-Id", "gone"), 400, bad},
		{"POST without session: missing first", stateful, http.MethodPost, ping, empty, 400, "Missing session ID"},
		{"initialize", stateful, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, empty, 200, "ok"},
		{"stateless POST", stateless, http.MethodPost, ping, empty, 400, bad},
		{"stateless discover", stateless, http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, empty, 200, "ok"},
		{"stateless, good header", stateless, http.MethodPost, ping, []string{"Content-Type", "application/json", "MCP-Protocol-Version", "2025-06-18"}, 200, "ok"},
		{"GET, unknown session: lookup first", stateful, http.MethodGet, "", []string{"MCP-Protocol-Version", "", "Mcp-Session-Id", "gone"}, 404, "Session not found"},
		{"GET", stateful, http.MethodGet, "", []string{"MCP-Protocol-Version", "", "Mcp-Session-Id", "live"}, 400, bad},
		{"DELETE", stateful, http.MethodDelete, "", []string{"MCP-Protocol-Version", "", "Mcp-Session-Id", "live"}, 400, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := send(t, tc.url, tc.method, tc.body, tc.hdr...)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d with %s", status, body, tc.status, tc.want)
			}
		})
	}
}
